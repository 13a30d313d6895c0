package store_test

import (
	"context"
	"fmt"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

// A status change writes its message.status event only for an account with an enabled webhook
// endpoint, which is the only way an event is ever read (applyStatusSQL): in one statement,
// the message of an account with an enabled endpoint gets its event and one delivery, those
// of an account without endpoints and of one whose endpoint is disabled get none; all three
// messages move and keep their times alike.
func TestStatusEventsOnlyWhereDelivered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	hooked, bare, off := newInboundFixtureOn(t, st, "hooked"), newInboundFixtureOn(t, st, "bare"), newInboundFixtureOn(t, st, "off")
	if _, err := st.DB().Exec(`DELETE FROM webhook_endpoints WHERE account_id = $1`, bare.accountID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().Exec(`UPDATE webhook_endpoints SET enabled = false WHERE account_id = $1`, off.accountID); err != nil {
		t.Fatal(err)
	}
	fixtures := []*inboundFixture{hooked, bare, off}
	var ws []store.StatusWrite
	ids := make([]int64, len(fixtures))
	for i, f := range fixtures {
		ids[i] = f.message(t, "sent", "wamid.E")
		ws = append(ws, store.StatusWrite{AccountID: f.accountID, Report: report("wamid.E", "delivered", 5)})
	}
	as, err := st.ApplyStatusWrites(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range fixtures {
		if !as[i].Found || !as[i].Changed || as[i].Fans != (i == 0) {
			t.Errorf("account %d: %+v", i, as[i])
		}
		if s := f.state(t, ids[i]); s.Status != "delivered" {
			t.Errorf("account %d: status %s", i, s.Status)
		}
		if h := f.history(t, ids[i]); len(h) != 2 || h["delivered"].IsZero() {
			t.Errorf("account %d: history %v", i, h)
		}
		want := 0
		if i == 0 {
			want = 1
		}
		if evs := f.statusEvents(t, ids[i]); len(evs) != want {
			t.Errorf("account %d: %d message.status events, want %d", i, len(evs), want)
		}
		var deliveries int
		if err := st.DB().Get(&deliveries, `SELECT count(*) FROM webhook_deliveries WHERE account_id = $1`, f.accountID); err != nil {
			t.Fatal(err)
		}
		if deliveries != want {
			t.Errorf("account %d: %d deliveries, want %d", i, deliveries, want)
		}
	}
}

// TestApplyStatusNoOpWritesNothing: a report that changes nothing (a duplicate, or a lower
// status already reported) writes no row anywhere, not even the raw webhook body; a report that
// changes the message stores its body with the change, and a lower status reported for the
// first time keeps its history row (and its body).
func TestApplyStatusNoOpWritesNothing(t *testing.T) {
	t.Parallel()
	f := newInboundFixture(t)
	ctx := context.Background()
	id := f.message(t, "pending", "")
	f.recordPlatformID(t, id, "wamid.N")
	rows := func() string {
		t.Helper()
		var n struct {
			Raw     int `db:"raw"`
			History int `db:"history"`
			Events  int `db:"events"`
			Parked  int `db:"parked"`
		}
		if err := f.st.DB().Get(&n, `SELECT (SELECT count(*) FROM platform_webhooks) AS raw,
			(SELECT count(*) FROM (`+storetest.History+`) h WHERE message_id = $1) AS history,
			(SELECT count(*) FROM events WHERE account_id = $2) AS events,
			(SELECT count(*) FROM parked_statuses WHERE account_id = $2) AS parked`, id, f.accountID); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("raw %d history %d events %d parked %d", n.Raw, n.History, n.Events, n.Parked)
	}
	apply := func(status string, sec int) store.StatusResult {
		t.Helper()
		res, err := f.st.ApplyStatusRecordingWebhook(ctx, f.accountID, report("wamid.N", status, sec), []byte(`{"status":"`+status+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if got := rows(); got != "raw 0 history 1 events 0 parked 0" {
		t.Fatalf("start: %s", got)
	}
	if res := apply("read", 3); !res.Found || !res.Changed {
		t.Fatalf("read: %+v", res)
	}
	if got := rows(); got != "raw 1 history 2 events 1 parked 0" {
		t.Fatalf("after read: %s", got)
	}
	for _, r := range []struct {
		status string
		sec    int
	}{{"read", 3}, {"read", 9}, {"sent", 1}} {
		if res := apply(r.status, r.sec); !res.Found || res.Changed {
			t.Fatalf("%s again: %+v", r.status, res)
		}
		if got := rows(); got != "raw 1 history 2 events 1 parked 0" {
			t.Fatalf("after a no-op %s: %s (it wrote)", r.status, got)
		}
	}
	// delivered after read: no change, but its first report is kept in the history.
	if res := apply("delivered", 2); !res.Found || res.Changed {
		t.Fatalf("late delivered: %+v", res)
	}
	if got := rows(); got != "raw 2 history 3 events 1 parked 0" {
		t.Fatalf("after a late delivered: %s", got)
	}
	if res := apply("delivered", 2); res.Changed {
		t.Fatalf("late delivered again: %+v", res)
	}
	if got := rows(); got != "raw 2 history 3 events 1 parked 0" {
		t.Fatalf("after a late delivered again: %s (it wrote)", got)
	}
}
