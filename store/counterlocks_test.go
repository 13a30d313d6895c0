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

// Each connection counts in a slot of its own (migration 000028): claimed on its first count
// with a session lock, kept for the session, and kept too when the claiming transaction rolls
// back (the setting goes, the lock stays, and the next count finds the lock).
func TestCounterSlotsOwnedPerSession(t *testing.T) {
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
	deliver := func(c *sql.Conn, id int64) {
		t.Helper()
		if _, err := c.ExecContext(ctx, `UPDATE messages SET status = 'delivered', delivered_at = now() WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}
	// slot is the connection's remembered slot and the claims it holds.
	slot := func(c *sql.Conn) (string, []int) {
		t.Helper()
		var s string
		var held []int
		if err := c.QueryRowContext(ctx, `SELECT current_setting('gateway.counter_slot', true)`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		rows, err := c.QueryContext(ctx, `SELECT objid::int FROM pg_locks WHERE locktype = 'advisory'
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

	a, b, c := conn(), conn(), conn()
	deliver(a, ids[0])
	deliver(b, ids[1])
	deliver(a, ids[2])
	sa, heldA := slot(a)
	sb, heldB := slot(b)
	if sa == "" || sb == "" || sa == sb || len(heldA) != 1 || len(heldB) != 1 ||
		sa != strconv.Itoa(heldA[0]) || sb != strconv.Itoa(heldB[0]) || heldA[0] > 31 || heldB[0] > 31 {
		t.Fatalf("slots: a %q holding %v, b %q holding %v; want two distinct owned slots, each held", sa, heldA, sb, heldB)
	}

	// c claims in a transaction that rolls back; c's next count keeps that claim.
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE messages SET status = 'delivered', delivered_at = now() WHERE id = $1`, ids[3]); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	s, held := slot(c)
	if s != "" || len(held) != 1 {
		t.Fatalf("after the rollback: setting %q, claims %v; want no setting and one claim", s, held)
	}
	claimed := held[0]
	// a gives its slot up (lower than c's, claimed before it); a new claim would take it.
	if _, err := a.ExecContext(ctx, `SELECT pg_advisory_unlock(1668247157, $1)`, heldA[0]); err != nil {
		t.Fatal(err)
	}
	deliver(c, ids[4])
	s, held = slot(c)
	if s != strconv.Itoa(claimed) || len(held) != 1 || held[0] != claimed {
		t.Fatalf("after the next count: setting %q, claims %v; want slot %d kept", s, held, claimed)
	}

	var perSlot []struct {
		Slot      int `db:"slot"`
		Delivered int `db:"delivered"`
	}
	if err := db.SelectContext(ctx, &perSlot, `SELECT slot, sum(delivered)::int AS delivered FROM campaign_totals
		WHERE account_id = $1 AND delivered <> 0 GROUP BY slot ORDER BY slot`, account); err != nil {
		t.Fatal(err)
	}
	got := map[int]int{}
	for _, r := range perSlot {
		got[r.Slot] = r.Delivered
	}
	want := map[int]int{heldA[0]: 2, heldB[0]: 1, claimed: 1}
	if len(got) != len(want) || got[heldA[0]] != 2 || got[heldB[0]] != 1 || got[claimed] != 1 {
		t.Fatalf("delivered per slot %v, want %v", got, want)
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
