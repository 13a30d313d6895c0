package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gateway/store"
)

func TestDeliveriesListAndRedeliver(t *testing.T) {
	ctx := context.Background()
	f := newWHFixture(t)
	other := newWHFixtureOn(t, f.s, "other")
	other.event(t, "contact.created")
	for range 4 {
		f.event(t, "contact.created")
	}
	now := time.Now().Add(time.Second)
	cs := f.claim(t, now, 10)
	var mine []store.ClaimedDelivery
	for _, c := range cs {
		if c.AccountID == f.account.ID {
			mine = append(mine, c)
		}
	}
	at := now
	rs := []store.AttemptResult{}
	outcomes := []store.Outcome{store.OutcomeSucceeded, store.OutcomeRetry, store.OutcomeDead}
	for i, c := range mine {
		if i >= len(outcomes) {
			break
		}
		r := store.AttemptResult{ClaimRef: c.Ref(), AttemptedAt: at, Outcome: outcomes[i], RetryIn: time.Hour}
		if outcomes[i] == store.OutcomeSucceeded {
			r.StatusCode = 200
		} else {
			r.StatusCode, r.Error = 500, "HTTP 500"
		}
		rs = append(rs, r)
	}
	if err := f.s.RecordAttempts(ctx, at, rs); err != nil {
		t.Fatal(err)
	}
	count := func(status string) int {
		ds, err := f.s.DeliveriesByAccount(ctx, f.account.ID, status, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.AccountID != f.account.ID || d.URL != f.endpoint.URL || d.Event != "contact.created" {
				t.Fatalf("listed %+v", d)
			}
		}
		return len(ds)
	}
	if n := count(""); n != len(mine) {
		t.Fatalf("all: %d", n)
	}
	if n := count(store.DeliveryFailed); n != 2 {
		t.Fatalf("failed: %d (the retrying and the dead one)", n)
	}
	if n := count(store.DeliverySucceeded); n != 1 {
		t.Fatalf("succeeded: %d", n)
	}
	if _, err := f.s.DeliveriesByAccount(ctx, f.account.ID, "bogus", 10); err == nil {
		t.Fatal("unknown status accepted")
	}

	// Redeliver: the in-flight claim is refused; the dead one becomes due now; another
	// account's delivery is not found; a disabled endpoint is refused.
	if len(mine) != 4 {
		t.Fatalf("claimed %d of the account's deliveries", len(mine))
	}
	if _, err := f.s.Redeliver(ctx, f.account.ID, mine[3].ID); !errors.Is(err, store.ErrInFlight) {
		t.Fatalf("in flight: %v", err)
	}
	dead := mine[2].ID
	d, err := f.s.Redeliver(ctx, f.account.ID, dead)
	if err != nil || d.Status != "pending" || d.Attempts != 1 || d.CompletedAt != nil {
		t.Fatalf("redeliver: %v %+v", err, d)
	}
	if r := f.delivery(t, dead); r.NextAttemptAt.After(time.Now().Add(time.Second)) {
		t.Fatalf("not due now: %+v", r)
	}
	if _, err := f.s.Redeliver(ctx, other.account.ID, dead); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("across accounts: %v", err)
	}
	if _, err := f.s.Redeliver(ctx, f.account.ID, "not-a-uuid"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("malformed id: %v", err)
	}
	if acct, err := f.s.DeliveryAccount(ctx, dead); err != nil || acct != f.account.ID {
		t.Fatalf("owner: %d %v", acct, err)
	}
	f.s.SetWebhookEndpointEnabled(ctx, f.account.ID, f.endpoint.ID, false, store.DisabledOperator)
	if _, err := f.s.Redeliver(ctx, f.account.ID, mine[0].ID); !errors.Is(err, store.ErrEndpointDisabled) {
		t.Fatalf("disabled: %v", err)
	}
}

// The list is newest first: the delivery of the event written last comes first (the list reads
// the (account_id, id) index backwards; ids are UUIDv7, ordered by their millisecond).
func TestDeliveriesNewestFirst(t *testing.T) {
	f := newWHFixture(t)
	var want []string
	for range 3 {
		ev := f.event(t, "contact.created")
		want = append([]string{ev}, want...)
		time.Sleep(3 * time.Millisecond) // the next id's millisecond is later
	}
	ds, err := f.s.DeliveriesByAccount(context.Background(), f.account.ID, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 3 {
		t.Fatalf("listed %d deliveries; want 3", len(ds))
	}
	for i, d := range ds {
		if d.EventID != want[i] {
			t.Fatalf("delivery %d is of event %s; want %s (newest first)", i, d.EventID, want[i])
		}
	}
}
