package server_test

// BenchmarkReportsPages serves the dashboard's report pages over the workspace of
// BenchmarkReports (1,000,000 contacts, 1,000,000 messages, beside a small account; database
// gw_bench_reports, seeded once): the messages list (first page, filtered pages, an older page
// by keyset), a contact page with its conversation's messages, and campaign reports (the
// 500,000-message API campaign and the 300,000-message "Black Friday"), each through the whole
// HTTP stack with a signed-in session (cookie, session lookup, handler, store, template), one
// request at a time. It reports each page's median and 99th percentile (p50_ms, p99_ms) and,
// with -v, the plan of every statement each page runs (auto_explain: EXPLAIN (ANALYZE,
// BUFFERS) as it ran, prepared statements included):
//
//	go test -run '^$' -bench ReportsPages -benchtime 200x -v ./server/

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/server"
	"gateway/server/dashboard"
	"gateway/server/web"
	"gateway/store"
	"gateway/store/storetest"
)

// pagesSession is the dashboard session of the big workspace's owner in gw_bench_reports.
const pagesSession = "bench-reports-session-000000000000000000000"

func BenchmarkReportsPages(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds 2M rows")
	}
	st, big := reportsBenchStore(b)
	ctx := context.Background()
	db := st.DB()
	// The signed-in owner (kept in the database; the session made fresh each run).
	sum := sha256.Sum256([]byte(pagesSession))
	for _, q := range []string{
		`INSERT INTO users (email, password_hash) VALUES ('owner@bench.example', 'not a password') ON CONFLICT DO NOTHING`,
		`INSERT INTO memberships (account_id, user_id, role) SELECT $1, id, 'owner' FROM users WHERE lower(email) = 'owner@bench.example'
			ON CONFLICT DO NOTHING`,
		`INSERT INTO sessions (id_hash, account_id, user_id) SELECT $2, $1, id FROM users WHERE lower(email) = 'owner@bench.example'
			ON CONFLICT (id_hash) DO UPDATE SET created_at = now(), last_seen_at = now()`,
	} {
		args := []any{big, sum[:]}[:strings.Count(q, "$")]
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			b.Fatalf("%v\n%s", err, q)
		}
	}
	var ids struct {
		API, Black, Small, Contact, DeepID int64
		DeepAt                             time.Time
	}
	for _, q := range []struct {
		dst *int64
		sql string
	}{
		{&ids.API, `SELECT id FROM campaigns WHERE account_id = $1 AND name = 'API'`},
		{&ids.Black, `SELECT id FROM campaigns WHERE account_id = $1 AND name = 'Black Friday'`},
		{&ids.Small, `SELECT id FROM campaigns WHERE account_id = $1 AND name = 'Campaign 7'`},
		{&ids.Contact, `SELECT contact_id FROM messages WHERE account_id = $1 ORDER BY id LIMIT 1 OFFSET 4242`},
	} {
		if err := db.GetContext(ctx, q.dst, q.sql, big); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.QueryRowContext(ctx, `SELECT created_at, id FROM messages WHERE account_id = $1
		ORDER BY created_at DESC, id DESC OFFSET 100000 LIMIT 1`, big).Scan(&ids.DeepAt, &ids.DeepID); err != nil {
		b.Fatal(err)
	}
	deep := store.MessageCursor{CreatedAt: ids.DeepAt, ID: ids.DeepID}.String()
	pages := []struct{ name, path string }{
		{"messages/first-page", "/dashboard/messages"},
		{"messages/older-page", "/dashboard/messages?after=" + deep},
		{"messages/status-failed", "/dashboard/messages?status=failed"},
		{"messages/status-sent", "/dashboard/messages?status=sent"},
		{"messages/status-pending", "/dashboard/messages?status=pending"},
		{"messages/template+status", "/dashboard/messages?template=payment_reminder&status=sent"},
		{"messages/campaign-small+status", fmt.Sprintf("/dashboard/messages?campaign=%d&status=sent", ids.Small)},
		{"messages/campaign-small+failed", fmt.Sprintf("/dashboard/messages?campaign=%d&status=failed", ids.Small)},
		{"messages/week", "/dashboard/messages?from=" + time.Now().AddDate(0, 0, -9).Format("2006-01-02") +
			"&to=" + time.Now().AddDate(0, 0, -3).Format("2006-01-02")},
		{"contact", fmt.Sprintf("/dashboard/contacts/%d", ids.Contact)},
		{"campaign/api-500k", fmt.Sprintf("/dashboard/campaigns/%d", ids.API)},
		{"campaign/black-friday-300k", fmt.Sprintf("/dashboard/campaigns/%d", ids.Black)},
	}

	serve := func(st *store.Store) *httptest.Server {
		srv, err := server.New(server.Options{},
			server.Deps{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := web.Mount(srv, web.Config{Dashboard: dashboard.Options{Development: true}, Store: st}); err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(srv.Handler())
		b.Cleanup(hs.Close)
		return hs
	}
	get := func(hs *httptest.Server, path string) {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+path, nil)
		req.AddCookie(&http.Cookie{Name: "session", Value: pagesSession})
		resp, err := hs.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "<main") {
			b.Fatalf("%s: %d %.300s", path, resp.StatusCode, body)
		}
	}

	// The plans: each page once more over a connection that explains every statement.
	if testing.Verbose() {
		var mu sync.Mutex
		var plans []string
		xdb, err := storetest.ExplainingDB(withDatabase(storetest.AdminDSN(), benchReportsDB), func(p string) {
			mu.Lock()
			plans = append(plans, p)
			mu.Unlock()
		})
		if err != nil {
			b.Fatal(err)
		}
		xdb.SetMaxOpenConns(1)
		xst, err := store.New(xdb, storetest.TestKey)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { xst.Close(); xdb.Close() })
		xs := serve(xst)
		for _, p := range pages {
			get(xs, p.path) // warm: prepares and caches
			mu.Lock()
			plans = nil
			mu.Unlock()
			get(xs, p.path)
			mu.Lock()
			b.Logf("plans of %s (%s):\n%s", p.name, p.path, strings.Join(plans, "\n\n"))
			mu.Unlock()
		}
	}

	hs := serve(st)
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) { reportLatencies(b, func() { get(hs, p.path) }) })
	}
}
