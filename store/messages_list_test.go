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

// The dashboard's filters: ContactIDs keeps the listed contacts' messages (an empty list none),
// TemplateContains matches part of a template's name in any case (a LIKE sign in the term is
// taken literally), Detailed reads the contact's name and mobile, and CountMessages counts
// what the listing lists, stopping at its bound; another account's messages never count.
func TestListMessagesDashboardFilters(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	b := newAccount(t, st, "beta")
	ana, err := st.BeginSend(ctx, a.ID, sendIn("5511987654321", "Ana Souza", ""))
	if err != nil {
		t.Fatal(err)
	}
	bruno, err := st.BeginSend(ctx, a.ID, sendIn("4915112345678", "Bruno", ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.BeginSend(ctx, b.ID, sendIn("5511987654321", "Ana elsewhere", "")); err != nil {
		t.Fatal(err)
	}
	list := func(f store.MessageFilter) []store.ListedMessage {
		t.Helper()
		f.WithPending = true
		p, err := st.ListMessages(ctx, a.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		n, capped, err := st.CountMessages(ctx, a.ID, f, 10)
		if err != nil || capped || n != len(p.Messages) {
			t.Fatalf("count of %+v: %d (capped %v, %v), listed %d", f, n, capped, err, len(p.Messages))
		}
		return p.Messages
	}
	if got := list(store.MessageFilter{ContactIDs: []int64{ana.ContactID}, Detailed: true}); len(got) != 1 || got[0].ID != ana.MessageID ||
		got[0].ContactName != "Ana Souza" || got[0].ContactMobile != "5511987654321" {
		t.Errorf("Ana's messages: %+v", got)
	}
	if got := list(store.MessageFilter{ContactIDs: []int64{}}); len(got) != 0 {
		t.Errorf("no contacts: %+v", got)
	}
	if got := list(store.MessageFilter{TemplateContains: "ELCO"}); len(got) != 2 {
		t.Errorf("template ELCO: %d messages", len(got))
	}
	if got := list(store.MessageFilter{TemplateContains: "w%e"}); len(got) != 0 {
		t.Errorf("template w%%e matched %d", len(got))
	}
	if got := list(store.MessageFilter{}); len(got) != 2 || got[0].ContactName != "" {
		t.Errorf("without Detailed: %+v", got)
	}
	if n, capped, err := st.CountMessages(ctx, a.ID, store.MessageFilter{WithPending: true}, 1); err != nil || n != 1 || !capped {
		t.Errorf("count up to 1: %d %v %v", n, capped, err)
	}
	states, err := st.MessageStates(ctx, a.ID, []int64{ana.MessageID, bruno.MessageID, ana.MessageID + 1000})
	if err != nil || len(states) != 2 {
		t.Fatalf("states: %+v %v", states, err)
	}
	for _, s := range states {
		if s.Status != "pending" {
			t.Errorf("state %+v", s)
		}
	}
	if states, err := st.MessageStates(ctx, b.ID, []int64{ana.MessageID}); err != nil || len(states) != 0 {
		t.Errorf("another account's states: %+v %v", states, err)
	}
}
