package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gateway/platform/eventhook"
	"gateway/server"
	"gateway/server/domain"
	"gateway/server/servertest/wait"
	"gateway/store"
)

// TestDispatcherWokenByThisProcessWriters: the fan-out trigger does not NOTIFY
// (migrations/000019_quiet_fanout); an event the store writes wakes the dispatcher of its own
// process, with no LISTEN connection and the poll an hour away.
func TestDispatcherWokenByThisProcessWriters(t *testing.T) {
	e := newWHEnv(t)
	acct := e.account("acme")
	rcv := newReceiver(t, nil)
	e.endpoint(acct.ID, rcv)
	d := NewDispatcher(e.st, DispatcherConfig{PollInterval: time.Hour, Logger: testLogger(t),
		Sender: eventhook.NewSender(eventhook.SenderConfig{AllowPrivate: true, MaxConnsPerHost: -1})}) // no DSN: no LISTEN
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	for i := range 3 {
		mobile := fmt.Sprintf("1555000%04d", i)
		if _, created, err := e.st.UpsertContact(context.Background(), acct.ID, store.ContactInput{Mobile: mobile}); err != nil || !created {
			t.Fatalf("contact %d: created %v, %v", i, created, err)
		}
		wait.For(t, func() bool { return rcv.count() >= i+1 }, 10*time.Second, fmt.Sprintf("contact.created %d delivered", i+1))
	}
}

// TestDispatcherClaimEndWakesALeftOutClaimer: a claimer that left an endpoint out because
// another claim's reservation counted against the endpoint's backlog is woken when that claim
// ends, though no delivery is running whose end would wake it. Before, it waited for the next
// event or poll tick: the rare stall of TestDispatcherWokenByThisProcessWriters.
func TestDispatcherClaimEndWakesALeftOutClaimer(t *testing.T) {
	e := newWHEnv(t)
	acct := e.account("acme")
	rcv := newReceiver(t, nil)
	e.endpoint(acct.ID, rcv)
	d := e.dispatcher(DispatcherConfig{BatchSize: 64, EndpointBacklog: 64, MaxClaimed: 256}, true)
	e.event(acct.ID, "message.sent", false)
	if n := step(t, d); n != 1 { // the dispatcher now knows the endpoint
		t.Fatalf("first claim took %d", n)
	}

	// Another claimer's claim is in flight: its reservation, with this claim's, could push the
	// endpoint over its backlog, so this claim leaves it out.
	d.mu.Lock()
	d.reserved += d.cfg.BatchSize
	d.mu.Unlock()
	e.event(acct.ID, "message.sent", false)
	if n, _, again, err := d.runOnce(context.Background(), nil); err != nil || n != 0 || again {
		t.Fatalf("claim beside another: %d claimed, again %v, %v", n, again, err)
	}
	select {
	case <-d.capacity:
		t.Fatal("woken while the other claim is still in flight")
	default:
	}
	// The other claim ends, having found nothing.
	d.mu.Lock()
	d.unreserve(d.cfg.BatchSize)
	d.mu.Unlock()
	select {
	case <-d.capacity:
	default:
		t.Fatal("the end of the other claim woke no claimer: the event waits for the poll")
	}
	if n := step(t, d); n != 1 {
		t.Fatalf("claim after the wake-up took %d", n)
	}
	if rcv.count() != 2 {
		t.Fatalf("receiver got %d deliveries", rcv.count())
	}
}

