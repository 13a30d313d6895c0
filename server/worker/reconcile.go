package worker

import (
	"context"
	"log/slog"
	"time"

	"gateway/store"
)

// ReconcileConfig configures NewReconciler. Zero fields take the documented defaults.
type ReconcileConfig struct {
	// Interval is the time between passes; the first pass is at Start. Default 30 s.
	Interval time.Duration
	// MaxAge is how long a parked report for a message never recorded is kept. Default 7 days.
	MaxAge time.Duration
	// OrphanAfter is the age after which a send still pending (its process died between the
	// platform call and the recording) is marked outcome_unknown. Default 5 minutes
	// (store.AbandonAfter), well beyond any platform timeout.
	OrphanAfter time.Duration
	// BatchSize is the most platform ids applied, or parked rows deleted, per statement.
	// Default 500.
	BatchSize int
	// Clock is the time; nil means time.Now.
	Clock func() time.Time
	// Logger receives the service's logs. Nil means slog.Default().
	Logger *slog.Logger
	// OnPass, when set, receives the figures of every pass (the hook for /metrics counters).
	OnPass func(ReconcileCounts)
}

// Defaults of ReconcileConfig.
const (
	DefaultReconcileInterval = 30 * time.Second
	DefaultReconcileMaxAge   = 7 * 24 * time.Hour
	DefaultReconcileBatch    = 500
)

// reconcileRunTimeout bounds one pass.
const reconcileRunTimeout = time.Minute

// reconcileMaxBatches bounds the batches of one pass, so a pass always ends.
const reconcileMaxBatches = 100

// Reconciler is the parked-status reconciliation service. A status report for a message whose
// send is not recorded yet is parked (store.ApplyStatus); the send applies it once it records
// the platform id (store.ApplyParkedStatuses). When that apply fails, the report would stay
// parked: every Interval, this service applies the parked reports whose message has since been
// recorded (store.ReconcileParkedStatuses), and deletes parked reports older than MaxAge, whose
// message never came. Every replica runs it; both steps are idempotent.
type Reconciler struct {
	cfg   ReconcileConfig
	store *store.Store
	log   *slog.Logger

	periodic
}

// NewReconciler returns the reconciliation service over st. It starts nothing and cannot fail.
func NewReconciler(st *store.Store, cfg ReconcileConfig) *Reconciler {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultReconcileInterval
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultReconcileMaxAge
	}
	if cfg.OrphanAfter <= 0 {
		cfg.OrphanAfter = store.AbandonAfter
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultReconcileBatch
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Reconciler{cfg: cfg, store: st, log: cfg.Logger.With("service", "parked_reconciler")}
	// Start and Stop are periodic's: a pass at Start, then every Interval.
	r.periodic = periodic{interval: cfg.Interval, timeout: reconcileRunTimeout, pass: r.run,
		lifecycle: lifecycle{lcName: "parked-status reconciler"}}
	return r
}

// run is one pass of the loop (bounded in time by periodic), logged when it did something.
func (r *Reconciler) run(ctx, loop context.Context) {
	n, err := r.RunOnce(ctx)
	switch {
	case err != nil && loop.Err() == nil:
		r.log.Error("parked-status reconciliation", "error", err.Error(), "applied", n.Applied, "adopted", n.Adopted,
			"orphaned", n.Orphaned, "pruned", n.Pruned)
	case n != ReconcileCounts{}:
		r.log.Info("parked-status reconciliation", "applied", n.Applied, "adopted", n.Adopted,
			"orphaned", n.Orphaned, "pruned", n.Pruned)
	}
	if r.cfg.OnPass != nil {
		r.cfg.OnPass(n)
	}
}

// ReconcileCounts is what one pass did: Applied platform message ids whose parked reports
// were applied, Adopted sends of unknown outcome that took a parked report's wamid through its
// callback data, Orphaned pending sends marked outcome_unknown, Pruned parked reports deleted
// as too old. Each is a counter for /metrics (ReconcileConfig.OnPass).
type ReconcileCounts struct {
	Applied  int
	Adopted  int
	Orphaned int64
	Pruned   int64
}

// RunOnce makes one pass now, as of the clock: it marks sends pending for longer than
// OrphanAfter as outcome_unknown, lets pending sends adopt the wamid of parked reports whose
// callback data names them, applies the parked reports whose message has been recorded, batch
// by batch, then deletes the parked reports received more than MaxAge
// ago. It returns what it did, and the first error (pruning is still tried after a failed
// apply).
func (r *Reconciler) RunOnce(ctx context.Context) (ReconcileCounts, error) {
	var n ReconcileCounts
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	for range reconcileMaxBatches {
		k, err := r.store.MarkOrphanedSends(ctx, r.cfg.Clock().Add(-r.cfg.OrphanAfter), r.cfg.BatchSize)
		n.Orphaned += k
		if err != nil {
			keep(err)
			break
		}
		if k < int64(r.cfg.BatchSize) {
			break
		}
	}
	for range reconcileMaxBatches {
		k, err := r.store.AdoptParkedByCallback(ctx, r.cfg.BatchSize)
		n.Adopted += k
		if err != nil {
			keep(err)
			break
		}
		if k < r.cfg.BatchSize {
			break
		}
	}
	for range reconcileMaxBatches {
		k, err := r.store.ReconcileParkedStatuses(ctx, r.cfg.BatchSize)
		n.Applied += k
		if err != nil {
			keep(err)
			break
		}
		if k < r.cfg.BatchSize {
			break
		}
	}
	cutoff := r.cfg.Clock().Add(-r.cfg.MaxAge)
	for range reconcileMaxBatches {
		k, err := r.store.DeleteParkedStatusesBefore(ctx, cutoff, r.cfg.BatchSize)
		n.Pruned += k
		if err != nil {
			keep(err)
			break
		}
		if k < int64(r.cfg.BatchSize) {
			break
		}
	}
	return n, first
}
