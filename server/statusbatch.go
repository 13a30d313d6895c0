package server

import (
	"context"
	"sync"

	"gateway/store"
)

// Group commit for status reports. Each platform delivery of one status is answered only once
// its change and raw body are committed (Meta retries otherwise), so a report costs a statement,
// a commit and a WAL flush. Under load many deliveries wait at once; the batcher runs their
// reports as one statement (store.ApplyStatusWrites), which shares all three among them.
//
// A report never waits for a timer: when no statement is in flight it starts one at once, and
// the reports that arrive meanwhile make up the next statement. So an idle gateway applies each
// report alone, as before, and a busy one batches as much as its load offers. A second
// statement starts only behind a long queue (statusBatchSecond): on this project's 2-core
// measurements one statement at a time gave the larger batches and the cheaper reports at 16
// clients, and a second one keeps a slow statement (a row lock held by a send) from stalling
// every report. Two reports of one message never share a statement (the later waits for the
// next), so each is applied exactly as it would be alone.
const (
	statusBatchMax    = 64 // reports per statement
	statusBatchRuns   = 2  // statements in flight at once
	statusBatchSecond = 8  // queued reports that start a second statement
)

// statusBatcher batches ApplyStatusWrites calls; the zero value is not usable (newStatusBatcher).
type statusBatcher struct {
	apply func(ctx context.Context, ws []store.StatusWrite) ([]store.StatusApplied, error)

	mu      sync.Mutex
	queue   []*statusCall
	running int // statements in flight
}

type statusCall struct {
	w    store.StatusWrite
	a    store.StatusApplied
	err  error
	done chan struct{}
}

func newStatusBatcher(apply func(ctx context.Context, ws []store.StatusWrite) ([]store.StatusApplied, error)) *statusBatcher {
	return &statusBatcher{apply: apply}
}

// do applies w in a statement shared with concurrent calls and returns what it did for w. It
// fails when that statement fails; then nothing of it was written. The statement runs under
// its own timeout (platformProcessTimeout), not the caller's context: the calls it carries for
// others must not be cancelled by one caller going away.
func (b *statusBatcher) do(w store.StatusWrite) (store.StatusApplied, error) {
	c := &statusCall{w: w, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	start := b.running == 0 || b.running < statusBatchRuns && len(b.queue) >= statusBatchSecond
	if start {
		b.running++
	}
	b.mu.Unlock()
	if start {
		go b.run()
	}
	<-c.done
	return c.a, c.err
}

// run applies batches until the queue is empty.
func (b *statusBatcher) run() {
	for {
		b.mu.Lock()
		batch := b.take()
		if len(batch) == 0 {
			b.running--
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		ws := make([]store.StatusWrite, len(batch))
		for i, c := range batch {
			ws[i] = c.w
		}
		ctx, cancel := context.WithTimeout(context.Background(), platformProcessTimeout)
		as, err := b.apply(ctx, ws)
		cancel()
		for i, c := range batch {
			if err != nil {
				c.err = err
			} else {
				c.a = as[i]
			}
			close(c.done)
		}
	}
}

// take removes the next batch from the queue, oldest first: at most statusBatchMax calls, no two
// for one (account, platform id). Calls left behind keep their order. b.mu is held.
func (b *statusBatcher) take() []*statusCall {
	type key struct {
		account int64
		wamid   string
	}
	var batch []*statusCall
	seen := map[key]bool{}
	rest := b.queue[:0]
	for _, c := range b.queue {
		k := key{c.w.AccountID, c.w.Report.PlatformMessageID}
		if len(batch) == statusBatchMax || seen[k] {
			rest = append(rest, c)
			continue
		}
		seen[k] = true
		batch = append(batch, c)
	}
	clear(b.queue[len(rest):])
	b.queue = rest
	return batch
}