func TestDispatcherDeliversEveryEventKind(t *testing.T) {
	e := newWHEnv(t)
	spec, err := server.LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	acct := e.account("acme")
	rcv := newReceiver(t, nil)
	ep := e.endpoint(acct.ID, rcv)
	// Only a notification can wake it (e.event notifies, as a writer in another process does):
	// the poll is an hour away.
	e.dispatcher(DispatcherConfig{PollInterval: time.Hour}, false)

	ids := map[string]string{}
	for _, typ := range []string{"message.received", "message.sent", "message.status", "contact.created"} {
		ids[e.event(acct.ID, typ, false)] = typ
	}
	testID := e.event(acct.ID, "message.sent", true)
	start := time.Now()
	wait.For(t, func() bool { return rcv.count() >= 5 }, 10*time.Second, "5 deliveries")

	deliveryOf := map[string]string{}
	for _, d := range e.deliveries(acct.ID) {
		deliveryOf[d.EventID] = d.ID
	}
	for _, r := range rcv.requests() {
		if r.Err != nil {
			t.Fatalf("verification: %v", r.Err)
		}
		validateEventBody(t, spec, r.Body)
		var b map[string]any
		json.Unmarshal(r.Body, &b)
		id := b["id"].(string)
		h := r.Header
		if h.Get("X-Service-Delivery") != deliveryOf[id] || h.Get("X-Service-Attempt") != "1" {
			t.Fatalf("delivery headers %v (delivery %s)", h, deliveryOf[id])
		}
		ts, _ := strconv.ParseInt(h.Get("X-Service-Timestamp"), 10, 64)
		if d := time.Unix(ts, 0).Sub(start); d < -2*time.Second || d > 10*time.Second {
			t.Fatalf("timestamp %d is %s from now", ts, d)
		}
		if id == testID {
			if b["mode"] != "test" {
				t.Fatalf("test-mode event without mode: %s", r.Body)
			}
		} else if _, ok := b["mode"]; ok || b["event"] != ids[id] {
			t.Fatalf("live event body %s", r.Body)
		}
		if !strings.HasSuffix(fmt.Sprint(b["created_at"]), "Z") {
			t.Fatalf("created_at %v", b["created_at"])
		}
	}
	// Every delivery succeeded once and is in the log.
	wait.For(t, func() bool {
		for _, d := range e.deliveries(acct.ID) {
			if d.Status != store.DeliverySucceeded {
				return false
			}
		}
		return true
	}, 10*time.Second, "deliveries marked succeeded")
	for _, d := range e.deliveries(acct.ID) {
		log := e.log(acct.ID, d.ID)
		if d.Attempts != 1 || d.EndpointID != ep.ID || len(log) != 1 || log[0].StatusCode == nil || *log[0].StatusCode != 204 {
			t.Fatalf("delivery %+v log %+v", d, log)
		}
	}
}

