package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// An unprepared pool's prepared statements (the store's hot path) run as SQL prepared
// statements of the server connection, their arguments inlined as literals: every kind of
// argument arrives as a text parameter would (bytea with NUL, backslash and invalid UTF-8,
// jsonb given as []byte, quotes and backslashes in text, numbers, booleans, times, NULL); the
// plan is made once per server connection and reused; and the statement still runs after the
// session's bookkeeping is lost: RESET ALL (the setting that records it goes), DISCARD ALL
// (both go), and a transaction that prepared it again and rolled back (the PREPARE stays, the
// setting is rolled back).
func TestUnpreparedPoolPreparesOnTheServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.OpenPool(ctx, storetest.DirectDSN(storetest.DSN(t)), store.PoolOptions{MaxConns: 1, Unprepared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const q = `SELECT $1::bytea AS b, ($2::jsonb)::text AS j, $3::text AS t, $4::bigint + 1 AS n, $5::float8 AS f,
		$6::boolean AS ok, $7::timestamptz AS at, $8::text IS NULL AS null_arg`
	st, err := db.PreparexContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	raw := []byte{'{', '\\', 0, 0xff, 'x', '"', '\''}
	doc := json.RawMessage(`{"a":"b\"c\\\\d","n":1}`)
	text := `it's a \back\slash`
	at := time.Date(2026, 3, 1, 12, 30, 45, 123456000, time.FixedZone("", -3*3600))
	run := func(step string) {
		t.Helper()
		var got struct {
			B    []byte    `db:"b"`
			J    string    `db:"j"`
			T    string    `db:"t"`
			N    int64     `db:"n"`
			F    float64   `db:"f"`
			OK   bool      `db:"ok"`
			At   time.Time `db:"at"`
			Null bool      `db:"null_arg"`
		}
		if err := st.GetContext(ctx, &got, raw, doc, text, int64(1)<<40, 2.5, true, at, nil); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !bytes.Equal(got.B, raw) || got.J != `{"a": "b\"c\\\\d", "n": 1}` || got.T != text || got.N != 1<<40+1 ||
			got.F != 2.5 || !got.OK || !got.At.Equal(at) || !got.Null {
			t.Fatalf("%s: got %+v", step, got)
		}
	}
	plans := func() (n int64) {
		t.Helper()
		if err := db.GetContext(ctx, &n, `SELECT coalesce(sum(generic_plans + custom_plans), 0) FROM pg_prepared_statements
			WHERE from_sql AND name LIKE 'gw\_%'`); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for range 8 {
		run("first runs")
	}
	if n := plans(); n != 8 {
		t.Fatalf("%d executions of the SQL prepared statement, want 8", n)
	}
	var generic int64
	if err := db.GetContext(ctx, &generic, `SELECT generic_plans FROM pg_prepared_statements WHERE from_sql AND name LIKE 'gw\_%'`); err != nil || generic == 0 {
		t.Fatalf("the statement was planned on every run (%d generic plans, %v)", generic, err)
	}

	if _, err := db.ExecContext(ctx, `RESET ALL`); err != nil {
		t.Fatal(err)
	}
	run("after RESET ALL")
	if _, err := db.ExecContext(ctx, `DISCARD ALL`); err != nil {
		t.Fatal(err)
	}
	run("after DISCARD ALL")
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `DEALLOCATE ALL; RESET ALL`); err != nil {
		t.Fatal(err)
	}
	var b []byte
	if err := tx.StmtxContext(ctx, st).QueryRowxContext(ctx, raw, doc, text, 1, 2.5, true, at, nil).Scan(&b, new(string), new(string),
		new(int64), new(float64), new(bool), new(time.Time), new(bool)); err != nil || !bytes.Equal(b, raw) {
		t.Fatalf("in a transaction: %q, %v", b, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	run("after a rolled-back transaction prepared it")
}

// A statement of an unprepared pool whose context ends while it runs returns the context's
// error without a cancel request (which can crash PgBouncer 1.18): the connection's socket is
// closed and the pool goes on with a new connection. A cancel request would have ended the
// statement before the call returned; here the server is still running it, and ends it when it
// finds its client gone.
func TestUnpreparedPoolInterruptsWithoutCancelRequest(t *testing.T) {
	t.Parallel()
	dsn := storetest.DirectDSN(storetest.DSN(t))
	db, err := store.OpenPool(context.Background(), dsn, store.PoolOptions{MaxConns: 1, Unprepared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var pid int
	if err := db.GetContext(context.Background(), &pid, `SELECT pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err = db.ExecContext(ctx, `SELECT pg_sleep(60)`); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("interrupted statement: %v, want the context's error", err)
	}
	admin, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var state string
	if err := admin.QueryRow(`SELECT state || ': ' || query FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&state); err != nil || state != "active: SELECT pg_sleep(60)" {
		t.Fatalf("the interrupted statement's backend: %q, %v (a cancel request would have ended the statement)", state, err)
	}
	admin.Exec(`SELECT pg_terminate_backend($1)`, pid)
	var one int
	if err := db.GetContext(context.Background(), &one, `SELECT 1`); err != nil || one != 1 {
		t.Fatalf("after the interruption: %d, %v", one, err)
	}
}

// Outside a transaction an unprepared pool sends the EXECUTE alone, and the CALL of
// prepare_once only when the server connection lacks the statement; inside a transaction the
// CALL goes first (a missing statement would abort the caller's transaction). What prepare_once
// leaves shows which was sent: the session setting that records the statement, which RESET ALL
// empties while the statement stays.
func TestUnpreparedPoolExecutesWithoutCallWhenPrepared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.OpenPool(ctx, storetest.DirectDSN(storetest.DSN(t)), store.PoolOptions{MaxConns: 1, Unprepared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.PreparexContext(ctx, `SELECT $1::bigint * 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	double := func(step string, q interface {
		QueryRowContext(context.Context, ...any) *sql.Row
	}) {
		t.Helper()
		var n int64
		if err := q.QueryRowContext(ctx, int64(21)).Scan(&n); err != nil || n != 42 {
			t.Fatalf("%s: %d, %v", step, n, err)
		}
	}
	double("first run", st)
	var name string
	if err := db.GetContext(ctx, &name, `SELECT name FROM pg_prepared_statements WHERE from_sql AND name LIKE 'gw\_%'`); err != nil {
		t.Fatal(err)
	}
	recorded := func(q interface {
		GetContext(context.Context, any, string, ...any) error
	}) bool {
		t.Helper()
		var v string
		if err := q.GetContext(ctx, &v, `SELECT coalesce(current_setting('gateway_prepared.' || $1, true), '')`, name); err != nil {
			t.Fatal(err)
		}
		return v == "prepared"
	}
	if !recorded(db) {
		t.Fatal("the first run did not prepare the statement through prepare_once")
	}

	if _, err := db.ExecContext(ctx, `RESET ALL`); err != nil {
		t.Fatal(err)
	}
	double("prepared, outside a transaction", st)
	if recorded(db) {
		t.Fatal("prepare_once was called although the server connection had the statement")
	}

	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	double("in a transaction", tx.StmtxContext(ctx, st))
	if !recorded(tx) {
		t.Fatal("inside a transaction the statement ran without prepare_once")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	if _, err := db.ExecContext(ctx, `DISCARD ALL`); err != nil {
		t.Fatal(err)
	}
	double("lacking the statement, outside a transaction", st)
	if !recorded(db) {
		t.Fatal("the missing statement was not prepared again through prepare_once")
	}
}
