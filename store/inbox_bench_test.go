package store_test

// BenchmarkInbox reads the team inbox of one workspace with 100,000 conversations and about
// 10,000,000 messages (database gw_bench_inbox, seeded once in SQL by seedInbox and reused
// while the migrations and the seed are the same): each view's first page of 50, a deep page
// by keyset, searches by number, name and username, the unread badge, an idle poll of the live feed, and a 500-message thread (ThreadMessages:
// the newest 500 messages of one conversation). It reports each read's
// median and 99th percentile (p50_ms, p99_ms) and, with -v, the plan of every statement
// (auto_explain: EXPLAIN (ANALYZE, BUFFERS) as it ran). The first run seeds for minutes, so
// it runs only when INBOX_BENCH is set (`make bench-inbox`, which also times the pages):
//
//	INBOX_BENCH=1 go test -run '^$' -bench Inbox -benchtime 50x -timeout 60m -v ./store/

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"gateway/migrations"
	"gateway/store"
	"gateway/store/storetest"
)

const benchInboxDB = "gw_bench_inbox"

// Sizes of the seeded workspace: conversations, messages per conversation, and the messages of
// the one long thread.
const (
	benchInboxConversations = 100_000
	benchInboxPerThread     = 100
	benchInboxLongThread    = 500
)

func BenchmarkInbox(b *testing.B) {
	if os.Getenv("INBOX_BENCH") == "" {
		b.Skip("seeds 10M messages: set INBOX_BENCH (make bench-inbox)")
	}
	ctx := context.Background()
	dsn, acc := inboxBenchDB(b)
	var plans []string
	db, err := storetest.ExplainingDB(dsn, func(p string) { plans = append(plans, p) })
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	st, err := store.New(db, storetest.TestKey)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	// The rounds are timed without auto_explain, on a pool of their own.
	plainDB, err := sqlx.Open("postgres", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer plainDB.Close()
	plain, err := store.New(plainDB, storetest.TestKey)
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close()
	var mate, longThread int64
	if err := db.GetContext(ctx, &mate, `SELECT min(user_id) FROM memberships WHERE account_id = $1`, acc); err != nil {
		b.Fatal(err)
	}
	if err := db.GetContext(ctx, &longThread, `SELECT contact_id FROM conversations WHERE account_id = $1 ORDER BY id LIMIT 1`, acc); err != nil {
		b.Fatal(err)
	}
	first, err := st.ListInbox(ctx, acc, store.InboxFilter{View: store.InboxAll, Limit: 50})
	if err != nil || len(first.Rows) != 50 {
		b.Fatalf("first page: %d rows %v", len(first.Rows), err)
	}
	var deep store.InboxCursor
	if err := db.QueryRowContext(ctx, `SELECT last_activity_at, id FROM conversations WHERE account_id = $1
		AND last_activity_at IS NOT NULL AND resolved_at IS NULL ORDER BY last_activity_at DESC, id DESC OFFSET 50000 LIMIT 1`,
		acc).Scan(&deep.At, &deep.ID); err != nil {
		b.Fatal(err)
	}
	feed, err := st.InboxChanges(ctx, acc, store.InboxChangeCursor{})
	if err != nil {
		b.Fatal(err)
	}
	list := func(f store.InboxFilter) func(*store.Store, *sqlx.DB) error {
		return func(st *store.Store, _ *sqlx.DB) error {
			p, err := st.ListInbox(ctx, acc, f)
			if err == nil && len(p.Rows) == 0 {
				err = fmt.Errorf("%+v: no rows", f)
			}
			return err
		}
	}
	reads := []struct {
		name string
		read func(*store.Store, *sqlx.DB) error
	}{
		{"inbox/all", list(store.InboxFilter{View: store.InboxAll})},
		{"inbox/mine", list(store.InboxFilter{View: store.InboxMine, UserID: mate})},
		{"inbox/unassigned", list(store.InboxFilter{View: store.InboxUnassigned})},
		{"inbox/window-open", list(store.InboxFilter{View: store.InboxWindowOpen})},
		{"inbox/resolved", list(store.InboxFilter{View: store.InboxResolved})},
		{"inbox/all-page-1000", list(store.InboxFilter{View: store.InboxAll, Before: deep})},
		{"inbox/search-number", list(store.InboxFilter{View: store.InboxAll, Search: "1555004242"})},
		// Names: a surname in a tenth of the conversations, one in 4.5 %, a term of 11 contacts,
		// a short one in 1.5 % of them, one of every contact, a username.
		{"inbox/search-name-common", list(store.InboxFilter{View: store.InboxAll, Search: "okafor"})},
		{"inbox/search-name-medium", list(store.InboxFilter{View: store.InboxAll, Search: "silva"})},
		{"inbox/search-name-rare", list(store.InboxFilter{View: store.InboxAll, Search: "customer 4242"})},
		{"inbox/search-name-short", list(store.InboxFilter{View: store.InboxAll, Search: "5 o"})},
		{"inbox/search-name-all", list(store.InboxFilter{View: store.InboxAll, Search: "customer"})},
		{"inbox/search-username", list(store.InboxFilter{View: store.InboxAll, Search: "fan.4242"})},
		{"inbox/resolved-search-common", list(store.InboxFilter{View: store.InboxResolved, Search: "okafor"})},
		{"inbox/unread-badge", func(st *store.Store, _ *sqlx.DB) error { _, err := st.InboxUnreadTotal(ctx, acc); return err }},
		{"feed/idle-poll", func(st *store.Store, _ *sqlx.DB) error { _, err := st.InboxChanges(ctx, acc, feed.Next); return err }},
		{"thread/500", func(st *store.Store, _ *sqlx.DB) error {
			p, err := st.ThreadMessages(ctx, acc, longThread, nil, benchInboxLongThread)
			if err == nil && len(p.Messages) != benchInboxLongThread {
				err = fmt.Errorf("thread of %d messages", len(p.Messages))
			}
			return err
		}},
	}
	for _, r := range reads {
		b.Run(r.name, func(b *testing.B) {
			if err := r.read(st, db); err != nil { // warm, and its plan
				b.Fatal(err)
			}
			if err := r.read(plain, plainDB); err != nil { // warm the timed pool
				b.Fatal(err)
			}
			if testing.Verbose() && len(plans) > 0 {
				b.Logf("plan:\n%s", strings.Join(plans, "\n"))
			}
			plans = plans[:0]
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if err := r.read(plain, plainDB); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(start))
			}
			b.StopTimer()
			plans = plans[:0]
			reportPercentiles(b, times)
		})
	}
}

