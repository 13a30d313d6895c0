package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// The listing's pending filter (the dashboard's) finds pending sends of known and unknown
// outcome, and no sent, failed or other account's message; the failed filter within a campaign
// finds that campaign's failed messages only. (Their conditions are rewritten to match the
// partial indexes of 000022 and 000017; this pins that the rewrite lists the same rows.)
func TestListMessagesPendingAndFailedInCampaign(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	b := newAccount(t, st, "beta")
	begin := func(acc int64, mobile, campaign string) store.SendRecord {
		t.Helper()
		r, err := st.BeginSend(ctx, acc, sendIn(mobile, "", campaign))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	known := begin(a.ID, "15550000001", "Spring")   // pending, outcome known
	unknown := begin(a.ID, "15550000002", "Spring") // pending, outcome unknown
	if err := st.MarkOutcomeUnknown(ctx, a.ID, unknown.MessageID); err != nil {
		t.Fatal(err)
	}
	sent := begin(a.ID, "15550000003", "Spring")
	if err := st.RecordSent(ctx, a.ID, sent.MessageID, "wamid.sent", "", at); err != nil {
		t.Fatal(err)
	}
	code := 131026
	failed := begin(a.ID, "15550000004", "Spring")
	otherFailed := begin(a.ID, "15550000005", "Autumn")
	for _, id := range []int64{failed.MessageID, otherFailed.MessageID} {
		if err := st.RecordSendFailure(ctx, a.ID, id, store.SendFailure{Code: &code, Title: "Message undeliverable"}, at); err != nil {
			t.Fatal(err)
		}
	}
	begin(b.ID, "15550000006", "Spring") // another account's pending send

	ids := func(f store.MessageFilter) string {
		t.Helper()
		p, err := st.ListMessages(ctx, a.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, m := range p.Messages {
			out = append(out, m.ID)
		}
		return fmt.Sprint(out)
	}
	if got, want := ids(store.MessageFilter{Status: "pending", WithPending: true}), fmt.Sprint([]int64{unknown.MessageID, known.MessageID}); got != want {
		t.Fatalf("pending: %s, want %s", got, want)
	}
	if got := ids(store.MessageFilter{Status: "pending", WithPending: true, Direction: "in"}); got != "[]" {
		t.Fatalf("inbound pending: %s", got)
	}
	if got := ids(store.MessageFilter{Status: "pending"}); got != "[]" {
		t.Fatalf("pending without WithPending (the API): %s", got)
	}
	if got, want := ids(store.MessageFilter{Status: "failed", CampaignID: failed.CampaignID}), fmt.Sprint([]int64{failed.MessageID}); got != want {
		t.Fatalf("failed in Spring: %s, want %s", got, want)
	}
	if got, want := ids(store.MessageFilter{Status: "failed"}), fmt.Sprint([]int64{otherFailed.MessageID, failed.MessageID}); got != want {
		t.Fatalf("failed: %s, want %s", got, want)
	}
}
