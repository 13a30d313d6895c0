package worker

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gateway/server/servertest/wait"
)

// One tenant's slow endpoints cannot take more than its share of the dispatcher: a tenant with
// four endpoints that hang holds at most PerAccount attempts (and AccountBacklog claims), and
// another tenant's deliveries go through meanwhile. Before the fix the four endpoints took
// every Concurrency slot (4 × PerEndpoint) and the other tenant waited for them.
func TestDispatcherOneTenantCannotTakeEverySlot(t *testing.T) {
	e := newWHEnv(t)
	slowAcct, fastAcct := e.account("slow"), e.account("fast")
	release := make(chan struct{})
	var inSlow, maxSlow atomic.Int64
	slow := newReceiver(t, func(int, received) (int, string) {
		n := inSlow.Add(1)
		for m := maxSlow.Load(); n > m && !maxSlow.CompareAndSwap(m, n); m = maxSlow.Load() {
		}
		<-release
		inSlow.Add(-1)
		return http.StatusOK, ""
	})
	for range 4 {
		e.endpoint(slowAcct.ID, slow)
	}
	fast := newReceiver(t, nil)
	e.endpoint(fastAcct.ID, fast)
	d := e.dispatcher(DispatcherConfig{Concurrency: 8, PerEndpoint: 2, PerAccount: 4, BatchSize: 8,
		SendTimeout: time.Minute, Lease: 5 * time.Minute}, false)
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the dispatcher's Stop, which waits for the blocked attempts

	e.events(slowAcct.ID, 40) // 160 deliveries, first in line
	e.events(fastAcct.ID, 40)
	wait.For(t, func() bool { return fast.count() >= 40 }, 15*time.Second, "the other tenant's 40 deliveries")
	if got := maxSlow.Load(); got > 4 {
		t.Fatalf("%d attempts in flight for one tenant, its share is 4", got)
	}
	unblock()
	wait.For(t, func() bool { return slow.count() >= 160 }, 30*time.Second, "the slow tenant's 160 deliveries")
	d.Stop()
	for _, acct := range []int64{slowAcct.ID, fastAcct.ID} {
		for _, ds := range e.deliveries(acct) {
			if ds.Status != "succeeded" {
				t.Fatalf("delivery %+v", ds)
			}
		}
	}
}

// Two tenants with slow endpoints cannot starve a third: each account's share of the attempt
// slots and of the claimed deliveries shrinks as more accounts have work, always leaving room
// for one more. With the fixed share (Concurrency / 2 per account) the two slow tenants held
// every slot and every claim, and the third tenant's deliveries waited for them.
func TestDispatcherTwoSlowTenantsCannotStarveAThird(t *testing.T) {
	e := newWHEnv(t)
	slowA, slowB, fastAcct := e.account("slowa"), e.account("slowb"), e.account("fast")
	release := make(chan struct{})
	var inSlow, maxSlow atomic.Int64
	hang := func(int, received) (int, string) {
		n := inSlow.Add(1)
		for m := maxSlow.Load(); n > m && !maxSlow.CompareAndSwap(m, n); m = maxSlow.Load() {
		}
		<-release
		inSlow.Add(-1)
		return http.StatusOK, ""
	}
	slow := newReceiver(t, hang)
	for _, acct := range []int64{slowA.ID, slowB.ID} {
		for range 4 {
			e.endpoint(acct, slow)
		}
	}
	fast := newReceiver(t, nil)
	e.endpoint(fastAcct.ID, fast)
	const concurrency = 8
	d := e.dispatcher(DispatcherConfig{Concurrency: concurrency, PerEndpoint: 2, BatchSize: 8,
		SendTimeout: time.Minute, Lease: 5 * time.Minute}, false)
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the dispatcher's Stop, which waits for the blocked attempts

	e.events(slowA.ID, 40) // 160 deliveries each, first in line
	e.events(slowB.ID, 40)
	// Both slow tenants are stuck at their share before the third one's work arrives.
	wait.For(t, func() bool { return inSlow.Load() >= 4 }, 15*time.Second, "the slow tenants' attempts")
	e.events(fastAcct.ID, 40)
	wait.For(t, func() bool { return fast.count() >= 40 }, 15*time.Second, "the third tenant's 40 deliveries")
	if got := maxSlow.Load(); got >= concurrency {
		t.Fatalf("%d attempts in flight for the two slow tenants: every slot", got)
	}
	unblock()
	wait.For(t, func() bool { return slow.count() >= 320 }, 60*time.Second, "the slow tenants' 320 deliveries")
	d.Stop()
	for _, acct := range []int64{slowA.ID, slowB.ID, fastAcct.ID} {
		for _, ds := range e.deliveries(acct) {
			if ds.Status != "succeeded" {
				t.Fatalf("delivery %+v", ds)
			}
		}
	}
}
