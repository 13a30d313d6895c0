package store_test

import (
	"context"
	"database/sql"
	"strconv"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"gateway/store/storetest"
)

// Two transactions whose connections share a counter slot (every owned slot is taken, and
// their backend pids agree mod 32) and that change messages of two campaigns in opposite orders
// do not deadlock (migrations 000027 and 000028): the second waits for the first at its shared
// slot's lock, before it locks any counter row. Without that lock the counter trigger locks
// campaign A's rows in one and campaign B's in the other, then each waits for the other's, and
// PostgreSQL aborts one with "deadlock detected" after a second. The group commits (several
// messages per statement) met exactly this under load.
func TestCounterLocksNeverDeadlock(t *testing.T) {
	t.Parallel()
	f := newCounterFixture(t)
	db, ctx, account := f.db, context.Background(), f.account
	campA, campB := f.campaign(t), f.campaign(t)
	msg := func(campaign int64) int64 { return f.messages(t, campaign, 1)[0] }
	a1, a2, b1, b2 := msg(campA), msg(campA), msg(campB), msg(campB)

	// Every owned slot taken by another session, so the pair below shares slot 32 + pid mod 32.
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(ctx, `SELECT pg_advisory_lock(1668247157, i) FROM generate_series(0, 31) AS i`); err != nil {
		t.Fatal(err)
	}
	// Two connections in one shared slot: backend pids are handed out in sequence, so 33
	// connections hold a pair.
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
	var shared int
	if err := db.GetContext(ctx, &shared, `SELECT count(DISTINCT slot) FROM campaign_totals
		WHERE account_id = $1 AND delivered > 0 AND slot >= 32`, account); err != nil {
		t.Fatal(err)
	}
	if shared != 1 {
		t.Fatalf("the pair counted in %d shared slots, want one", shared)
	}
}

// Each transaction that counts owns a slot while it runs (migration 000036): it takes a free
// slot's transaction-level lock on its first count, keeps that slot for its later statements,
// and leaves neither the lock nor the setting behind when it commits or rolls back, so that a
// transaction pooler can hand the server connection to another client with nothing of ours on
// it. Two transactions open at once count in two different slots.
func TestCounterSlotsOwnedPerTransaction(t *testing.T) {
	t.Parallel()
	f := newCounterFixture(t)
	db, ctx, account := f.db, context.Background(), f.account
	ids := f.messages(t, f.campaign(t), 6)
	conn := func() *sql.Conn {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	type querier interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}
	deliver := func(q querier, id int64) {
		t.Helper()
		if _, err := q.ExecContext(ctx, `UPDATE messages SET status = 'delivered', delivered_at = now() WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}
	// slot is the remembered slot and the slot locks held by q's backend.
	slot := func(q querier) (string, []int) {
		t.Helper()
		var s string
		var held []int
		if err := q.QueryRowContext(ctx, `SELECT current_setting('gateway.counter_slot', true)`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		rows, err := q.QueryContext(ctx, `SELECT objid::int FROM pg_locks WHERE locktype = 'advisory'
			AND pid = pg_backend_pid() AND classid = 1668247157::oid AND objsubid = 2 ORDER BY objid`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var n int
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			held = append(held, n)
		}
		return s, held
	}

	// A count outside a transaction block leaves nothing on the session.
	a, b := conn(), conn()
	deliver(a, ids[0])
	if s, held := slot(a); s != "" || len(held) != 0 {
		t.Fatalf("after an autocommit count: setting %q, slot locks %v; want none", s, held)
	}

	// Two open transactions: distinct owned slots, each kept across statements.
	txA, err := a.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer txA.Rollback()
	txB, err := b.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer txB.Rollback()
	deliver(txA, ids[1])
	deliver(txB, ids[2])
	deliver(txA, ids[3])
	sa, heldA := slot(txA)
	sb, heldB := slot(txB)
	if sa == "" || sb == "" || sa == sb || len(heldA) != 1 || len(heldB) != 1 ||
		sa != strconv.Itoa(heldA[0]) || sb != strconv.Itoa(heldB[0]) || heldA[0] > 31 || heldB[0] > 31 {
		t.Fatalf("slots: a %q holding %v, b %q holding %v; want two distinct owned slots, each held", sa, heldA, sb, heldB)
	}
	if err := txA.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := txB.Rollback(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*sql.Conn{"committed": a, "rolled back": b} {
		if s, held := slot(c); s != "" || len(held) != 0 {
			t.Fatalf("after the %s transaction: setting %q, slot locks %v; want none", name, s, held)
		}
	}

	// b now finds a's slot free again.
	deliver(b, ids[4])
	var delivered int
	if err := db.GetContext(ctx, &delivered, `SELECT sum(delivered) FROM campaign_totals WHERE account_id = $1`, account); err != nil {
		t.Fatal(err)
	}
	if delivered != 4 {
		t.Fatalf("delivered counted %d, want 4 (the rolled-back count left out)", delivered)
	}
}

// counterFixture is a fresh database holding an account with one contact and conversation.
// Its connections close when they go idle, so none keeps behind a test's back a counter slot
// it claimed.
type counterFixture struct {
	db                     *sqlx.DB
	account, contact, conv int64
}

func newCounterFixture(t *testing.T) counterFixture {
	t.Helper()
	_, dsn := storetest.NewWithDSN(t)
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(64)
	db.SetMaxIdleConns(0)
	f := counterFixture{db: db}
	if err := db.Get(&f.account, `INSERT INTO accounts (name, email, join_code)
		VALUES ('counters', 'counters@example.com', gen_random_uuid()::text) RETURNING id`); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&f.contact, `INSERT INTO contacts (account_id, mobile, name) VALUES ($1, '15551234567', 'Ana') RETURNING id`,
		f.account); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&f.conv, `INSERT INTO conversations (account_id, contact_id) VALUES ($1, $2) RETURNING id`,
		f.account, f.contact); err != nil {
		t.Fatal(err)
	}
	return f
}

// campaign adds a campaign to the account.
func (f counterFixture) campaign(t *testing.T) int64 {
	t.Helper()
	var id int64
	if err := f.db.Get(&id, `INSERT INTO campaigns (account_id, name) VALUES ($1, gen_random_uuid()::text) RETURNING id`,
		f.account); err != nil {
		t.Fatal(err)
	}
	return id
}

// messages adds n sent messages of the campaign.
func (f counterFixture) messages(t *testing.T, campaign int64, n int) []int64 {
	t.Helper()
	var ids []int64
	if err := f.db.Select(&ids, `INSERT INTO messages (account_id, contact_id, conversation_id, campaign_id, direction,
			type, destination, template_name, status, sent_at)
		SELECT $1, $2, $3, $4, 'out', 'template', '15551234567', 't', 'sent', now() FROM generate_series(1, $5)
		RETURNING id`, f.account, f.contact, f.conv, campaign, n); err != nil {
		t.Fatal(err)
	}
	return ids
}
