package dashboard_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"gateway/migrations"
	"gateway/server"
	"gateway/server/dashboard"
	"gateway/server/web"
	"gateway/store"
	"gateway/store/storetest"
)

// benchDB is the seeded database the benchmark keeps for the next run (drop it to reseed).
const benchDB = "gw_bench_dashboard"

// benchSession is the session id of the seeded owner.
const benchSession = "bench-session-id-0000000000000000000000000"

// seedBench makes benchDB: one workspace with two endpoints, 250,000 events and deliveries and
// 1,000,000 attempts (each delivery failed three times, then succeeded), unless it is there.
func seedBench(b *testing.B) string {
	b.Helper()
	admin, err := sqlx.Open("postgres", storetest.AdminDSN())
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	u, _ := url.Parse(storetest.AdminDSN())
	u.Path = "/" + benchDB
	dsn := u.String()
	want, _ := store.LatestVersion(migrations.FS)
	var exists bool
	admin.Get(&exists, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, benchDB)
	if exists {
		db, err := sqlx.Open("postgres", dsn)
		if err == nil {
			var n int
			var v uint
			err = db.Get(&v, `SELECT version FROM schema_migrations`)
			if err == nil {
				err = db.Get(&n, `SELECT count(*) FROM webhook_attempts WHERE account_id = 1`)
			}
			db.Close()
			if err == nil && n == 1_000_000 && v == want {
				return dsn
			}
		}
		admin.MustExec(`DROP DATABASE ` + benchDB + ` WITH (FORCE)`)
	}
	b.Logf("seeding %s (kept for the next run)", benchDB)
	admin.MustExec(`CREATE DATABASE ` + benchDB)
	m, err := store.NewMigrator(dsn, migrations.FS)
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Up(); err != nil {
		b.Fatal(err)
	}
	m.Close()
	db := sqlx.MustOpen("postgres", dsn)
	defer db.Close()
	hash, _ := dashboard.HashPassword("bench password 123")
	sum := sha256.Sum256([]byte(benchSession))
	tx := db.MustBegin()
	tx.MustExec(`SET LOCAL session_replication_role = replica`)
	tx.MustExec(`INSERT INTO accounts (id, name, email, join_code) VALUES (1, 'Bench', 'bench@example.com', 'bench-0001')`)
	tx.MustExec(`SELECT setval('accounts_id_seq', 1)`)
	tx.MustExec(`INSERT INTO users (id, email, password_hash) VALUES (1, 'bench@example.com', $1)`, hash)
	tx.MustExec(`INSERT INTO memberships (account_id, user_id, role) VALUES (1, 1, 'owner')`)
	tx.MustExec(`INSERT INTO sessions (id_hash, account_id, user_id) VALUES ($1, 1, 1)`, sum[:])
	tx.MustExec(`INSERT INTO webhook_endpoints (id, account_id, url, secret) VALUES
		(1, 1, 'https://hooks.example.com/a', '\x00'), (2, 1, 'https://hooks.example.com/b', '\x00')`)
	tx.MustExec(`INSERT INTO events (id, account_id, type, data, created_at)
		SELECT md5('e' || g)::uuid, 1, (ARRAY['message.sent', 'message.status', 'message.received', 'contact.created'])[1 + g % 4],
			'{"message_id": 1}', now() - (250000 - g) * interval '10 seconds'
		FROM generate_series(1, 250000) g`)
	tx.MustExec(`INSERT INTO webhook_deliveries (id, account_id, event_id, endpoint_id, status, attempts, next_attempt_at, last_status_code, created_at, completed_at)
		SELECT md5('d' || g)::uuid, 1, md5('e' || g)::uuid, 1 + g % 2, 'succeeded', 4, now(), 200,
			now() - (250000 - g) * interval '10 seconds', now() - (250000 - g) * interval '10 seconds' + interval '4 seconds'
		FROM generate_series(1, 250000) g`)
	tx.MustExec(`INSERT INTO webhook_attempts (account_id, delivery_id, attempt, attempted_at, status_code, latency_ms, error, response_body)
		SELECT 1, md5('d' || g)::uuid, a, now() - (250000 - g) * interval '10 seconds' + a * interval '1 second',
			CASE WHEN a < 4 THEN 500 ELSE 200 END, 20 + g % 50,
			CASE WHEN a < 4 THEN 'HTTP 500 Internal Server Error' ELSE '' END, '{"ok": true}'
		FROM generate_series(1, 250000) g, generate_series(1, 4) a`)
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	db.MustExec(`VACUUM ANALYZE`)
	return dsn
}

// BenchmarkDashboardPages serves the request log (first page, an older page by keyset, and
// filtered) and the overview, webhooks and attempt pages over a workspace with 1,000,000
// delivery attempts, through the whole HTTP stack, and reports each page's median latency.
func BenchmarkDashboardPages(b *testing.B) {
	dsn := seedBench(b)
	db, err := store.Open(context.Background(), dsn, 4)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.MustExec(`UPDATE sessions SET last_seen_at = now(), created_at = now()`)
	// Endpoint 2 has been failing for an hour: its health reads both bounded ranges.
	db.MustExec(`UPDATE webhook_endpoints SET failing_since = now() - interval '1 hour', created_at = now() - interval '60 days' WHERE id = 2`)
	st, err := store.New(db, make([]byte, 32))
	if err != nil {
		b.Fatal(err)
	}
	v, _ := store.LatestVersion(migrations.FS)
	srv, err := server.New(server.Options{SchemaVersion: v},
		server.Deps{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := web.Mount(srv, web.Config{Dashboard: dashboard.Options{Development: true}, Store: st}); err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	var mid struct {
		At time.Time `db:"attempted_at"`
		ID int64     `db:"id"`
	}
	db.Get(&mid, `SELECT attempted_at, id FROM webhook_attempts ORDER BY attempted_at DESC, id DESC OFFSET 500000 LIMIT 1`)
	pages := []struct{ name, path string }{
		{"overview", "/dashboard/"},
		{"request-log", "/dashboard/request-log"},
		{"request-log-older", fmt.Sprintf("/dashboard/request-log?before=%d_%d", mid.At.UnixMicro(), mid.ID)},
		{"request-log-endpoint", "/dashboard/request-log?endpoint=2"},
		{"request-log-event", "/dashboard/request-log?event=contact.created"},
		{"request-log-failed", "/dashboard/request-log?outcome=failed"},
		{"attempt", fmt.Sprintf("/dashboard/request-log/%d", mid.ID)},
		{"webhooks", "/dashboard/webhooks"},
	}
	client := hs.Client()
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				req, _ := http.NewRequest("GET", hs.URL+p.path, nil)
				req.AddCookie(&http.Cookie{Name: "session", Value: benchSession})
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				took = append(took, time.Since(t0))
				if resp.StatusCode != 200 {
					b.Fatalf("%s: %d", p.path, resp.StatusCode)
				}
			}
			sort.Slice(took, func(i, k int) bool { return took[i] < took[k] })
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms/median")
		})
	}
}
