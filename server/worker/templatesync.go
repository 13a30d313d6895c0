package worker

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// periodicSyncTimeout bounds one account's sync (the listing may take several pages).
const periodicSyncTimeout = 2 * time.Minute

// TemplateSyncConfig configures NewTemplateSyncer.
type TemplateSyncConfig struct {
	// Accounts lists the accounts to keep in step (store.ConnectedAccountIDs).
	Accounts func(ctx context.Context) ([]int64, error)
	// Sync syncs one account's templates (the API server's SyncAccountTemplates).
	Sync func(ctx context.Context, accountID int64) error
	// Every is how often each account is synced. Default 15 minutes.
	Every time.Duration
	// Clock is the time; nil means time.Now.
	Clock func() time.Time
	// Logger receives the service's logs. Nil means slog.Default().
	Logger *slog.Logger
}

// TemplateSyncer is the background service that keeps every connected account's templates in
// step with the platform: each account is synced once every interval (by this replica; syncs
// are idempotent, so replicas need no coordination). It wakes at least once a minute, so a
// newly connected number is picked up quickly. Template status webhooks trigger an immediate
// sync on their own (server.Server.SyncTemplates).
type TemplateSyncer struct {
	cfg  TemplateSyncConfig
	tick time.Duration
	log  *slog.Logger

	mu   sync.Mutex
	last map[int64]time.Time // account -> last attempt, on the clock

	lifecycle
}

// NewTemplateSyncer returns a syncer over cfg's accounts and sync function. Add it to the
// process's Group. It starts nothing and cannot fail.
func NewTemplateSyncer(cfg TemplateSyncConfig) *TemplateSyncer {
	if cfg.Every <= 0 {
		cfg.Every = 15 * time.Minute
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &TemplateSyncer{cfg: cfg, tick: min(cfg.Every, time.Minute), log: cfg.Logger,
		last: map[int64]time.Time{}, lifecycle: lifecycle{lcName: "template sync"}}
}

// Start runs the loop in the background until ctx ends or Stop is called; the first pass runs
// at once. It fails when already started.
func (t *TemplateSyncer) Start(ctx context.Context) error {
	return t.start(ctx, func(ctx context.Context) {
		everyTick(ctx, t.tick, func(ctx context.Context) { t.RunOnce(ctx) })
	})
}

// Stop stops the loop and waits for a pass in progress to end. It is idempotent and safe
// before Start.
func (t *TemplateSyncer) Stop() { t.stop(nil) }

// RunOnce makes one pass now: it syncs every connected account whose last attempt is at least one interval old (or
// that was never attempted), and returns how many were synced and how many failed. A failed
// account is logged and retried after the interval like the others.
func (t *TemplateSyncer) RunOnce(ctx context.Context) (synced, failed int) {
	ids, err := t.cfg.Accounts(ctx)
	if err != nil {
		if ctx.Err() == nil {
			t.log.WarnContext(ctx, "template sync: list accounts", "error", err.Error())
		}
		return 0, 0
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return synced, failed
		}
		now := t.cfg.Clock()
		t.mu.Lock()
		last, seen := t.last[id]
		due := !seen || now.Sub(last) >= t.cfg.Every
		if due {
			t.last[id] = now
		}
		t.mu.Unlock()
		if !due {
			continue
		}
		actx, cancel := context.WithTimeout(ctx, periodicSyncTimeout)
		err := t.cfg.Sync(actx, id)
		cancel()
		if err != nil {
			failed++
			t.log.WarnContext(ctx, "template sync failed", "account_id", id, "error", err.Error())
			continue
		}
		synced++
	}
	return synced, failed
}
