package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

// An unprepared pool (PoolOptions.Unprepared, for a transaction pooler) leaves no
// protocol-level named prepared statement on its connection, where a prepared pool leaves one
// per hot statement: through PgBouncer in transaction mode the next transaction may run on
// another server connection, which never saw it ("prepared statement does not exist"). Its hot
// statements are SQL prepared statements instead (from_sql), which each use checks for on the
// server connection it runs on (pool_sqlprepare.go).
func TestUnpreparedPoolMakesNoNamedStatements(t *testing.T) {
	t.Parallel()
	dsn := storetest.DirectDSN(storetest.DSN(t))
	ctx := context.Background()
	for _, unprepared := range []bool{false, true} {
		db, err := store.OpenPool(ctx, dsn, store.PoolOptions{MaxConns: 1, Unprepared: unprepared})
		if err != nil {
			t.Fatal(err)
		}
		s, err := store.New(db, storetest.TestKey)
		if err != nil {
			t.Fatal(err)
		}
		a, err := s.CreateAccount(ctx, "acme", "acme@example.com", "join-"+map[bool]string{false: "p", true: "u"}[unprepared])
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if got, err := s.AccountByID(ctx, a.ID); err != nil || got.ID != a.ID {
				t.Fatalf("unprepared=%t: account %+v, %v", unprepared, got, err)
			}
		}
		var named, fromSQL int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE NOT from_sql), count(*) FILTER (WHERE from_sql AND name LIKE 'gw\_%')
			FROM pg_prepared_statements`).Scan(&named, &fromSQL); err != nil {
			t.Fatal(err)
		}
		s.Close()
		db.Close()
		if unprepared && (named != 0 || fromSQL == 0) {
			t.Fatalf("an unprepared pool left %d protocol-level named prepared statements and %d SQL ones (want 0 and some)", named, fromSQL)
		}
		if !unprepared && named == 0 {
			t.Fatal("a prepared pool left none: the check sees nothing")
		}
	}
}

// In an unprepared pool []byte parameters travel in one round trip with the statement, which
// lib/pq does in binary format: a bytea keeps every byte (backslashes, NUL, invalid UTF-8), and
// a jsonb or text parameter given as []byte is still read as text (jsonb's binary form would
// need a version byte: "unsupported jsonb version number").
func TestUnpreparedPoolBytesParameters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.OpenPool(ctx, storetest.DSN(t), store.PoolOptions{MaxConns: 2, Unprepared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raw := []byte{'{', '\\', 0, 0xff, 'x', '"'}
	doc := json.RawMessage(`{"a":"b\"c","n":1}`)
	for range 2 { // described once, then from the cache
		var got struct {
			B []byte `db:"b"`
			J string `db:"j"`
			T string `db:"t"`
		}
		if err := db.GetContext(ctx, &got, `SELECT $1::bytea AS b, ($2::jsonb)::text AS j, $3::text AS t`,
			raw, doc, []byte("plain")); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.B, raw) || got.J != `{"a": "b\"c", "n": 1}` || got.T != "plain" {
			t.Fatalf("got bytea %q, jsonb %s, text %q", got.B, got.J, got.T)
		}
	}
	var named int
	if err := db.GetContext(ctx, &named, `SELECT count(*) FROM pg_prepared_statements WHERE NOT from_sql`); err != nil || named != 0 {
		t.Fatalf("%d named statements left (%v)", named, err)
	}
}
