package worker

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"gateway/server/servertest/wait"
	"gateway/store"
)

// TestReconcilerRunOnce applies a parked report whose message was recorded later and prunes a
// parked report older than MaxAge, as of an injected clock; a report within MaxAge stays.
func TestReconcilerRunOnce(t *testing.T) {
	e := newWHEnv(t)
	ctx := context.Background()
	db := e.st.DB()
	acct := e.account("acme")
	now := time.Now()
	clock := &fakeClock{now: now}
	var logs bytes.Buffer
	r := NewReconciler(e.st, ReconcileConfig{Clock: clock.Now, BatchSize: 1,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	park := func(wamid string) {
		t.Helper()
		res, err := e.st.ApplyStatus(ctx, acct.ID, store.StatusReport{PlatformMessageID: wamid, Status: "delivered", OccurredAt: now})
		if err != nil || !res.Parked {
			t.Fatalf("park %s: %+v, %v", wamid, res, err)
		}
	}
	park("wamid.Recorded1")
	park("wamid.Recorded2")
	park("wamid.Never")
	park("wamid.Young")
	// The two sends are recorded without applying what was parked for them.
	var contactID, convID int64
	if err := db.GetContext(ctx, &contactID, `INSERT INTO contacts (account_id, mobile, name) VALUES ($1, '15551234567', 'Ana') RETURNING id`, acct.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.GetContext(ctx, &convID, `INSERT INTO conversations (account_id, contact_id) VALUES ($1, $2) RETURNING id`, acct.ID, contactID); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"wamid.Recorded1", "wamid.Recorded2"} {
		if _, err := db.ExecContext(ctx, `INSERT INTO messages (account_id, contact_id, conversation_id, direction, type,
			destination, template_name, platform_message_id, status, sent_at)
			VALUES ($1, $2, $3, 'out', 'template', '15551234567', 't', $4, 'sent', now())`, acct.ID, contactID, convID, w); err != nil {
			t.Fatal(err)
		}
	}
	// One report for a message never recorded is eight days old.
	if _, err := db.ExecContext(ctx, `UPDATE parked_statuses SET received_at = $1 WHERE platform_message_id = 'wamid.Never'`,
		now.Add(-8*24*time.Hour)); err != nil {
		t.Fatal(err)
	}

	n, err := r.RunOnce(ctx)
	if err != nil || n.Applied != 2 || n.Pruned != 1 {
		t.Fatalf("first pass: %+v, %v; want 2 applied (in batches of one), 1 pruned", n, err)
	}
	var statuses []string
	if err := db.SelectContext(ctx, &statuses, `SELECT status FROM messages WHERE account_id = $1 ORDER BY id`, acct.ID); err != nil {
		t.Fatal(err)
	}
	if strings.Join(statuses, ",") != "delivered,delivered" {
		t.Fatalf("statuses %v, want both delivered", statuses)
	}
	var left []string
	if err := db.SelectContext(ctx, &left, `SELECT platform_message_id FROM parked_statuses WHERE account_id = $1`, acct.ID); err != nil {
		t.Fatal(err)
	}
	if strings.Join(left, ",") != "wamid.Young" {
		t.Fatalf("parked left %v, want only wamid.Young", left)
	}

	// Nothing to do: nothing changes. Past MaxAge on the clock, the young report goes too.
	if n, err := r.RunOnce(ctx); err != nil || n != (ReconcileCounts{}) {
		t.Fatalf("idle pass: %+v, %v", n, err)
	}
	clock.Add(7*24*time.Hour + time.Minute)
	if n, err := r.RunOnce(ctx); err != nil || n.Pruned != 1 {
		t.Fatalf("pass a week later: %+v, %v", n, err)
	}

	// The service shape: Start runs a pass at once and logs its counts; Stop is idempotent.
	park("wamid.Late")
	clock.Add(8 * 24 * time.Hour)
	svc := NewReconciler(e.st, ReconcileConfig{Clock: clock.Now, Interval: time.Hour, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	svc.Stop() // before Start: a no-op
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(ctx); err == nil {
		t.Fatal("a second Start succeeded")
	}
	wait.For(t, func() bool {
		var k int
		db.GetContext(ctx, &k, `SELECT count(*) FROM parked_statuses WHERE account_id = $1`, acct.ID)
		return k == 0
	}, 10*time.Second, "the started reconciler's first pass")
	svc.Stop()
	svc.Stop()
	if !strings.Contains(logs.String(), "pruned=1") {
		t.Errorf("logs do not count the pruned report:\n%s", logs.String())
	}
}
