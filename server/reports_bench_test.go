package server_test

// BenchmarkReports measures the message listing and the campaign reports on one workspace with
// 1,000,000 contacts and 1,000,000 messages, through the whole stack (loopback HTTP, key,
// validation, handler, store), one request at a time, and reports each request kind's median
// and 99th percentile (p50_ms, p99_ms). BenchmarkReportsPages prints, with -v, the plan of
// every statement these reports run (auto_explain, prepared statements included).
//
// Data: account "Reports Big": 1,000,000 contacts; 200,000 of them have a conversation and
// together 1,000,000 outbound messages over the last 180 days (5 per contact on average),
// statuses 63 % read, 30 % delivered, 5 % sent, 2 % failed (three platform errors; each status
// with its time column: sent_at, delivered_at, read_at, failed_at; 0.1 % still pending, most
// of them of unknown outcome), six
// templates, 5 % sent from the panel; half in the standing API campaign, 30 % in "Black
// Friday", the rest over 18 smaller campaigns. One account "Reports Small" with a few rows
// shows the tenant filter. Seeded by INSERT ... SELECT generate_series with triggers off and
// the indexes built afterwards, the counters computed from the rows (as the migration's
// backfill does), into the persistent database gw_bench_reports, reused while the migrations
// are unchanged (their hash is kept in the database) and reseeded otherwise:
//
//	go test -run '^$' -bench Reports -benchtime 200x -v ./server/
//	psql -h 127.0.0.1 -U postgres -c 'DROP DATABASE gw_bench_reports'   # to reseed by hand

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"gateway/migrations"
	"gateway/server"
	"gateway/server/domain"
	"gateway/store"
	"gateway/store/storetest"
)

const benchReportsDB = "gw_bench_reports"

func migrationsHash() string {
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
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func withDatabase(dsn, name string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + name
	return u.String()
}

// reportsBenchStore opens gw_bench_reports, creating, migrating and seeding it when it is
// missing or was built from other migrations; it returns the big account's id.
func reportsBenchStore(b *testing.B) (*store.Store, int64) {
	b.Helper()
	ctx := context.Background()
	adminDSN := storetest.AdminDSN()
	admin, err := sqlx.Open("postgres", adminDSN)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	hash := migrationsHash()
	dsn := withDatabase(adminDSN, benchReportsDB)
	var exists bool
	if err := admin.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, benchReportsDB); err != nil {
		b.Fatal(err)
	}
	if exists {
		db, err := sqlx.Open("postgres", dsn)
		if err != nil {
			b.Fatal(err)
		}
		var got string
		db.GetContext(ctx, &got, `SELECT hash FROM bench_seed`)
		db.Close()
		if got != hash {
			b.Logf("%s was seeded from other migrations: reseeding", benchReportsDB)
			if _, err := admin.ExecContext(ctx, `DROP DATABASE `+benchReportsDB+` WITH (FORCE)`); err != nil {
				b.Fatal(err)
			}
			exists = false
		}
	}
	if !exists {
		if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+benchReportsDB); err != nil {
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
	}
	db, err := store.Open(ctx, dsn, 16)
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.New(db, storetest.TestKey)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close(); db.Close() })
	if !exists {
		start := time.Now()
		seedReports(b, db, hash)
		b.Logf("seeded %s in %s", benchReportsDB, time.Since(start).Round(time.Second))
	} else {
		b.Logf("reusing seeded database %s", benchReportsDB)
	}
	var big int64
	if err := db.GetContext(ctx, &big, `SELECT id FROM accounts WHERE name = 'Reports Big'`); err != nil {
		b.Fatal(err)
	}
	return st, big
}

