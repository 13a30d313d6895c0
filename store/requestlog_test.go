package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// The request log pages by keyset without gaps or repeats, newest first, filters by endpoint,
// event type and outcome, and never shows another account's attempts.
func TestRequestLogKeysetAndFilters(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	a, b := whAccount(t, s, "alpha"), whAccount(t, s, "beta")
	e1, _ := s.CreateWebhookEndpoint(ctx, a.ID, "https://example.com/1", "whsec_c2VjcmV0")
	e2, _ := s.CreateWebhookEndpoint(ctx, a.ID, "https://example.com/2", "whsec_c2VjcmV0")
	eb, _ := s.CreateWebhookEndpoint(ctx, b.ID, "https://example.com/b", "whsec_c2VjcmV0")
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	// 12 test events for e1 and 5 for e2; attempts at the same instant in pairs, so the id
	// breaks ties. Every third attempt failed.
	add := func(acct, ep int64, i int) {
		ev, err := s.SendTestEvent(ctx, acct, ep, json.RawMessage(`{"endpoint_id":1,"message":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		code, msg := 200, ""
		if i%3 == 0 {
			code, msg = 500, "HTTP 500"
		}
		s.DB().MustExec(`INSERT INTO webhook_attempts (account_id, delivery_id, attempt, attempted_at, status_code, latency_ms, error)
			SELECT account_id, id, 1, $2, $3, 5, $4 FROM webhook_deliveries WHERE event_id = $1`, ev.ID, t0.Add(time.Duration(i/2)*time.Second), code, msg)
	}
	for i := range 12 {
		add(a.ID, e1.ID, i)
	}
	for i := range 5 {
		add(a.ID, e2.ID, 100+i)
	}
	add(b.ID, eb.ID, 1)
	var all []store.LoggedAttempt
	var f store.AttemptFilter
	for {
		page, err := s.RequestLog(ctx, a.ID, f, 5)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if len(page) < 5 {
			break
		}
		f.BeforeAt, f.BeforeID = page[len(page)-1].AttemptedAt, page[len(page)-1].ID
	}
	if len(all) != 17 {
		t.Fatalf("paged through %d attempts, want 17", len(all))
	}
	seen := map[int64]bool{}
	for i, at := range all {
		if seen[at.ID] {
			t.Fatalf("attempt %d twice", at.ID)
		}
		seen[at.ID] = true
		if at.URL == "https://example.com/b" {
			t.Fatal("another account's attempt in the log")
		}
		if i > 0 && (at.AttemptedAt.After(all[i-1].AttemptedAt) || at.AttemptedAt.Equal(all[i-1].AttemptedAt) && at.ID > all[i-1].ID) {
			t.Fatalf("not newest first at %d", i)
		}
	}
	only := func(f store.AttemptFilter) []store.LoggedAttempt {
		as, err := s.RequestLog(ctx, a.ID, f, 100)
		if err != nil {
			t.Fatal(err)
		}
		return as
	}
	if n := len(only(store.AttemptFilter{EndpointID: e2.ID})); n != 5 {
		t.Errorf("endpoint filter: %d, want 5", n)
	}
	if n := len(only(store.AttemptFilter{EndpointID: eb.ID})); n != 0 {
		t.Errorf("another account's endpoint: %d attempts", n)
	}
	failed := only(store.AttemptFilter{Outcome: "failed"})
	for _, at := range failed {
		if at.Error == "" {
			t.Fatal("a success under outcome=failed")
		}
	}
	if len(failed) != 5 || len(only(store.AttemptFilter{Outcome: "succeeded"})) != 12 {
		t.Errorf("outcome filters: %d failed", len(failed))
	}
	if n := len(only(store.AttemptFilter{Event: "message.sent"})); n != 0 {
		t.Errorf("event filter: %d message.sent", n)
	}
	if _, err := s.AttemptByID(ctx, b.ID, all[0].ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another account's attempt by id: %v", err)
	}
	d, err := s.AttemptByID(ctx, a.ID, all[0].ID)
	if err != nil || d.Ev.Type != store.EventWebhookTest || d.EndpointID != e2.ID {
		t.Fatalf("attempt detail %+v, %v", d, err)
	}
}

// A test event reaches its one endpoint; a disabled endpoint refuses it. Rotation keeps the
// previous secret signing until the overlap ends, then only the new one is claimed.
func TestTestEventAndRotation(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	a := whAccount(t, s, "alpha")
	e1, _ := s.CreateWebhookEndpoint(ctx, a.ID, "https://example.com/1", "whsec_b2xk")
	e2, _ := s.CreateWebhookEndpoint(ctx, a.ID, "https://example.com/2", "whsec_b3RoZXI=")
	if _, err := s.RotateWebhookSecret(ctx, a.ID, e1.ID, "whsec_bmV3", 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SendTestEvent(ctx, a.ID, e1.ID, json.RawMessage(`{"endpoint_id":1,"message":"x"}`)); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	cs, err := s.ClaimDueDeliveries(ctx, now, 10, time.Minute, nil, nil)
	if err != nil || len(cs) != 1 || cs[0].EndpointID != e1.ID {
		t.Fatalf("claims %+v, %v: want one, for the first endpoint only", cs, err)
	}
	if cs[0].Secret != "whsec_bmV3" || cs[0].PreviousSecret != "whsec_b2xk" {
		t.Fatalf("during the overlap: secret %q, previous %q", cs[0].Secret, cs[0].PreviousSecret)
	}
	s.SendTestEvent(ctx, a.ID, e1.ID, json.RawMessage(`{"endpoint_id":1,"message":"x"}`))
	// Both deliveries are due by then (the first one's lease lapsed): neither carries the
	// previous secret.
	cs, err = s.ClaimDueDeliveries(ctx, now.Add(25*time.Hour), 10, time.Minute, nil, nil)
	if err != nil || len(cs) != 2 || cs[0].PreviousSecret != "" || cs[1].PreviousSecret != "" || cs[0].Secret != "whsec_bmV3" {
		t.Fatalf("after the overlap: %+v, %v", cs, err)
	}
	s.SetWebhookEndpointEnabled(ctx, a.ID, e2.ID, false, store.DisabledOperator)
	if _, err := s.SendTestEvent(ctx, a.ID, e2.ID, json.RawMessage(`{}`)); !errors.Is(err, store.ErrEndpointDisabled) {
		t.Fatalf("test event to a disabled endpoint: %v", err)
	}
	if _, err := s.SendTestEvent(ctx, 999999, e1.ID, json.RawMessage(`{}`)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("test event for another account: %v", err)
	}
	if _, err := s.RotateWebhookSecret(ctx, 999999, e1.ID, "whsec_eA==", time.Hour); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("rotation for another account: %v", err)
	}
}
