package store

import (
	"slices"
	"sync"
	"sync/atomic"
)

// The fan-out trigger makes an event's deliveries in the writer's transaction but does not
// NOTIFY (migrations/000019_quiet_fanout: NOTIFY serialises every committing transaction on one
// database-wide lock). The store's writers of events signal this process's dispatchers
// instead, after their statement committed; other processes find the deliveries on their poll
// tick.

// fansOutOf is SQL that is true when the account the SQL expression account names has an
// enabled webhook endpoint, so that an event it writes fans out to a delivery (one probe of
// webhook_endpoints_enabled_idx): the hot writers select it and wake the dispatchers only then,
// so that a send or a status report of an account without endpoints costs no claim.
func fansOutOf(account string) string {
	return `EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.account_id = ` + account + ` AND w.enabled)`
}

// eventWakers are the channels signalled after events were written.
type eventWakers struct {
	mu    sync.Mutex                        // serialises changes of chans
	chans atomic.Pointer[[]chan<- struct{}] // read without the lock on every write of events
}

// WakeOnEvents makes every later statement of this store that commits an event (a send and its
// recording, a status change, an inbound message, a new contact, a test event) signal c without
// blocking: give c a buffer of 1 and a signal is never lost, only merged. cancel stops it; it
// is idempotent.
func (s *Store) WakeOnEvents(c chan<- struct{}) (cancel func()) {
	w := &s.wakers
	w.mu.Lock()
	defer w.mu.Unlock()
	var cur []chan<- struct{}
	if p := w.chans.Load(); p != nil {
		cur = *p
	}
	next := append(slices.Clip(cur), c)
	w.chans.Store(&next)
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			cur := *w.chans.Load()
			next := slices.DeleteFunc(slices.Clone(cur), func(x chan<- struct{}) bool { return x == c })
			w.chans.Store(&next)
		})
	}
}

// eventsWritten signals the channels of WakeOnEvents; writers call it after a statement that
// committed at least one event.
func (s *Store) eventsWritten() {
	p := s.wakers.chans.Load()
	if p == nil {
		return
	}
	for _, c := range *p {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}
