package server

import (
	"context"
	"sync"
	"time"
)

// periodicSyncTimeout bounds one account's sync (the listing may take several pages).
const periodicSyncTimeout = 2 * time.Minute

// TemplateSyncer is the background service that keeps every connected account's templates in
// step with the platform: each account is synced once every interval (by this replica; syncs
// are idempotent, so replicas need no coordination). It wakes at least once a minute, so a
// newly connected number is picked up quickly. Template status webhooks trigger an immediate
// sync on their own (Server.SyncTemplates).
type TemplateSyncer struct {
	srv   *Server
	every time.Duration
	tick  time.Duration
	now   func() time.Time

	mu   sync.Mutex
	last map[int64]time.Time // account -> last attempt, on now's clock

	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan struct{}
}

// NewTemplateSyncer returns a syncer for srv's accounts that syncs each one every interval
// (15 minutes when interval <= 0). clock nil means time.Now. Register it with AddService.
func NewTemplateSyncer(srv *Server, every time.Duration, clock func() time.Time) *TemplateSyncer {
	if every <= 0 {
		every = 15 * time.Minute
	}
	if clock == nil {
		clock = time.Now
	}
	return &TemplateSyncer{srv: srv, every: every, tick: min(every, time.Minute), now: clock, last: map[int64]time.Time{}}
}

// Start runs the loop in the background until ctx ends or Stop is called; the first pass runs
// at once. It never fails.
func (t *TemplateSyncer) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	t.cancel, t.done = cancel, make(chan struct{})
	go func() {
		defer close(t.done)
		timer := time.NewTimer(0)
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			t.runOnce(ctx)
			timer.Reset(t.tick)
		}
	}()
	return nil
}

// Stop stops the loop and waits for a pass in progress to end. It is idempotent and safe
// before Start.
func (t *TemplateSyncer) Stop() {
	t.stopOnce.Do(func() {
		if t.cancel == nil {
			return
		}
		t.cancel()
		<-t.done
	})
}

// runOnce syncs every connected account whose last attempt is at least one interval old (or
// that was never attempted), and returns how many were synced and how many failed. A failed
// account is logged and retried after the interval like the others.
func (t *TemplateSyncer) runOnce(ctx context.Context) (synced, failed int) {
	ids, err := t.srv.store.ConnectedAccountIDs(ctx)
	if err != nil {
		if ctx.Err() == nil {
			t.srv.log.WarnContext(ctx, "template sync: list accounts", "error", err.Error())
		}
		return 0, 0
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return synced, failed
		}
		now := t.now()
		t.mu.Lock()
		last, seen := t.last[id]
		due := !seen || now.Sub(last) >= t.every
		if due {
			t.last[id] = now
		}
		t.mu.Unlock()
		if !due {
			continue
		}
		actx, cancel := context.WithTimeout(ctx, periodicSyncTimeout)
		res, err := t.srv.SyncTemplates(actx, id)
		cancel()
		if err != nil {
			failed++
			t.srv.log.WarnContext(ctx, "template sync failed", "account_id", id, "error", err.Error())
			continue
		}
		synced++
		t.srv.log.InfoContext(ctx, "templates synced", "account_id", id, "fetched", res.Fetched,
			"approved", res.Approved, "created", res.Created, "updated", res.Updated, "removed", res.Removed)
	}
	return synced, failed
}
