package server

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
	// BatchSize is the most platform ids applied, or parked rows deleted, per statement.
	// Default 500.
	BatchSize int
	// Clock is the time; nil means time.Now.
	Clock func() time.Time
	// Logger receives the service's logs. Nil means slog.Default().
	Logger *slog.Logger
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

	lifecycle
}

// NewReconciler returns the reconciliation service over st. It starts nothing and cannot fail.
func NewReconciler(st *store.Store, cfg ReconcileConfig) *Reconciler {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultReconcileInterval
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultReconcileMaxAge
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
	return &Reconciler{cfg: cfg, store: st, log: cfg.Logger.With("service", "parked_reconciler"),
		lifecycle: lifecycle{lcName: "parked-status reconciler"}}
}

// Start starts the loop (first pass at once) and returns. It fails when already started.
func (r *Reconciler) Start(ctx context.Context) error {
	return r.start(ctx, func(ctx context.Context) { everyTick(ctx, r.cfg.Interval, r.run) })
}

// Stop stops the loop, interrupting a pass in progress, and waits for it. It is idempotent,
// and a no-op before Start.
func (r *Reconciler) Stop() { r.stop(nil) }

// run is one pass of the loop, bounded in time, logged when it did something.
func (r *Reconciler) run(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, reconcileRunTimeout)
	n, err := r.RunOnce(rctx)
	cancel()
	switch {
	case err != nil && ctx.Err() == nil:
		r.log.Error("parked-status reconciliation", "error", err.Error(), "applied", n.Applied, "pruned", n.Pruned)
	case n.Applied > 0 || n.Pruned > 0:
		r.log.Info("parked-status reconciliation", "applied", n.Applied, "pruned", n.Pruned)
	}
}

// ReconcileCounts is what one pass did: Applied platform message ids whose parked reports
// were applied, Pruned parked reports deleted as too old.
type ReconcileCounts struct {
	Applied int
	Pruned  int64
}

// RunOnce makes one pass now, as of the clock: it applies the parked reports whose message has
// been recorded, batch by batch, then deletes the parked reports received more than MaxAge
// ago. It returns what it did, and the first error (pruning is still tried after a failed
// apply).
func (r *Reconciler) RunOnce(ctx context.Context) (ReconcileCounts, error) {
	var n ReconcileCounts
	var first error
	for range reconcileMaxBatches {
		k, err := r.store.ReconcileParkedStatuses(ctx, r.cfg.BatchSize)
		n.Applied += k
		if err != nil {
			first = err
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
			if first == nil {
				first = err
			}
			break
		}
		if k < int64(r.cfg.BatchSize) {
			break
		}
	}
	return n, first
}
