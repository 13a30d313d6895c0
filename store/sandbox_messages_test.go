package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

func TestSandboxJoinsAndMessages(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	a, err := st.CreateAccount(ctx, "Acme", "acme@example.com", "acme-sbx")
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.CreateAccount(ctx, "Other", "other@example.com", "other-sbx")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	join := func(code, phone string, at time.Time) {
		t.Helper()
		if _, err := st.JoinSandbox(ctx, code, phone, at); err != nil {
			t.Fatal(err)
		}
	}
	join("acme-sbx", "15550000001", now.Add(-time.Hour))
	join("acme-sbx", "15550000002", now.Add(-25*time.Hour))
	join("other-sbx", "15550000001", now.Add(-30*time.Minute))

	p, err := st.LatestSandboxJoin(ctx, []string{"5215550000001", "15550000001"})
	if err != nil || p.AccountID != b.ID {
		t.Fatalf("latest join %+v, %v (want the other account, joined last)", p, err)
	}
	if _, err := st.LatestSandboxJoin(ctx, []string{"19999999999"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("never joined: %v", err)
	}

	msg := store.SandboxMessage{PlatformMessageID: "wamid.S1", AccountID: a.ID, Sender: "15550000001", Name: "Ana", Type: "text",
		ReceivedAt: now, Event: true, EventFields: []byte(`{"text":"hi"}`), ConversationID: 1, ContactID: 1}
	id, first, err := st.RecordSandboxMessage(ctx, msg)
	if err != nil || !first || id == 0 {
		t.Fatalf("record: %d %v %v", id, first, err)
	}
	if _, first, err := st.RecordSandboxMessage(ctx, msg); err != nil || first {
		t.Fatalf("the same message again: %v %v", first, err)
	}
	evs, err := st.EventsByAccount(ctx, a.ID, "message.received", 10)
	if err != nil || len(evs) != 1 || !evs[0].Test {
		t.Fatalf("events %+v, %v", evs, err)
	}
	// Without Event, or without an account, no event is written.
	if _, first, err := st.RecordSandboxMessage(ctx, store.SandboxMessage{PlatformMessageID: "wamid.S2", Sender: "1", Type: "text",
		ReceivedAt: now, Event: true}); err != nil || !first {
		t.Fatalf("no account: %v %v", first, err)
	}
	if evs, _ := st.EventsByAccount(ctx, a.ID, "", 10); len(evs) != 1 {
		t.Fatalf("%d events", len(evs))
	}
}
