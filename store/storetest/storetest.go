// Package storetest gives tests a real, freshly migrated PostgreSQL database: the migrations are
// applied once per run to a template database (named by a hash of the migration files), and
// each test gets its own clone, dropped when the test ends.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"gateway/migrations"
	"gateway/store"
)

// AdminDSN is the maintenance database tests connect to: TEST_DATABASE_URL, else DATABASE_URL,
// else the local default.
func AdminDSN() string {
	for _, k := range []string{"TEST_DATABASE_URL", "DATABASE_URL"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// PoolerDSN is TEST_POOLER_URL: a transaction pooler (PgBouncer in transaction mode) in front
// of the server of AdminDSN, which reaches every database of it by name; empty when the tests
// talk to the server directly. With it, DSN answers databases through the pooler and New opens
// pools that make no named prepared statement; databases are still created, migrated and
// dropped on the direct connection, and LISTEN uses DirectDSN.
func PoolerDSN() string { return os.Getenv("TEST_POOLER_URL") }

// Pooled reports whether the tests run through a transaction pooler (TEST_POOLER_URL).
func Pooled() bool { return PoolerDSN() != "" }

// DirectDSN returns dsn (a DSN of DSN) on the direct connection: the same database on the
// server of AdminDSN. Without a pooler it is dsn.
func DirectDSN(dsn string) string {
	if !Pooled() {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		panic(err)
	}
	return withDB(AdminDSN(), strings.TrimPrefix(u.Path, "/"))
}

// withDB returns dsn pointing at database name.
func withDB(dsn, name string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + name
	return u.String()
}

func templateName() string {
	h := sha256.New()
	var names []string
	fs.WalkDir(migrations.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	sort.Strings(names)
	for _, n := range names {
		b, _ := fs.ReadFile(migrations.FS, n)
		h.Write([]byte(n))
		h.Write(b)
	}
	return "gw_tmpl_" + hex.EncodeToString(h.Sum(nil))[:16]
}

// ensureTemplate creates and migrates the template database once; concurrent test binaries
// serialise on an advisory lock.
func ensureTemplate(ctx context.Context, admin *sqlx.DB, adminDSN string) (string, error) {
	name := templateName()
	conn, err := admin.Connx(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(8675309)`); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(8675309)`)
	var exists bool
	if err := conn.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	build := name + "_build"
	conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+build+` WITH (FORCE)`)
	if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+build); err != nil {
		return "", err
	}
	m, err := store.NewMigrator(withDB(adminDSN, build), migrations.FS)
	if err != nil {
		return "", err
	}
	if err := m.Up(); err != nil {
		m.Close()
		return "", fmt.Errorf("migrate template: %w", err)
	}
	m.Close()
	if _, err := conn.ExecContext(ctx, `ALTER DATABASE `+build+` RENAME TO `+name); err != nil {
		return "", err
	}
	dropStaleTemplates(ctx, conn, name)
	return name, nil
}

// dropStaleTemplates drops the template databases of other migration sets, so that they do
// not pile up as migrations change. One that a test binary of another checkout is cloning
// right now stays (DROP without FORCE fails, and that failure is ignored); a checkout that
// needs a dropped one builds it again.
func dropStaleTemplates(ctx context.Context, conn *sqlx.Conn, keep string) {
	var names []string
	if err := conn.SelectContext(ctx, &names, `SELECT datname FROM pg_database
		WHERE datname LIKE 'gw\_tmpl\_%' AND datname NOT LIKE '%\_build' AND datname <> $1`, keep); err != nil {
		return
	}
	for _, n := range names {
		conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+pq.QuoteIdentifier(n))
	}
}

// DSN returns the connection string of a fresh migrated database for this test, dropped at
// cleanup. The test fails at once when PostgreSQL does not answer (run `make test`, which
// starts it).
func DSN(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	adminDSN := AdminDSN()
	admin, err := sqlx.Open("postgres", adminDSN)
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	defer admin.Close()
	tmpl, err := ensureTemplate(ctx, admin, adminDSN)
	if err != nil {
		t.Fatalf("storetest: template database (is PostgreSQL running? `make test` starts it): %v", err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "gw_test_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name+` TEMPLATE `+tmpl); err != nil {
		t.Fatalf("storetest: clone template: %v", err)
	}
	t.Cleanup(func() {
		a, err := sqlx.Open("postgres", adminDSN)
		if err != nil {
			return
		}
		defer a.Close()
		a.ExecContext(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	})
	if p := PoolerDSN(); p != "" {
		return withDB(p, name)
	}
	return withDB(adminDSN, name)
}

// TestKey is the AES-256 key tests use for secrets at rest.
var TestKey = []byte("0123456789abcdef0123456789abcdef")

// New returns a Store over a fresh database, closed at cleanup.
func New(t testing.TB) *store.Store {
	t.Helper()
	s, _ := NewWithDSN(t)
	return s
}

// NewWithDSN is New that also returns the database's direct DSN (for LISTEN connections).
func NewWithDSN(t testing.TB) (*store.Store, string) {
	t.Helper()
	dsn := DSN(t)
	o := store.PoolOptions{MaxConns: 16, Unprepared: Pooled()}
	if o.Unprepared {
		o.DescribeDSN = DirectDSN(dsn)
	}
	db, err := store.OpenPool(context.Background(), dsn, o)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.New(db, TestKey)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); db.Close() })
	return s, DirectDSN(dsn)
}

// History is the outbound messages' status history as rows (account_id, message_id, status,
// occurred_at), one per status time a message keeps, for tests to select from:
// `SELECT … FROM (` + History + `) h WHERE …`.
const History = `SELECT m.account_id, m.id AS message_id, s.status, s.at AS occurred_at
	FROM messages m CROSS JOIN LATERAL (VALUES ('sent', m.sent_at), ('delivered', m.delivered_at),
		('read', m.read_at), ('failed', m.failed_at)) s (status, at)
	WHERE m.direction = 'out' AND s.at IS NOT NULL`