func TestDispatcherRetriesUntilSuccess(t *testing.T) {
	e := newWHEnv(t)
	acct := e.account("acme")
	big := strings.Repeat("é", 15<<10) // 30 KB: the log keeps 20 KB of it
	rcv := newReceiver(t, func(n int, _ received) (int, string) {
		if n == 0 {
			return http.StatusInternalServerError, big
		}
		return http.StatusOK, "thanks"
	})
	e.endpoint(acct.ID, rcv)
	d := e.dispatcher(DispatcherConfig{}, true)
	e.event(acct.ID, "message.sent", false)

	if n := step(t, d); n != 1 {
		t.Fatalf("claimed %d", n)
	}
	ds := e.deliveries(acct.ID)
	if ds[0].Status != "pending" || ds[0].Attempts != 1 || ds[0].LastError != "HTTP 500 Internal Server Error" {
		t.Fatalf("after a 500: %+v", ds[0])
	}
	// The first retry is 5 s later (rnd 0.5: no jitter).
	if want := e.clock.Now().Add(5 * time.Second); !ds[0].Next.Equal(want) {
		t.Fatalf("next attempt at %v, want %v", ds[0].Next, want)
	}
	e.clock.Add(4 * time.Second)
	if n := step(t, d); n != 0 {
		t.Fatal("retried before its time")
	}
	e.clock.Add(time.Second)
	if n := step(t, d); n != 1 {
		t.Fatalf("retry not claimed (%d)", n)
	}
	reqs := rcv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, r := range reqs {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if reqs[0].Header.Get("X-Service-Delivery") != reqs[1].Header.Get("X-Service-Delivery") ||
		!bytes.Equal(reqs[0].Body, reqs[1].Body) || reqs[1].Header.Get("X-Service-Attempt") != "2" {
		t.Fatalf("retry differs: %v / %v", reqs[0].Header, reqs[1].Header)
	}
	if ts := reqs[1].Header.Get("X-Service-Timestamp"); ts != strconv.FormatInt(e.clock.Now().Unix(), 10) {
		t.Fatalf("timestamp %s is not the attempt's time", ts)
	}
	ds = e.deliveries(acct.ID)
	if ds[0].Status != "succeeded" {
		t.Fatalf("%+v", ds[0])
	}
	log := e.log(acct.ID, ds[0].ID)
	if len(log) != 2 || *log[0].StatusCode != 500 || *log[1].StatusCode != 200 || log[1].ResponseBody != "thanks" {
		t.Fatalf("log %+v", log)
	}
	if n := len(log[0].ResponseBody); n < 20<<10-2 || n > 20<<10 || !strings.HasPrefix(log[0].ResponseBody, "éé") {
		t.Fatalf("kept %d bytes of the response", n)
	}
}

func TestDispatcherTimeoutIsAFailedAttempt(t *testing.T) {
	e := newWHEnv(t)
	acct := e.account("acme")
	release := make(chan struct{})
	rcv := newReceiver(t, func(n int, _ received) (int, string) {
		if n == 0 {
			<-release // slower than the timeout
		}
		return http.StatusOK, ""
	})
	defer close(release)
	e.endpoint(acct.ID, rcv)
	d := e.dispatcher(DispatcherConfig{SendTimeout: 300 * time.Millisecond}, true)
	e.event(acct.ID, "contact.created", false)

	step(t, d)
	ds := e.deliveries(acct.ID)
	log := e.log(acct.ID, ds[0].ID)
	if ds[0].Status != "pending" || len(log) != 1 || log[0].StatusCode != nil || !strings.HasPrefix(log[0].Error, "timeout") {
		t.Fatalf("after a timeout: %+v %+v", ds[0], log)
	}
	e.clock.Add(5 * time.Second)
	step(t, d)
	if ds := e.deliveries(acct.ID); ds[0].Status != "succeeded" || ds[0].Attempts != 2 {
		t.Fatalf("after the retry: %+v", ds[0])
	}
}

func TestDispatcherGoneDisablesEndpoint(t *testing.T) {
	e := newWHEnv(t)
	acct := e.account("acme")
	rcv := newReceiver(t, func(int, received) (int, string) { return http.StatusGone, "bye" })
	ep := e.endpoint(acct.ID, rcv)
	other := newReceiver(t, nil)
	e.endpoint(acct.ID, other)
	d := e.dispatcher(DispatcherConfig{BatchSize: 1}, true)
	e.event(acct.ID, "contact.created", false)
	e.event(acct.ID, "contact.created", false)

	// Batch size 1: each step claims one delivery (a claim that only finds a delivery of the
	// disabled endpoint kills it and returns none).
	for i := 0; i < 4 && rcv.count() == 0; i++ {
		step(t, d)
	}
	if rcv.count() != 1 {
		t.Fatalf("%d requests to the gone endpoint", rcv.count())
	}
	w := e.endpointState(acct.ID, ep.ID)
	if w.Enabled || w.DisabledReason != store.DisabledGone {
		t.Fatalf("endpoint %+v", w)
	}
	for range 4 {
		step(t, d)
	}
	// The 410 delivery is dead with its attempt logged; the endpoint's other delivery died
	// when it came due; the other endpoint got both events; new events skip the endpoint.
	var dead, sent int
	for _, ds := range e.deliveries(acct.ID) {
		switch {
		case ds.EndpointID == ep.ID && ds.Status == "dead":
			dead++
		case ds.EndpointID != ep.ID && ds.Status == "succeeded":
			sent++
		default:
			t.Fatalf("delivery %+v", ds)
		}
	}
	if dead != 2 || sent != 2 || rcv.count() != 1 || other.count() != 2 {
		t.Fatalf("dead %d sent %d gone-requests %d other-requests %d", dead, sent, rcv.count(), other.count())
	}
	e.event(acct.ID, "contact.created", false)
	if n := len(e.deliveries(acct.ID)); n != 5 {
		t.Fatalf("%d deliveries: a disabled endpoint got a new one", n)
	}
}

func TestDispatcherDeadAfterMaxAttemptsThenRedeliver(t *testing.T) {
	e := newWHEnv(t)
	acct := e.account("acme")
	var fail atomic.Bool
	fail.Store(true)
	rcv := newReceiver(t, func(int, received) (int, string) {
		if fail.Load() {
			return http.StatusServiceUnavailable, ""
		}
		return http.StatusOK, ""
	})
	e.endpoint(acct.ID, rcv)
	d := e.dispatcher(DispatcherConfig{}, true)
	e.event(acct.ID, "contact.created", true) // test mode: the short schedule

	for i := 1; i <= eventhook.MaxAttempts; i++ {
		if n := step(t, d); n != 1 {
			t.Fatalf("attempt %d: claimed %d", i, n)
		}
		e.clock.Add(31 * time.Minute) // past the longest test-mode delay
	}
	ds := e.deliveries(acct.ID)
	if ds[0].Status != "dead" || ds[0].Attempts != eventhook.MaxAttempts || len(e.log(acct.ID, ds[0].ID)) != eventhook.MaxAttempts {
		t.Fatalf("after %d failures: %+v", eventhook.MaxAttempts, ds[0])
	}
	if n := step(t, d); n != 0 {
		t.Fatal("a dead delivery was attempted")
	}
	// Dead deliveries stay in the log, listed as failed, and can be redelivered by hand.
	failed, err := e.st.DeliveriesByAccount(context.Background(), acct.ID, store.DeliveryFailed, 10)
	if err != nil || len(failed) != 1 {
		t.Fatalf("failed list: %v %+v", err, failed)
	}
	fail.Store(false)
	if _, err := e.st.Redeliver(context.Background(), acct.ID, ds[0].ID); err != nil {
		t.Fatal(err)
	}
	// Redeliver uses the database clock; the fake clock is ahead of it.
	if n := step(t, d); n != 1 {
		t.Fatalf("redelivery not claimed")
	}
	if ds := e.deliveries(acct.ID); ds[0].Status != "succeeded" || ds[0].Attempts != eventhook.MaxAttempts+1 {
		t.Fatalf("after redelivery: %+v", ds[0])
	}
	if got := rcv.requests()[eventhook.MaxAttempts].Header.Get("X-Service-Attempt"); got != strconv.Itoa(eventhook.MaxAttempts+1) {
		t.Fatalf("redelivery attempt header %s", got)
	}
}

func TestDispatcherDisablesEndpointFailingForFiveDays(t *testing.T) {
	e := newWHEnv(t)
	acct := e.account("acme")
	rcv := newReceiver(t, func(int, received) (int, string) { return http.StatusBadGateway, "" })
	ep := e.endpoint(acct.ID, rcv)
	d := e.dispatcher(DispatcherConfig{}, true)
	e.event(acct.ID, "contact.created", false)
	t0 := e.clock.Now()
	step(t, d)
	if w := e.endpointState(acct.ID, ep.ID); !w.Enabled || w.FailingSince == nil || !w.FailingSince.Equal(t0) {
		t.Fatalf("after the first failure: %+v", w)
	}
	e.clock.Add(4 * 24 * time.Hour)
	step(t, d)
	if w := e.endpointState(acct.ID, ep.ID); !w.Enabled {
		t.Fatalf("disabled after 4 days: %+v", w)
	}
	e.clock.Add(24*time.Hour + time.Second)
	e.event(acct.ID, "contact.created", false) // due now by the database clock, long past by the fake one
	step(t, d)
	w := e.endpointState(acct.ID, ep.ID)
	if w.Enabled || w.DisabledReason != store.DisabledFailing {
		t.Fatalf("after 5 days of failures: %+v", w)
	}
}

func TestDispatcherSuccessEndsFailureStreak(t *testing.T) {
	e := newWHEnv(t)
	acct := e.account("acme")
	rcv := newReceiver(t, func(n int, _ received) (int, string) {
		if n == 0 {
			return http.StatusInternalServerError, ""
		}
		return http.StatusOK, ""
	})
	ep := e.endpoint(acct.ID, rcv)
	d := e.dispatcher(DispatcherConfig{}, true)
	e.event(acct.ID, "contact.created", false)
	step(t, d)
	if w := e.endpointState(acct.ID, ep.ID); w.FailingSince == nil {
		t.Fatal("no streak after a failure")
	}
	e.clock.Add(time.Minute)
	step(t, d)
	if w := e.endpointState(acct.ID, ep.ID); w.FailingSince != nil || !w.Enabled {
		t.Fatalf("streak not cleared by a success: %+v", w)
	}
}

func TestDispatcherRescuesStuckClaim(t *testing.T) {
	e := newWHEnv(t)
	acct := e.account("acme")
	rcv := newReceiver(t, nil)
	e.endpoint(acct.ID, rcv)
	e.event(acct.ID, "message.status", false)

	// A dispatcher claims the delivery and dies holding it.
	cs, err := e.st.ClaimDueDeliveries(context.Background(), e.clock.Now(), 10, 30*time.Second, nil, nil)
	if err != nil || len(cs) != 1 {
		t.Fatalf("claim: %v %d", err, len(cs))
	}
	d := e.dispatcher(DispatcherConfig{}, true)
	if n := step(t, d); n != 0 {
		t.Fatal("claimed a leased delivery")
	}
	e.clock.Add(31 * time.Second)
	if n := step(t, d); n != 1 {
		t.Fatal("stuck claim not rescued after its lease")
	}
	reqs := rcv.requests()
	if len(reqs) != 1 || reqs[0].Header.Get("X-Service-Attempt") != "2" || reqs[0].Err != nil {
		t.Fatalf("rescued attempt: %+v", reqs)
	}
	if ds := e.deliveries(acct.ID); ds[0].Status != "succeeded" {
		t.Fatalf("%+v", ds[0])
	}
}

// staticResolver answers every name with one address.
type staticResolver struct{ ip string }

func (r staticResolver) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	return []net.IPAddr{{IP: net.ParseIP(r.ip)}}, nil
}