func seedReports(b *testing.B, db *sqlx.DB, hash string) {
	b.Helper()
	ctx := context.Background()
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) {
		b.Helper()
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			b.Fatalf("%v\n%s", err, q)
		}
	}
	exec(`SET LOCAL maintenance_work_mem = '512MB'`)
	exec(`SET LOCAL synchronous_commit = off`)
	exec(`SET LOCAL session_replication_role = replica`) // no triggers, no FK checks: rows valid by construction
	var indexes []string
	if err := tx.SelectContext(ctx, &indexes, `SELECT indexdef FROM pg_indexes
		WHERE schemaname = current_schema() AND tablename IN ('messages', 'contacts', 'conversations')
		AND indexname NOT IN (SELECT conname FROM pg_constraint)`); err != nil {
		b.Fatal(err)
	}
	for _, d := range indexes {
		name := strings.Fields(strings.TrimPrefix(strings.TrimPrefix(d, "CREATE UNIQUE INDEX "), "CREATE INDEX "))[0]
		exec(`DROP INDEX ` + name)
	}
	exec(`SELECT setseed(0.1111)`)
	exec(`INSERT INTO accounts (name, email, join_code) VALUES ('Reports Big', 'big@bench.example', 'bench-big'),
		('Reports Small', 'small@bench.example', 'bench-small')`)
	exec(`INSERT INTO campaigns (account_id, name, created_at)
		SELECT a.id, n, now() - interval '181 days'
		FROM accounts a, unnest(ARRAY['API', 'Black Friday'] || ARRAY(SELECT 'Campaign ' || i FROM generate_series(1, 18) i)) n
		WHERE a.name LIKE 'Reports %'`)
	exec(`INSERT INTO contacts (account_id, mobile, name, created_at)
		SELECT a.id, (5511000000000 + (g::bigint * 2654435761) % 1000000000)::text, 'Contact ' || g, now() - random() * interval '730 days'
		FROM accounts a CROSS JOIN LATERAL generate_series(1, CASE WHEN a.name = 'Reports Big' THEN 1000000 ELSE 100 END) g`)
	exec(`INSERT INTO conversations (account_id, contact_id)
		SELECT account_id, id FROM (SELECT account_id, id, row_number() OVER (PARTITION BY account_id ORDER BY id) AS n FROM contacts) c
		WHERE n <= 200000`)
	exec(`SET LOCAL work_mem = '256MB'`)
	// Each message goes to conversation number (g * 7919) mod (the account's conversations): a
	// hash join on (account, number).
	exec(`WITH v AS (SELECT account_id, id, contact_id, row_number() OVER (PARTITION BY account_id ORDER BY id) - 1 AS n
				FROM conversations),
			t AS (SELECT account_id, count(*) AS total FROM conversations GROUP BY account_id),
			p AS (SELECT account_id, array_agg(id ORDER BY id) AS ids FROM campaigns GROUP BY account_id),
			r AS (SELECT a.id AS account_id, g, (g::bigint * 7919) % t.total AS n, random() AS rs, random() AS rt,
					random() AS rf, random() AS rc, now() - random() * interval '180 days' AS at
				FROM accounts a JOIN t ON t.account_id = a.id
				CROSS JOIN LATERAL generate_series(1, CASE WHEN a.name = 'Reports Big' THEN 1000000 ELSE 500 END) g)
		INSERT INTO messages (account_id, contact_id, conversation_id, campaign_id, direction, type, destination,
			template_name, platform_message_id, status, outcome_unknown, error_code, error_title, source, created_at,
			sent_at, delivered_at, read_at, failed_at)
		SELECT r.account_id, v.contact_id, v.id,
			p.ids[CASE WHEN r.rc < 0.5 THEN 1 WHEN r.rc < 0.8 THEN 2 ELSE 3 + floor((r.rc - 0.8) * 5 * 18)::int END],
			'out', 'template', c.mobile, (ARRAY['order_confirmation', 'welcome', 'shipping_update', 'appointment_reminder',
				'payment_reminder', 'black_friday'])[1 + floor(r.rt * 6)::int],
			CASE WHEN s.status <> 'pending' THEN 'wamid.bench.' || r.g END, s.status, r.g % 1000 = 7,
			CASE WHEN s.status = 'failed' THEN (ARRAY[131026, 131049, 131047])[1 + floor(r.rf * 3)::int] END,
			CASE WHEN s.status = 'failed' THEN (ARRAY['Message undeliverable', 'Ecosystem engagement', 'Re-engagement message'])[1 + floor(r.rf * 3)::int] END,
			CASE WHEN r.rf < 0.05 THEN 'panel' ELSE 'api' END, r.at,
			CASE WHEN s.status <> 'pending' THEN r.at END,
			CASE WHEN s.status IN ('delivered', 'read') THEN r.at + interval '5 seconds' END,
			CASE WHEN s.status = 'read' THEN r.at + interval '1 minute' END,
			CASE WHEN s.status = 'failed' THEN r.at + interval '2 seconds' END
		FROM r
		JOIN p ON p.account_id = r.account_id
		JOIN v ON v.account_id = r.account_id AND v.n = r.n
		JOIN contacts c ON c.id = v.contact_id
		-- Still pending: about 1 in 1,000 with the outcome unknown (the platform's answer lost),
		-- and a few in flight.
		CROSS JOIN LATERAL (SELECT CASE WHEN r.g % 1000 = 7 OR r.g % 20000 = 13 THEN 'pending'
			WHEN r.rs < 0.02 THEN 'failed' WHEN r.rs < 0.07 THEN 'sent'
			WHEN r.rs < 0.37 THEN 'delivered' ELSE 'read' END AS status) s`)
	// No UPDATE of the rows: an index built over updated rows in the same transaction is unusable
	// (pg_index.indcheckxmin) until every older transaction of the cluster has ended.
	// The counters, as the migration's backfill computes them.
	for _, q := range backfillStatements(b) {
		exec(q)
	}
	for _, d := range indexes {
		exec(d)
	}
	exec(`CREATE TABLE bench_seed (hash text NOT NULL)`)
	exec(`INSERT INTO bench_seed VALUES ($1)`, hash)
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `VACUUM ANALYZE`); err != nil {
		b.Fatal(err)
	}
}