// reportPercentiles reports the median and the 99th percentile of times in milliseconds.
func reportPercentiles(b *testing.B, times []time.Duration) {
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(times[len(times)/2]), "p50_ms")
	b.ReportMetric(ms(times[min(len(times)-1, len(times)*99/100)]), "p99_ms")
}

// inboxBenchDB returns the DSN of gw_bench_inbox and its workspace, seeding it when it is
// missing or was seeded from other migrations.
func inboxBenchDB(b *testing.B) (string, int64) {
	b.Helper()
	ctx := context.Background()
	adminDSN := storetest.AdminDSN()
	admin, err := sqlx.Open("postgres", adminDSN)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	hash := inboxMigrationsHash(b)
	dsn := strings.Replace(adminDSN, "/postgres?", "/"+benchInboxDB+"?", 1)
	var exists bool
	if err := admin.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, benchInboxDB); err != nil {
		b.Fatal(err)
	}
	if exists {
		db, err := sqlx.Open("postgres", dsn)
		if err != nil {
			b.Fatal(err)
		}
		var seed struct {
			Hash string `db:"hash"`
			Acc  int64  `db:"account_id"`
		}
		err = db.GetContext(ctx, &seed, `SELECT hash, account_id FROM bench_seed`)
		db.Close()
		if err == nil && seed.Hash == hash {
			b.Logf("reusing seeded database %s", benchInboxDB)
			return dsn, seed.Acc
		}
		b.Logf("%s is not seeded from these migrations: reseeding", benchInboxDB)
		if _, err := admin.ExecContext(ctx, `DROP DATABASE `+benchInboxDB+` WITH (FORCE)`); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+benchInboxDB); err != nil {
		b.Fatal(err)
	}
	m, err := store.NewMigrator(dsn, migrations.FS)
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Up(); err != nil {
		m.Close()
		b.Fatal(err)
	}
	m.Close()
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	acc := seedInbox(b, db, hash)
	b.Logf("seeded %s in %s", benchInboxDB, time.Since(start).Round(time.Second))
	return dsn, acc
}

// inboxMigrationsHash is a hash of every migration file and of the seed's version: a seeded
// database is reused only while it is the same.
func inboxMigrationsHash(b *testing.B) string {
	h := sha256.New()
	h.Write([]byte(seedInboxVersion))
	err := fs.WalkDir(migrations.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(migrations.FS, p)
		h.Write([]byte(p))
		h.Write(data)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
