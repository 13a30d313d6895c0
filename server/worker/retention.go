package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"gateway/server/domain"
	"gateway/store"
)

// RetentionConfig configures NewRetention. Zero fields take the documented defaults.
type RetentionConfig struct {
	// Interval is the time between runs; the first run is at Start. Default 1 h.
	Interval time.Duration
	// Keep is how long the delivery log, the events and the platform's raw webhooks are kept.
	// Default 30 days.
	Keep time.Duration
	// BatchSize is the most rows one DELETE removes (events: a tenth of it, since each
	// cascades to its deliveries and attempts). Default 5000.
	BatchSize int
	// Clock is the time; nil means time.Now.
	Clock func() time.Time
	// Logger receives the service's logs. Nil means slog.Default().
	Logger *slog.Logger
}

// Defaults of RetentionConfig.
const (
	DefaultRetentionInterval = time.Hour
	DefaultRetentionKeep     = 30 * 24 * time.Hour
	DefaultRetentionBatch    = 5000
)

// MediaUploadKeep is how long an upload's record (media_uploads) is kept: the platform keeps an
// uploaded file 30 days, after which its media id names nothing.
const MediaUploadKeep = 30 * 24 * time.Hour

// retentionRunTimeout bounds one run.
const retentionRunTimeout = 5 * time.Minute

// Retention deletes what is past keeping, in batches, in every replica (the deletes are
// idempotent, so replicas need no coordination):
//
//   - webhook attempts (the request log) older than Keep;
//   - events older than Keep with no pending delivery and no delivery completed within Keep,
//     with their deliveries and attempts;
//   - raw platform webhooks received more than Keep ago, and the dead letters of their items;
//   - what test and demo keys leave: test messages sent more than Keep ago (sandbox
//     participants are kept: their count of real deliveries is a lifetime cap per handset);
//   - Idempotency-Key records past their 48-hour replay window;
//   - the records of media uploads older than MediaUploadKeep (the platform's files are gone).
//
// Create it with NewRetention; it is a Service.
type Retention struct {
	cfg   RetentionConfig
	store *store.Store
	log   *slog.Logger

	periodic
}

// NewRetention returns the retention service over st. It starts nothing and cannot fail.
func NewRetention(st *store.Store, cfg RetentionConfig) *Retention {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultRetentionInterval
	}
	if cfg.Keep <= 0 {
		cfg.Keep = DefaultRetentionKeep
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultRetentionBatch
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Retention{cfg: cfg, store: st, log: cfg.Logger.With("service", "retention")}
	// Start and Stop are periodic's: a run at Start, then every Interval; Stop interrupts a
	// run in progress (the batch in flight is rolled back).
	r.periodic = periodic{interval: cfg.Interval, timeout: retentionRunTimeout, pass: r.run,
		lifecycle: lifecycle{lcName: "retention"}}
	return r
}

// run is one pass of the loop (bounded in time by periodic), logged.
func (r *Retention) run(ctx, loop context.Context) {
	n, err := r.runOnce(ctx)
	switch {
	case err != nil && loop.Err() == nil:
		r.log.Error("retention run", "error", err.Error())
	case n.total() > 0:
		r.log.Info("retention run", "attempts", n.Attempts, "events", n.Events,
			"platform_webhooks", n.PlatformWebhooks, "idempotency_keys", n.IdempotencyKeys,
			"test_messages", n.TestMessages, "sessions", n.Sessions, "dead_letters", n.DeadLetters, "sandbox_messages", n.SandboxMessages,
			"media_uploads", n.MediaUploads)
	}
}

// retentionCounts is what one run deleted.
type retentionCounts struct {
	Attempts, Events, PlatformWebhooks, IdempotencyKeys int64
	TestMessages, DeadLetters, SandboxMessages          int64
	MediaUploads                                        int64
	Sessions                                            int64 // the dashboard's, past their idle or absolute expiry
}

func (c retentionCounts) total() int64 {
	return c.Attempts + c.Events + c.PlatformWebhooks + c.IdempotencyKeys + c.TestMessages + c.DeadLetters + c.SandboxMessages +
		c.Sessions + c.MediaUploads
}

// runOnce deletes everything past keeping as of the clock's now, batch by batch until a batch
// comes back short. It returns what it deleted, and the first error (the later kinds are
// still tried).
func (r *Retention) runOnce(ctx context.Context) (retentionCounts, error) {
	now := r.cfg.Clock()
	cutoff := now.Add(-r.cfg.Keep)
	var n retentionCounts
	var errs []error
	drainBefore := func(cutoff time.Time, count *int64, batch int, del func(context.Context, time.Time, int) (int64, error)) {
		for ctx.Err() == nil {
			k, err := del(ctx, cutoff, batch)
			*count += k
			if err != nil {
				errs = append(errs, err)
				return
			}
			if k < int64(batch) {
				return
			}
		}
	}
	drain := func(count *int64, batch int, del func(context.Context, time.Time, int) (int64, error)) {
		drainBefore(cutoff, count, batch, del)
	}
	drain(&n.Events, max(1, r.cfg.BatchSize/10), r.store.DeleteEventsBefore)
	drain(&n.Attempts, r.cfg.BatchSize, r.store.DeleteWebhookAttemptsBefore)
	drain(&n.PlatformWebhooks, r.cfg.BatchSize, r.store.DeletePlatformWebhooksBefore)
	drain(&n.SandboxMessages, r.cfg.BatchSize, r.store.DeleteSandboxMessagesBefore)
	drain(&n.DeadLetters, r.cfg.BatchSize, r.store.DeleteDeadLettersBefore)
	drain(&n.TestMessages, r.cfg.BatchSize, r.store.DeleteTestMessagesBefore)
	drainBefore(now.Add(-MediaUploadKeep), &n.MediaUploads, r.cfg.BatchSize, r.store.DeleteMediaUploadsBefore)
	k, err := r.store.DeleteExpiredIdempotencyKeys(ctx, now)
	n.IdempotencyKeys += k
	if err != nil {
		errs = append(errs, err)
	}
	k, err = r.store.DeleteExpiredSessions(ctx, now, domain.SessionIdle, domain.SessionAbsolute)
	n.Sessions += k
	if err != nil {
		errs = append(errs, err)
	}
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}