func TestDispatcherRefusesPrivateDestinations(t *testing.T) {
	e := newWHEnv(t)
	acct := e.account("acme")
	rcv := newReceiver(t, nil)
	port := rcv.srv.Listener.Addr().(*net.TCPAddr).Port
	urls := []string{
		fmt.Sprintf("http://127.0.0.1:%d/hook", port),
		"http://10.0.0.1/hook",
		"http://169.254.169.254/latest/meta-data/",
		fmt.Sprintf("http://hooks.customer.example:%d/hook", port), // resolves to 10.1.2.3
		fmt.Sprintf("http://localhost:%d/hook", port),
	}
	for _, u := range urls {
		e.endpointURL(acct.ID, u, nil)
	}
	// The production sender, private destinations refused, with a resolver that points the
	// customer's name at a private address (DNS rebinding).
	sender := eventhook.NewSender(eventhook.SenderConfig{Timeout: time.Second, Resolver: staticResolver{"10.1.2.3"}})
	d := e.dispatcher(DispatcherConfig{Sender: sender}, true)
	e.event(acct.ID, "contact.created", false)
	if n := step(t, d); n != len(urls) {
		t.Fatalf("claimed %d", n)
	}
	if rcv.conns.Load() != 0 || rcv.count() != 0 {
		t.Fatalf("%d connections reached the receiver", rcv.conns.Load())
	}
	for _, ds := range e.deliveries(acct.ID) {
		log := e.log(acct.ID, ds.ID)
		if ds.Status != "pending" || len(log) != 1 || !strings.Contains(log[0].Error, "forbidden") {
			t.Fatalf("delivery %+v log %+v", ds, log)
		}
	}
}

