package store_test

import (
	"context"
	"testing"
	"time"

	"gateway/store"
)

func TestApplyParkedStatuses(t *testing.T) {
	f := newInboundFixture(t)
	ctx := context.Background()
	code := 131047
	failed := report("wamid.P", "failed", 4)
	failed.ErrorCode, failed.ErrorTitle = &code, "Re-engagement message"
	// Reports before the send is recorded (the message is pending, without a platform id).
	id := f.message(t, "pending", "")
	for _, r := range []store.StatusReport{report("wamid.P", "read", 3), report("wamid.P", "sent", 1),
		report("wamid.P", "read", 3), report("wamid.P", "delivered", 2)} {
		if res := f.apply(t, r); !res.Parked || res.Found || res.Changed {
			t.Fatalf("result %+v", res)
		}
	}
	if n := f.parked(t); n != 3 {
		t.Fatalf("%d parked, want 3 (duplicates parked once)", n)
	}
	// Nothing applies while the id is unknown; the reports stay parked.
	if err := f.st.ApplyParkedStatuses(ctx, f.accountID, "wamid.P"); err != nil {
		t.Fatal(err)
	}
	if n := f.parked(t); n != 3 {
		t.Fatalf("%d parked after an early ApplyParkedStatuses", n)
	}
	f.recordPlatformID(t, id, "wamid.P")
	if err := f.st.ApplyParkedStatuses(ctx, f.accountID, "wamid.P"); err != nil {
		t.Fatal(err)
	}
	if st := f.state(t, id); st.Status != "read" {
		t.Fatalf("status %s", st.Status)
	}
	if n := f.parked(t); n != 0 {
		t.Fatalf("%d still parked", n)
	}
	// The message was recorded as sent: delivered and read are the real changes, in rank order.
	evs := f.statusEvents(t, id)
	if len(evs) != 2 || evs[0]["status"] != "delivered" || evs[1]["status"] != "read" {
		t.Fatalf("events %v", evs)
	}
	if h := f.history(t, id); len(h) != 3 || !h["read"].Equal(t0.Add(3*time.Second)) {
		t.Fatalf("history %v", h)
	}
	// Again: nothing to do.
	if err := f.st.ApplyParkedStatuses(ctx, f.accountID, "wamid.P"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.statusEvents(t, id)); n != 2 {
		t.Fatalf("%d events after a second call", n)
	}
	// A parked failure keeps its error when applied.
	id2 := f.message(t, "pending", "")
	failed.PlatformMessageID = "wamid.P2"
	f.apply(t, failed)
	f.recordPlatformID(t, id2, "wamid.P2")
	if err := f.st.ApplyParkedStatuses(ctx, f.accountID, "wamid.P2"); err != nil {
		t.Fatal(err)
	}
	if st := f.state(t, id2); st.Status != "failed" || st.ErrorCode == nil || *st.ErrorCode != code || *st.ErrorTitle != failed.ErrorTitle {
		t.Fatalf("state %+v", st)
	}
}

func TestReconcileParkedStatuses(t *testing.T) {
	f := newInboundFixture(t)
	ctx := context.Background()
	f.apply(t, report("wamid.Q", "delivered", 1))
	f.apply(t, report("wamid.Unknown", "delivered", 1))
	// Recorded without anyone calling ApplyParkedStatuses.
	id := f.message(t, "sent", "wamid.Q")
	n, err := f.st.ReconcileParkedStatuses(ctx, 100)
	if err != nil || n != 1 {
		t.Fatalf("reconciled %d, %v", n, err)
	}
	if st := f.state(t, id); st.Status != "delivered" {
		t.Fatalf("status %s", st.Status)
	}
	if n := f.parked(t); n != 1 {
		t.Fatalf("%d parked, want the unknown one", n)
	}
}

func TestDeleteParkedStatusesBefore(t *testing.T) {
	f := newInboundFixture(t)
	ctx := context.Background()
	f.apply(t, report("wamid.Old", "delivered", 1))
	f.apply(t, report("wamid.New", "delivered", 1))
	if _, err := f.st.DB().Exec(`UPDATE parked_statuses SET received_at = now() - interval '8 days'
		WHERE platform_message_id = 'wamid.Old'`); err != nil {
		t.Fatal(err)
	}
	n, err := f.st.DeleteParkedStatusesBefore(ctx, time.Now().Add(-7*24*time.Hour), 100)
	if err != nil || n != 1 {
		t.Fatalf("deleted %d, %v; want the old one", n, err)
	}
	if n := f.parked(t); n != 1 {
		t.Fatalf("%d parked, want the new one", n)
	}
}
