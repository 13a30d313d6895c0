package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"gateway/store"
)

func TestRecordAttempts(t *testing.T) {
	ctx := context.Background()
	f := newWHFixture(t)
	for range 4 {
		f.event(t, "contact.created")
	}
	now := time.Now().Add(time.Second).Truncate(time.Millisecond)
	cs := f.claim(t, now, 10)
	if len(cs) != 4 {
		t.Fatalf("claimed %d", len(cs))
	}
	at := now.Add(100 * time.Millisecond)
	results := []store.AttemptResult{
		{ClaimRef: cs[0].Ref(), AttemptedAt: at, StatusCode: 204, Latency: 12 * time.Millisecond, Outcome: store.OutcomeSucceeded},
		{ClaimRef: cs[1].Ref(), AttemptedAt: at, StatusCode: 500, Latency: 30 * time.Millisecond, Error: "HTTP 500",
			Response: []byte("oops\x00\xff" + strings.Repeat("x", 100)), Outcome: store.OutcomeRetry, RetryIn: 5 * time.Second},
		{ClaimRef: cs[2].Ref(), AttemptedAt: at, Error: "dial tcp: refused", Outcome: store.OutcomeDead},
	}
	if err := f.s.RecordAttempts(ctx, at, results); err != nil {
		t.Fatal(err)
	}
	if r := f.delivery(t, cs[0].ID); r.Status != "succeeded" || !r.Completed || r.LastStatus == nil || *r.LastStatus != 204 {
		t.Fatalf("succeeded: %+v", r)
	}
	r := f.delivery(t, cs[1].ID)
	if r.Status != "pending" || r.Completed || r.LastError != "HTTP 500" || !r.NextAttemptAt.Equal(at.Add(5*time.Second)) {
		t.Fatalf("retry: %+v (want next at %v)", r, at.Add(5*time.Second))
	}
	if r := f.delivery(t, cs[2].ID); r.Status != "dead" || !r.Completed || r.LastStatus != nil {
		t.Fatalf("dead: %+v", r)
	}
	// The unrecorded claim is still leased.
	if r := f.delivery(t, cs[3].ID); r.Status != "pending" || r.Attempts != 1 {
		t.Fatalf("in flight: %+v", r)
	}

	d, err := f.s.DeliveryByID(ctx, f.account.ID, cs[1].ID)
	if err != nil || len(d.Log) != 1 {
		t.Fatalf("log: %v %+v", err, d)
	}
	a := d.Log[0]
	if a.Attempt != 1 || a.StatusCode == nil || *a.StatusCode != 500 || a.LatencyMS != 30 || !a.AttemptedAt.Equal(at) ||
		!strings.HasPrefix(a.ResponseBody, "oops\uFFFDxxx") {
		t.Fatalf("attempt %+v", a)
	}

	// A late result of a claim another dispatcher has since taken over is logged but changes
	// nothing; a late success still completes the delivery.
	later := at.Add(6 * time.Second)
	retaken := f.claim(t, later, 10)
	if len(retaken) != 1 || retaken[0].ID != cs[1].ID || retaken[0].Attempt != 2 {
		t.Fatalf("retaken %+v", retaken)
	}
	stale := store.AttemptResult{ClaimRef: cs[1].Ref(), AttemptedAt: later, Error: "late", Outcome: store.OutcomeDead}
	if err := f.s.RecordAttempts(ctx, later, []store.AttemptResult{stale}); err != nil {
		t.Fatal(err)
	}
	if r := f.delivery(t, cs[1].ID); r.Status != "pending" || r.Attempts != 2 {
		t.Fatalf("a stale failure changed the delivery: %+v", r)
	}
	staleOK := store.AttemptResult{ClaimRef: cs[1].Ref(), AttemptedAt: later, StatusCode: 200, Outcome: store.OutcomeSucceeded}
	if err := f.s.RecordAttempts(ctx, later, []store.AttemptResult{staleOK}); err != nil {
		t.Fatal(err)
	}
	if r := f.delivery(t, cs[1].ID); r.Status != "succeeded" {
		t.Fatalf("a late success did not complete the delivery: %+v", r)
	}

	// A result for a delivery deleted meanwhile (its endpoint was deleted) does not fail the
	// batch.
	g := newWHFixtureOn(t, f.s, "gone")
	g.event(t, "contact.created")
	gc := g.claim(t, later, 10)
	if _, err := f.s.DeleteWebhookEndpoint(ctx, g.account.ID, g.endpoint.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.s.RecordAttempts(ctx, later, []store.AttemptResult{
		{ClaimRef: gc[0].Ref(), AttemptedAt: later, StatusCode: 200, Outcome: store.OutcomeSucceeded},
		{ClaimRef: cs[3].Ref(), AttemptedAt: later, StatusCode: 200, Outcome: store.OutcomeSucceeded},
	}); err != nil {
		t.Fatal(err)
	}
	if r := f.delivery(t, cs[3].ID); r.Status != "succeeded" {
		t.Fatalf("%+v", r)
	}
}

func TestReleaseDeliveries(t *testing.T) {
	ctx := context.Background()
	f := newWHFixture(t)
	f.event(t, "contact.created")
	now := time.Now().Add(time.Second).Truncate(time.Millisecond)
	cs := f.claim(t, now, 10)
	if err := f.s.ReleaseDeliveries(ctx, now, []store.ClaimRef{cs[0].Ref()}); err != nil {
		t.Fatal(err)
	}
	if r := f.delivery(t, cs[0].ID); r.Attempts != 0 || !r.NextAttemptAt.Equal(now) {
		t.Fatalf("released: %+v", r)
	}
	again := f.claim(t, now, 10)
	if len(again) != 1 || again[0].Attempt != 1 {
		t.Fatalf("reclaim: %+v", again)
	}
	// Releasing a stale claim (attempt 1 while the row is at attempt 2) does nothing.
	later := now.Add(time.Minute)
	third := f.claim(t, later, 10)
	if err := f.s.ReleaseDeliveries(ctx, later, []store.ClaimRef{again[0].Ref()}); err != nil {
		t.Fatal(err)
	}
	if r := f.delivery(t, third[0].ID); r.Attempts != 2 {
		t.Fatalf("stale release changed the row: %+v", r)
	}
}

func TestUpdateEndpointHealth(t *testing.T) {
	ctx := context.Background()
	f := newWHFixture(t)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := store.EndpointHealth{AccountID: f.account.ID, EndpointID: f.endpoint.ID}
	cutoff := func(now time.Time) time.Time { return now.Add(-5 * 24 * time.Hour) }

	fail := h
	fail.FailingSince = t0
	if err := f.s.UpdateEndpointHealth(ctx, cutoff(t0), []store.EndpointHealth{fail}); err != nil {
		t.Fatal(err)
	}
	if w := f.endpointNow(t); w.FailingSince == nil || !w.FailingSince.Equal(t0) || !w.Enabled {
		t.Fatalf("streak start: %+v", w)
	}
	// A later failure keeps the streak's start.
	fail.FailingSince = t0.Add(time.Hour)
	if err := f.s.UpdateEndpointHealth(ctx, cutoff(t0.Add(time.Hour)), []store.EndpointHealth{fail}); err != nil {
		t.Fatal(err)
	}
	if w := f.endpointNow(t); !w.FailingSince.Equal(t0) {
		t.Fatalf("streak moved: %+v", w)
	}
	// A success ends it.
	ok := h
	ok.Recovered = true
	if err := f.s.UpdateEndpointHealth(ctx, cutoff(t0), []store.EndpointHealth{ok}); err != nil {
		t.Fatal(err)
	}
	if w := f.endpointNow(t); w.FailingSince != nil {
		t.Fatalf("recovered: %+v", w)
	}
	// Five days of failures disable it.
	fail.FailingSince = t0
	f.s.UpdateEndpointHealth(ctx, cutoff(t0), []store.EndpointHealth{fail})
	late := t0.Add(5*24*time.Hour + time.Second)
	fail.FailingSince = late
	if err := f.s.UpdateEndpointHealth(ctx, cutoff(late), []store.EndpointHealth{fail}); err != nil {
		t.Fatal(err)
	}
	if w := f.endpointNow(t); w.Enabled || w.DisabledReason != store.DisabledFailing {
		t.Fatalf("not disabled after 5 days: %+v", w)
	}

	// 410 disables at once.
	g := newWHFixtureOn(t, f.s, "gone")
	gone := store.EndpointHealth{AccountID: g.account.ID, EndpointID: g.endpoint.ID, Gone: true, FailingSince: t0}
	if err := f.s.UpdateEndpointHealth(ctx, cutoff(t0), []store.EndpointHealth{gone}); err != nil {
		t.Fatal(err)
	}
	if w := g.endpointNow(t); w.Enabled || w.DisabledReason != store.DisabledGone {
		t.Fatalf("410: %+v", w)
	}
	// The health of an endpoint is written only under its own account.
	wrong := store.EndpointHealth{AccountID: f.account.ID, EndpointID: g.endpoint.ID, Recovered: true}
	f.s.UpdateEndpointHealth(ctx, cutoff(t0), []store.EndpointHealth{wrong})
	if w := g.endpointNow(t); w.FailingSince == nil {
		t.Fatal("health written across accounts")
	}
}
