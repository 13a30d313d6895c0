package worker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gateway/server/servertest/wait"
)

func TestRetentionRunOnce(t *testing.T) {
	e := newWHEnv(t)
	ctx := context.Background()
	db := e.st.DB()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	acct := e.account("acme")
	rcv := newReceiver(t, nil)
	e.endpoint(acct.ID, rcv)
	quiet := e.account("quiet") // no endpoints: its events have no deliveries

	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	event := func(accountID int64, created time.Time) string {
		t.Helper()
		var id string
		if err := db.GetContext(ctx, &id, `INSERT INTO events (account_id, type, data, created_at)
			VALUES ($1, 'contact.created', '{}', $2) RETURNING id`, accountID, created); err != nil {
			t.Fatal(err)
		}
		return id
	}
	complete := func(eventID, status string, at time.Time) {
		t.Helper()
		exec(`UPDATE webhook_deliveries SET status = $2, completed_at = $3, attempts = 1 WHERE event_id = $1`, eventID, status, at)
		exec(`INSERT INTO webhook_attempts (account_id, delivery_id, attempt, attempted_at, status_code, latency_ms)
			SELECT account_id, id, 1, $2, 200, 5 FROM webhook_deliveries WHERE event_id = $1`, eventID, at)
	}

	var oldDone []string
	for i := range 5 { // succeeded and dead 40 days ago: go, with their deliveries and attempts
		id := event(acct.ID, now.Add(-40*day))
		status := "succeeded"
		if i%2 == 1 {
			status = "dead"
		}
		complete(id, status, now.Add(-40*day))
		oldDone = append(oldDone, id)
	}
	oldPending := event(acct.ID, now.Add(-40*day)) // still pending: kept
	oldRecent := event(acct.ID, now.Add(-40*day))  // completed 10 days ago (a redelivery): kept
	complete(oldRecent, "succeeded", now.Add(-10*day))
	recent := event(acct.ID, now.Add(-2*day)) // kept
	complete(recent, "succeeded", now.Add(-2*day))
	quietOld := event(quiet.ID, now.Add(-31*day)) // no deliveries: goes
	quietNew := event(quiet.ID, now.Add(-29*day)) // kept
	// An attempt older than 30 days of a delivery that is kept: the log row goes.
	exec(`INSERT INTO webhook_attempts (account_id, delivery_id, attempt, attempted_at, latency_ms, error)
		SELECT account_id, id, 0, $2, 3000, 'timeout' FROM webhook_deliveries WHERE event_id = $1`, oldRecent, now.Add(-31*day))

	for i := range 7 {
		exec(`INSERT INTO platform_webhooks (received_at, body) VALUES ($1, '\x7b7d')`, now.Add(-time.Duration(28+i)*day))
	}
	exec(`INSERT INTO idempotency_keys (account_id, key, fingerprint, status_code, created_at) VALUES
		($1, 'old', '\x00', 200, $2), ($1, 'new', '\x00', 200, $3)`, acct.ID, now.Add(-49*time.Hour), now.Add(-time.Hour))

	for i, age := range []int{31, 32, 1} {
		exec(`INSERT INTO sandbox_messages (platform_message_id, sender, type, received_at, created_at) VALUES ($1, '1', 'text', $2, $2)`,
			fmt.Sprint("wamid.sbx", i), now.Add(-time.Duration(age)*day))
	}

	r := NewRetention(e.st, RetentionConfig{BatchSize: 2, Clock: func() time.Time { return now }, Logger: testLogger(t)})
	n, err := r.runOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n.Events != 6 || n.PlatformWebhooks != 4 || n.IdempotencyKeys != 1 || n.Attempts != 1 || n.SandboxMessages != 2 {
		t.Fatalf("deleted %+v", n)
	}

	exists := func(table, cond string, args ...any) bool {
		t.Helper()
		var ok bool
		if err := db.GetContext(ctx, &ok, `SELECT EXISTS (SELECT 1 FROM `+table+` WHERE `+cond+`)`, args...); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, id := range append(oldDone, quietOld) {
		if exists("events", "id = $1", id) || exists("webhook_deliveries", "event_id = $1", id) {
			t.Fatalf("event %s or its deliveries kept", id)
		}
	}
	for _, id := range []string{oldPending, oldRecent, recent, quietNew} {
		if !exists("events", "id = $1", id) {
			t.Fatalf("event %s deleted", id)
		}
	}
	if exists("webhook_attempts", "attempted_at < $1", now.Add(-30*day)) {
		t.Fatal("an attempt older than 30 days is kept")
	}
	if !exists("webhook_attempts", "attempted_at = $1", now.Add(-10*day)) {
		t.Fatal("a recent attempt was deleted")
	}
	if exists("platform_webhooks", "received_at < $1", now.Add(-30*day)) || !exists("platform_webhooks", "true") {
		t.Fatal("platform webhooks")
	}
	if exists("idempotency_keys", "key = 'old'") || !exists("idempotency_keys", "key = 'new'") {
		t.Fatal("idempotency keys")
	}

	// A second run finds nothing.
	if n, err := r.runOnce(ctx); err != nil || n.total() != 0 {
		t.Fatalf("second run: %+v %v", n, err)
	}
}

func TestRetentionServiceRunsAtStartAndStops(t *testing.T) {
	e := newWHEnv(t)
	ctx := context.Background()
	now := time.Now()
	if _, err := e.st.DB().ExecContext(ctx, `INSERT INTO platform_webhooks (received_at, body) VALUES ($1, '\x7b7d')`,
		now.Add(-31*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	r := NewRetention(e.st, RetentionConfig{Interval: time.Hour, Logger: testLogger(t)})
	r.Stop() // before Start: a no-op
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(ctx); err == nil {
		t.Fatal("started twice")
	}
	wait.For(t, func() bool {
		var n int
		e.st.DB().GetContext(ctx, &n, `SELECT count(*) FROM platform_webhooks`)
		return n == 0
	}, 10*time.Second, "the first run")
	r.Stop()
	r.Stop()
}
