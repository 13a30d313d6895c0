// Package groupcommit runs the concurrent calls of one statement as one statement: the
// batching engine of the API's hot writes and key lookups. It knows nothing of what the
// statement does; the API (server/batchkeys.go) builds one Batcher per statement.
package groupcommit

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// The hot writes are answered only once committed: a status delivery (Meta
// retries otherwise), a send's record before the platform call (the message row, which the
// platform call must not precede) and its recording of the platform's acceptance. Each costs a
// statement, a commit and a WAL flush. Under load many wait at once; a Batcher runs their
// writes as one statement (store.ApplyStatusWrites, store.BeginSends, store.RecordSentWrites),
// which shares all three among them.
//
// A write never waits for a timer: when no statement is in flight it starts one at once, and
// the writes that arrive meanwhile make up the next statement. So an idle gateway writes each
// alone, as before, and a busy one batches as much as its load offers. A second statement
// starts only behind a long queue (batchSecond): a status statement's fixed cost is several
// times the cost of one more report in it, so one statement at a time gives the larger batches,
// the cheaper writes and the most reports per second; a shorter queue before the second
// statement gave no more status reports or sends, and fewer at 64 clients (`gateway bench`
// compares; the CHANGELOG has the figures). A second statement keeps a slow one (a row lock
// held elsewhere) from stalling every write. Writes that share a key (one message; one person
// for sends' records) never share a statement (the later waits for the next), so each is
// applied exactly as it would be alone.
//
// The API keys' lookups share statements the same way (store.PrincipalsByKeyHashes, the API's s.keys):
// reads, with no commit to share, but each alone cost a round trip and a statement's start-up
// on both sides; shared, a send costs PostgreSQL less CPU. The statement starts after every
// request it carries arrived, so a revocation committed before a request is read by it.
const (
	batchMax    = 64 // writes per statement
	batchRuns   = 2  // statements in flight at once
	batchSecond = 16 // queued writes that start a second statement
)

// Batcher batches the calls of one statement; build it with New.
type Batcher[W, R any] struct {
	apply   func(ctx context.Context, ws []W) ([]R, error) // one result per write, in order
	keys    func(W) []any                                  // writes that share a key never share a statement
	timeout time.Duration                                  // bounds each statement

	mu      sync.Mutex
	queue   []*batchCall[W, R]
	running int // statements in flight
}

type batchCall[W, R any] struct {
	w     W
	r     R
	err   error
	panic *Panic // the statement's function panicked: do panics again in the caller
	done  chan struct{}
}

// Panic is a panic of a shared statement's function, with the stack where it happened,
// passed to every call it carried: each panics again in its own goroutine, where the request's
// recovery turns it into a 500 and logs both, instead of the panic ending the process.
type Panic struct {
	value any
	stack []byte
}

func (p *Panic) Error() string {
	return fmt.Sprintf("%v (in a shared statement)\n%s", p.value, p.stack)
}

// New returns a Batcher over apply, which runs one statement for the writes it is given and
// returns one result per write, in order; keys names what a write must not share a statement
// with (nil: anything); timeout bounds each statement.
func New[W, R any](apply func(ctx context.Context, ws []W) ([]R, error), keys func(W) []any,
	timeout time.Duration) *Batcher[W, R] {
	return &Batcher[W, R]{apply: apply, keys: keys, timeout: timeout}
}

// Do applies w in a statement shared with concurrent calls and returns what it did for w. It
// fails when that statement fails; then nothing of it was written. The statement runs under
// the batcher's timeout, not the caller's context: the calls it carries for others must not be
// cancelled by one caller going away.
func (b *Batcher[W, R]) Do(w W) (R, error) {
	c := &batchCall[W, R]{w: w, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	start := b.running == 0 || b.running < batchRuns && len(b.queue) >= batchSecond
	if start {
		b.running++
	}
	b.mu.Unlock()
	if start {
		go b.run()
	}
	<-c.done
	if c.panic != nil {
		panic(c.panic)
	}
	return c.r, c.err
}

// run applies batches until the queue is empty.
func (b *Batcher[W, R]) run() {
	for {
		b.mu.Lock()
		batch := b.take()
		if len(batch) == 0 {
			b.running--
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		ws := make([]W, len(batch))
		for i, c := range batch {
			ws[i] = c.w
		}
		as, p, err := b.applyOnce(ws)
		for i, c := range batch {
			switch {
			case p != nil:
				c.panic = p
			case err != nil:
				c.err = err
			default:
				c.r = as[i]
			}
			close(c.done)
		}
	}
}

// applyOnce runs one statement under the batcher's timeout, catching a panic of its function.
func (b *Batcher[W, R]) applyOnce(ws []W) (as []R, p *Panic, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			p = &Panic{value: r, stack: debug.Stack()}
		}
	}()
	as, err = b.apply(ctx, ws)
	return as, nil, err
}

// take removes the next batch from the queue, oldest first: at most batchMax calls, no two that
// share a key. Calls left behind keep their order. b.mu is held.
func (b *Batcher[W, R]) take() []*batchCall[W, R] {
	var batch []*batchCall[W, R]
	seen := map[any]bool{}
	rest := b.queue[:0]
	for _, c := range b.queue {
		var ks []any
		if b.keys != nil {
			ks = b.keys(c.w)
		}
		if len(batch) == batchMax || sharesKey(seen, ks) {
			rest = append(rest, c)
			continue
		}
		for _, k := range ks {
			seen[k] = true
		}
		batch = append(batch, c)
	}
	clear(b.queue[len(rest):])
	b.queue = rest
	return batch
}

// sharesKey says whether any of ks is in seen.
func sharesKey(seen map[any]bool, ks []any) bool {
	for _, k := range ks {
		if seen[k] {
			return true
		}
	}
	return false
}
