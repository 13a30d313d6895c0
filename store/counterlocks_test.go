package store_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"gateway/store/storetest"
)

// Two transactions whose connections share a counter slot (backend pid mod 32) and that change
// messages of two campaigns in opposite orders do not deadlock (migration 000027): the second
// waits for the first at its slot's lock, before it locks any counter row. Without that lock
// the counter trigger locks campaign A's rows in one and campaign B's in the other, then each
// waits for the other's, and PostgreSQL aborts one with "deadlock detected" after a second.
// The group commits (several messages per statement) met exactly this under load.
func TestCounterLocksNeverDeadlock(t *testing.T) {
	t.Parallel()
	_, dsn := storetest.NewWithDSN(t)
	ctx := context.Background()
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(64)

	var account int64
	var campA, campB int64
	if err := db.GetContext(ctx, &account, `INSERT INTO accounts (name, email, join_code) VALUES ('locks', 'locks@example.com', 'locks-1') RETURNING id`); err != nil {
		t.Fatal(err)
	}
	var contact, conv int64
	if err := db.GetContext(ctx, &contact, `INSERT INTO contacts (account_id, mobile, name) VALUES ($1, '15551234567', 'Ana') RETURNING id`, account); err != nil {
		t.Fatal(err)
	}
	if err := db.GetContext(ctx, &conv, `INSERT INTO conversations (account_id, contact_id) VALUES ($1, $2) RETURNING id`, account, contact); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*int64{&campA, &campB} {
		if err := db.GetContext(ctx, c, `INSERT INTO campaigns (account_id, name) VALUES ($1, gen_random_uuid()::text) RETURNING id`, account); err != nil {
			t.Fatal(err)
		}
	}
	msg := func(campaign int64) int64 {
		var id int64
		if err := db.GetContext(ctx, &id, `INSERT INTO messages (account_id, contact_id, conversation_id, campaign_id, direction,
				type, destination, template_name, status, sent_at)
			VALUES ($1, $2, $3, $4, 'out', 'template', '15551234567', 't', 'sent', now()) RETURNING id`,
			account, contact, conv, campaign); err != nil {
			t.Fatal(err)
		}
		return id
	}
	a1, a2, b1, b2 := msg(campA), msg(campA), msg(campB), msg(campB)

	// Two connections in one slot: backend pids are handed out in sequence, so 33 connections
	// hold a pair.
	var x, y *sql.Conn
	bySlot := map[int]*sql.Conn{}
	for i := 0; i < 40 && y == nil; i++ {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var pid int
		if err := c.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		if other, ok := bySlot[pid%32]; ok {
			x, y = other, c
		}
		bySlot[pid%32] = c
	}
	if y == nil {
		t.Fatal("no two connections in one slot")
	}
	txX, err := x.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer txX.Rollback()
	txY, err := y.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer txY.Rollback()
	exec := func(tx *sql.Tx, id int64) error {
		_, err := tx.ExecContext(ctx, `UPDATE messages SET status = 'delivered', delivered_at = now() WHERE id = $1`, id)
		return err
	}
	if err := exec(txX, a1); err != nil { // X: campaign A's rows of the slot
		t.Fatal(err)
	}
	yDone := make(chan error, 1)
	go func() {
		// Y: campaign B's rows, then A's. With the slot lock it waits at once, for X's commit.
		if err := exec(txY, b1); err != nil {
			yDone <- err
			return
		}
		if err := exec(txY, a2); err != nil {
			yDone <- err
			return
		}
		yDone <- txY.Commit()
	}()
	time.Sleep(200 * time.Millisecond)    // let Y take what it can
	if err := exec(txX, b2); err != nil { // X: campaign B's rows
		t.Fatalf("X: %v", err)
	}
	if err := txX.Commit(); err != nil {
		t.Fatalf("X commit: %v", err)
	}
	if err := <-yDone; err != nil {
		t.Fatalf("Y: %v", err)
	}
	var delivered int
	if err := db.GetContext(ctx, &delivered, `SELECT sum(delivered) FROM campaign_totals WHERE account_id = $1`, account); err != nil {
		t.Fatal(err)
	}
	if delivered != 4 {
		t.Fatalf("delivered counted %d times, want 4", delivered)
	}
}