func TestDispatcherTenancy(t *testing.T) {
	e := newWHEnv(t)
	a, b := e.account("alpha"), e.account("beta")
	ra, rb := newReceiver(t, nil), newReceiver(t, nil)
	e.endpoint(a.ID, ra)
	e.endpoint(b.ID, rb)
	e.dispatcher(DispatcherConfig{}, false)
	aIDs := map[string]bool{}
	for range 5 {
		aIDs[e.event(a.ID, "contact.created", false)] = true
	}
	bID := e.event(b.ID, "message.sent", false)
	wait.For(t, func() bool { return ra.count() >= 5 && rb.count() >= 1 }, 10*time.Second, "all deliveries")
	for _, r := range ra.requests() {
		if !aIDs[r.Header.Get("X-Service-Event-Id")] || r.Err != nil {
			t.Fatalf("A received %s (%v)", r.Body, r.Err)
		}
	}
	for _, r := range rb.requests() {
		if r.Header.Get("X-Service-Event-Id") != bID || r.Err != nil {
			t.Fatalf("B received %s (%v)", r.Body, r.Err)
		}
	}
}

func TestDispatcherSlowEndpointDoesNotDelayOthers(t *testing.T) {
	e := newWHEnv(t)
	slowAcct, fastAcct := e.account("slow"), e.account("fast")
	release := make(chan struct{})
	var inSlow atomic.Int64
	var maxSlow atomic.Int64
	slow := newReceiver(t, func(int, received) (int, string) {
		n := inSlow.Add(1)
		for m := maxSlow.Load(); n > m && !maxSlow.CompareAndSwap(m, n); m = maxSlow.Load() {
		}
		<-release
		inSlow.Add(-1)
		return http.StatusOK, ""
	})
	fast := newReceiver(t, nil)
	e.endpoint(slowAcct.ID, slow)
	e.endpoint(fastAcct.ID, fast)
	d := e.dispatcher(DispatcherConfig{Concurrency: 8, PerEndpoint: 2, BatchSize: 8, SendTimeout: time.Minute, Lease: 5 * time.Minute}, false)
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the dispatcher's Stop, which waits for the blocked attempts

	e.events(slowAcct.ID, 40) // first in line
	e.events(fastAcct.ID, 40)
	wait.For(t, func() bool { return fast.count() >= 40 }, 15*time.Second, "the fast endpoint's 40 deliveries")
	if got := maxSlow.Load(); got > 2 {
		t.Fatalf("%d attempts in flight to one endpoint, bound is 2", got)
	}
	unblock()
	wait.For(t, func() bool { return slow.count() >= 40 }, 15*time.Second, "the slow endpoint's 40 deliveries")
	d.Stop()
	for _, acct := range []int64{slowAcct.ID, fastAcct.ID} {
		for _, ds := range e.deliveries(acct) {
			if ds.Status != "succeeded" || ds.Attempts != 1 {
				t.Fatalf("delivery %+v", ds)
			}
		}
	}
}