// backfillStatements are the INSERT ... SELECT statements of the reports migration that compute
// the counters of the messages already recorded.
func backfillStatements(b *testing.B) []string {
	b.Helper()
	up, err := fs.ReadFile(migrations.FS, "000013_reports.up.sql")
	if err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, st := range strings.Split(string(up), ";\n") {
		if i := strings.Index(st, "INSERT INTO campaign_"); i >= 0 && strings.Contains(st, "FROM messages") {
			out = append(out, st[i:])
		}
	}
	if len(out) != 3 {
		b.Fatalf("found %d backfill statements in the reports migration, want 3", len(out))
	}
	return out
}

func BenchmarkReports(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds 2M rows")
	}
	st, big := reportsBenchStore(b)
	ctx := context.Background()
	srv, err := server.New(server.Options{}, server.Deps{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	b.Cleanup(hs.Close)
	key, hash, prefix, err := domain.GenerateKey(domain.ModeLive)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.CreateAPIKey(ctx, big, domain.ModeLive, hash, prefix); err != nil {
		b.Fatal(err)
	}
	var ids struct {
		API, Black, Small, Contact, DeepID int64
		DeepAt                             time.Time
	}
	if err := st.DB().GetContext(ctx, &ids.API, `SELECT id FROM campaigns WHERE account_id = $1 AND name = 'API'`, big); err != nil {
		b.Fatal(err)
	}
	st.DB().GetContext(ctx, &ids.Black, `SELECT id FROM campaigns WHERE account_id = $1 AND name = 'Black Friday'`, big)
	st.DB().GetContext(ctx, &ids.Small, `SELECT id FROM campaigns WHERE account_id = $1 AND name = 'Campaign 7'`, big)
	st.DB().GetContext(ctx, &ids.Contact, `SELECT contact_id FROM messages WHERE account_id = $1 ORDER BY id LIMIT 1 OFFSET 4242`, big)
	// A deep position: 100,000 rows into the listing.
	if err := st.DB().QueryRowContext(ctx, `SELECT created_at, id FROM messages WHERE account_id = $1
		ORDER BY created_at DESC, id DESC OFFSET 100000 LIMIT 1`, big).Scan(&ids.DeepAt, &ids.DeepID); err != nil {
		b.Fatal(err)
	}
	deep := store.MessageCursor{CreatedAt: ids.DeepAt, ID: ids.DeepID}.String()
	week := url.QueryEscape(time.Now().Add(-9 * 24 * time.Hour).UTC().Format(time.RFC3339))
	weekEnd := url.QueryEscape(time.Now().Add(-2 * 24 * time.Hour).UTC().Format(time.RFC3339))

	now := time.Now()
	client := &http.Client{}
	get := func(path string) {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
	// The dashboard's campaign chart: 90 days by day of the 500,000-message campaign, from the
	// hourly counters (store level; the page adds the report above and the SVG).
	b.Run("campaign/chart-90-days", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		for range b.N {
			start := time.Now()
			bs, err := st.CampaignSeriesIn(ctx, big, ids.API, "day", "UTC", now.Add(-90*24*time.Hour), now)
			lat = append(lat, time.Since(start))
			if err != nil || len(bs) < 80 {
				b.Fatalf("%d buckets, %v", len(bs), err)
			}
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
		b.ReportMetric(float64(lat[(len(lat)-1)*99/100].Microseconds())/1000, "p99_ms")
	})
	for _, c := range []struct{ name, path string }{
		{"messages/first-page", "/v1/messages"},
		{"messages/deep-cursor", "/v1/messages?cursor=" + deep},
		{"messages/status-failed", "/v1/messages?status=failed"},
		{"messages/campaign-small", fmt.Sprintf("/v1/messages?campaign_id=%d", ids.Small)},
		{"messages/campaign-api", fmt.Sprintf("/v1/messages?campaign_id=%d", ids.API)},
		{"messages/contact", fmt.Sprintf("/v1/messages?contact_id=%d", ids.Contact)},
		{"messages/template+status", "/v1/messages?template=payment_reminder&status=sent"},
		{"messages/status-sent", "/v1/messages?status=sent"},
		{"messages/campaign-small+failed", fmt.Sprintf("/v1/messages?campaign_id=%d&status=failed", ids.Small)},
		{"messages/week", "/v1/messages?created_after=" + week + "&created_before=" + weekEnd},
		{"messages/limit-200", "/v1/messages?limit=200"},
		{"campaign/api-500k", fmt.Sprintf("/v1/campaigns/%d", ids.API)},
		{"campaign/black-friday-300k", fmt.Sprintf("/v1/campaigns/%d", ids.Black)},
		{"campaigns/list", "/v1/campaigns"},
	} {
		b.Run(c.name, func(b *testing.B) { reportLatencies(b, func() { get(c.path) }) })
	}
}
