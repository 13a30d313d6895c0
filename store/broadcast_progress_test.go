package store_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// fullCounts counts the broadcast's recipients by state, and those whose message is delivered
// or read, over every row: what the counters must say.
func fullCounts(t *testing.T, s *store.Store, accountID, id int64) map[string]int {
	t.Helper()
	var rows []struct {
		State string `db:"state"`
		N     int    `db:"n"`
	}
	if err := s.DB().Select(&rows, `SELECT state, count(*) AS n FROM broadcast_recipients WHERE account_id = $1 AND broadcast_id = $2 GROUP BY 1
		UNION ALL
		SELECT m.status, count(*) FROM broadcast_recipients r JOIN messages m ON m.account_id = r.account_id AND m.platform_message_id = r.message_id
		WHERE r.account_id = $1 AND r.broadcast_id = $2 AND r.message_id <> '' AND m.status IN ('delivered', 'read') GROUP BY 1`, accountID, id); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.State] = r.N
	}
	return out
}

func checkCounters(t *testing.T, s *store.Store, accountID, id int64, step string) store.BroadcastProgress {
	t.Helper()
	p, err := s.BroadcastProgressOf(context.Background(), accountID, id, false, time.Now().Add(-time.Hour), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got := maps.Clone(p.ByState)
	if p.Delivered != 0 {
		got["delivered"] = p.Delivered
	}
	if p.Read != 0 {
		got["read"] = p.Read
	}
	if want := fullCounts(t, s, accountID, id); !maps.Equal(got, want) {
		t.Fatalf("%s: counters say %v, a full count %v", step, got, want)
	}
	return p
}

// The progress read's counters (migration 000048) agree with a full count of the recipients at
// every step of a broadcast: stored, claimed, marked sending in a batch, settled sent, failed
// and unknown, their messages delivered and read (one reported before its recipient was
// settled), a message failing after delivery, the rest cancelled; the calls of the window come
// from the per-second pace.
func TestBroadcastProgressCounters(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	a := newAccount(t, s, "counted")
	other := newAccount(t, s, "other")
	b := newBroadcast(t, s, a.ID, 12)
	newBroadcast(t, s, other.ID, 3) // another account's broadcast counts apart
	checkCounters(t, s, a.ID, b.ID, "stored")

	now := time.Now().Add(time.Second)
	c, err := s.ClaimBroadcastRecipients(ctx, a.ID, b.ID, "", now, 10, time.Minute, 0)
	if err != nil || len(c.Recipients) != 10 {
		t.Fatalf("claim: %v, %d", err, len(c.Recipients))
	}
	checkCounters(t, s, a.ID, b.ID, "claimed")
	marks := make([]store.RecipientMark, len(c.Recipients))
	for i, r := range c.Recipients {
		marks[i] = store.RecipientMark{AccountID: a.ID, ID: r.ID, Claim: r.Claim, At: now}
	}
	if ok, err := s.MarkBroadcastsSending(ctx, marks); err != nil || len(ok) != 10 || !ok[9] {
		t.Fatalf("mark: %v %v", ok, err)
	}
	p := checkCounters(t, s, a.ID, b.ID, "marked")
	if p.Recent != 10 || p.ByState[store.RecipientSending] != 10 {
		t.Fatalf("after the marks: %+v, want 10 called and sending", p)
	}

	// Six recipients' messages exist (the send path's rows); the first is reported delivered
	// before its recipient is settled.
	wamid := func(i int) string { return fmt.Sprintf("wamid.b%d", i) }
	for i := range 6 {
		m, err := s.BeginSend(ctx, a.ID, sendIn(c.Recipients[i].Mobile, "", "spring"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RecordSent(ctx, a.ID, m.MessageID, wamid(i), "", now); err != nil {
			t.Fatal(err)
		}
	}
	report := func(i int, status string) {
		t.Helper()
		if _, err := s.ApplyStatus(ctx, a.ID, store.StatusReport{PlatformMessageID: wamid(i), Status: status, OccurredAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	report(0, "delivered")
	code := 131026
	var results []store.RecipientResult
	for i, r := range c.Recipients {
		res := store.RecipientResult{AccountID: a.ID, ID: r.ID, State: store.RecipientSent, MessageID: wamid(i), At: now}
		switch {
		case i == 8:
			res = store.RecipientResult{AccountID: a.ID, ID: r.ID, State: store.RecipientFailed, ErrorCode: &code, ErrorTitle: "Message undeliverable", At: now}
		case i == 9:
			res = store.RecipientResult{AccountID: a.ID, ID: r.ID, State: store.RecipientUnknown, At: now}
		}
		results = append(results, res)
	}
	if err := s.RecordBroadcastResults(ctx, results); err != nil {
		t.Fatal(err)
	}
	p = checkCounters(t, s, a.ID, b.ID, "settled")
	if p.Delivered != 1 {
		t.Fatalf("the report applied before the settle: %d delivered, want 1", p.Delivered)
	}
	report(1, "delivered")
	report(2, "read")
	report(1, "read")
	report(3, "delivered")
	checkCounters(t, s, a.ID, b.ID, "reports")
	if _, err := s.ApplyStatus(ctx, a.ID, store.StatusReport{PlatformMessageID: wamid(3), Status: "failed", OccurredAt: time.Now().Add(time.Second),
		ErrorCode: &code, ErrorTitle: "Message undeliverable"}); err != nil {
		t.Fatal(err)
	}
	checkCounters(t, s, a.ID, b.ID, "failed after delivery")
	if _, err := s.CancelBroadcast(ctx, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	p = checkCounters(t, s, a.ID, b.ID, "cancelled")
	if p.ByState[store.RecipientCancelled] != 2 || p.ByState[store.RecipientFailed] != 2 || p.Read != 2 {
		t.Fatalf("at the end: %+v, want 2 cancelled, 2 failed, 2 read", p)
	}
	if p, err := s.BroadcastProgressOf(ctx, a.ID, b.ID, false, time.Now().Add(time.Hour), time.Now()); err != nil || p.Recent != 0 {
		t.Fatalf("calls after the window's start: %d, %v; want 0", p.Recent, err)
	}
}