func TestDispatcherStopReleasesUnattemptedClaims(t *testing.T) {
	e := newWHEnv(t)
	acct := e.account("acme")
	started := make(chan struct{}, 10)
	release := make(chan struct{})
	rcv := newReceiver(t, func(int, received) (int, string) {
		started <- struct{}{}
		<-release
		return http.StatusOK, ""
	})
	e.endpoint(acct.ID, rcv)
	d := e.dispatcher(DispatcherConfig{Concurrency: 1, PerEndpoint: 1, SendTimeout: time.Minute}, true)
	e.events(acct.ID, 5)
	if n, _, _, err := d.runOnce(context.Background(), nil); err != nil || n != 5 {
		t.Fatalf("claimed %d %v", n, err)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("no attempt started")
	}
	done := make(chan struct{})
	go func() { d.Stop(); close(done) }()
	// Stop waits for the attempt in flight.
	select {
	case <-done:
		t.Fatal("Stop returned with an attempt in flight")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-done
	var succeeded, released int
	for _, ds := range e.deliveries(acct.ID) {
		switch {
		case ds.Status == "succeeded" && ds.Attempts == 1:
			succeeded++
		case ds.Status == "pending" && ds.Attempts == 0 && !ds.Next.After(e.clock.Now()):
			released++
		default:
			t.Fatalf("delivery %+v", ds)
		}
	}
	if succeeded != 1 || released != 4 || rcv.count() != 1 {
		t.Fatalf("succeeded %d released %d requests %d", succeeded, released, rcv.count())
	}
	d.Stop() // idempotent
}

func TestDispatcherReleasesClaimsAboutToLapse(t *testing.T) {
	e := newWHEnv(t)
	acct := e.account("acme")
	rcv := newReceiver(t, nil)
	e.endpoint(acct.ID, rcv)
	d := e.dispatcher(DispatcherConfig{Lease: 30 * time.Second}, true)
	e.event(acct.ID, "contact.created", false)
	// Claimed, then (as if it waited in the queue) the clock moves past what the lease allows.
	cs, err := e.st.ClaimDueDeliveries(context.Background(), e.clock.Now(), 1, 30*time.Second, nil, nil)
	if err != nil || len(cs) != 1 {
		t.Fatal(err)
	}
	j := job{ClaimedDelivery: cs[0], claimedAt: e.clock.Now()}
	e.clock.Add(26 * time.Second)
	res := d.attempt(j)
	if !res.release || rcv.count() != 0 {
		t.Fatalf("attempted with %s of lease left", 4*time.Second)
	}
	d.flush([]dispatchResult{res})
	if ds := e.deliveries(acct.ID); ds[0].Attempts != 0 || ds[0].Status != "pending" {
		t.Fatalf("not released: %+v", ds[0])
	}
}

func TestTwoDispatchersNeverSendOneDeliveryTwice(t *testing.T) {
	e := newWHEnv(t)
	acct := e.account("acme")
	var mu sync.Mutex
	inFlight, seen := map[string]bool{}, map[string]int{}
	var overlap atomic.Int64
	rcv := newReceiver(t, func(_ int, r received) (int, string) {
		id := r.Header.Get("X-Service-Event-Id")
		mu.Lock()
		if inFlight[id] {
			overlap.Add(1)
		}
		inFlight[id] = true
		seen[id]++
		mu.Unlock()
		time.Sleep(time.Millisecond) // widen the window an overlap would need
		mu.Lock()
		delete(inFlight, id)
		mu.Unlock()
		return http.StatusNoContent, ""
	})
	e.endpoint(acct.ID, rcv)
	e.dispatcher(DispatcherConfig{BatchSize: 10}, false)
	e.dispatcher(DispatcherConfig{BatchSize: 10}, false)
	const n = 600
	for range 6 {
		e.events(acct.ID, n/6)
	}
	wait.For(t, func() bool { return rcv.count() >= n }, 30*time.Second, "all deliveries")
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != n || overlap.Load() != 0 {
		t.Fatalf("%d distinct events, %d overlapping attempts", len(seen), overlap.Load())
	}
	for id, k := range seen {
		if k != 1 {
			t.Fatalf("event %s delivered %d times", id, k)
		}
	}
}

func TestEndpointHealthSummary(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	res := func(ep int64, at int, outcome store.Outcome, status int, failing bool) dispatchResult {
		return dispatchResult{endpointID: ep, failing: failing, attempt: store.AttemptResult{
			ClaimRef: store.ClaimRef{AccountID: 1}, AttemptedAt: t0.Add(time.Duration(at) * time.Second), Outcome: outcome, StatusCode: status}}
	}
	got := endpointHealth([]dispatchResult{
		res(1, 1, store.OutcomeSucceeded, 200, false), // healthy: nothing to write
		res(2, 2, store.OutcomeSucceeded, 200, false), // fail then succeed, out of order
		res(2, 1, store.OutcomeRetry, 500, false),
		res(3, 1, store.OutcomeSucceeded, 200, true), // succeed then fail: new streak
		res(3, 2, store.OutcomeRetry, 500, true),
		res(4, 3, store.OutcomeDead, 410, false),     // gone
		res(5, 1, store.OutcomeSucceeded, 200, true), // streak ended
		{release: true, endpointID: 6},
	})
	want := []store.EndpointHealth{
		{AccountID: 1, EndpointID: 2, Recovered: true},
		{AccountID: 1, EndpointID: 3, Recovered: true, FailingSince: t0.Add(2 * time.Second)},
		{AccountID: 1, EndpointID: 4, Gone: true, FailingSince: t0.Add(3 * time.Second)},
		{AccountID: 1, EndpointID: 5, Recovered: true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	// Successes only: nothing to write, unless one ends an endpoint's streak.
	if got := endpointHealth([]dispatchResult{res(1, 1, store.OutcomeSucceeded, 200, false), res(2, 1, store.OutcomeSucceeded, 204, false)}); got != nil {
		t.Fatalf("successes only: got %+v, want nothing", got)
	}
	got = endpointHealth([]dispatchResult{res(1, 1, store.OutcomeSucceeded, 200, false), res(2, 1, store.OutcomeSucceeded, 200, true)})
	if want := []store.EndpointHealth{{AccountID: 1, EndpointID: 2, Recovered: true}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("a success ending a streak: got %+v, want %+v", got, want)
	}
}

// TestWebhookDeliveryGolden pins the bytes of a delivery of each event kind: the body built from
// a stored event and the signed headers of an attempt. Rewrite with -update-webhook-golden.
func TestWebhookDeliveryGolden(t *testing.T) {
	spec, err := server.LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	const secret = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	created := time.Date(2026, 3, 1, 12, 34, 56, 789000000, time.FixedZone("BRT", -3*3600))
	kinds := []string{"message.received", "message.sent", "message.status", "contact.created"}
	var out bytes.Buffer
	for i, typ := range kinds {
		for _, test := range []bool{false, true} {
			ev := store.Event{ID: fmt.Sprintf("0d9f2b7e-6c1a-4f0e-9a57-3b8d2c1e4f6%d", i), AccountID: 7, Type: typ, Test: test,
				Data: json.RawMessage(eventData[typ]), CreatedAt: created}
			body := domain.EventBody(ev)
			validateEventBody(t, spec, body)
			h, err := eventhook.Request{URL: "https://hooks.example.com/in", Secret: secret, Event: ev.Type, EventID: ev.ID,
				DeliveryID: "5b0f3f5e-2d4c-4f7a-8e1b-9c3d2a1f0e7" + strconv.Itoa(i), Attempt: 1 + i, Timestamp: created.Add(time.Second), Body: body}.Headers()
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&out, "== %s test=%t\n%s\n", typ, test, body)
			var names []string
			for k := range h {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				fmt.Fprintf(&out, "%s: %s\n", k, h.Get(k))
			}
			// The golden signature is also what an independent receiver computes.
			r := httptest.NewRequest(http.MethodPost, "https://hooks.example.com/in", bytes.NewReader(body))
			r.Header = h
			if err := verifyDelivery(secret, r, body); err != nil {
				t.Fatal(err)
			}
		}
	}
	path := filepath.Join("testdata", "webhook_deliveries.golden")
	if *updateWebhookGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-webhook-golden to create it)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("delivery bytes changed:\n%s\nwant:\n%s", out.Bytes(), want)
	}
}
