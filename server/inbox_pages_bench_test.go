package server_test

// BenchmarkInboxPages serves the team inbox's pages over the workspace of BenchmarkInbox
// (./store: 100,000 conversations, about 10,000,000 messages, database gw_bench_inbox; run it
// first, it seeds the database once): each view's first page, searches by name (a rare term, a
// surname in a tenth of the conversations, one in 4.5 %), and the thread of the
// conversation with 500 messages, each through the whole HTTP stack with a signed-in session
// (cookie, session lookup, handler, store, template), one request at a time. It reports each
// page's median and 99th percentile (p50_ms, p99_ms):
//
//	go test -run '^$' -bench InboxPages -benchtime 50x ./server/

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gateway/server"
	"gateway/server/dashboard"
	"gateway/server/web"
	"gateway/store"
	"gateway/store/storetest"
)

// inboxPagesSession is the dashboard session of a member of gw_bench_inbox's workspace.
const inboxPagesSession = "bench-inbox-session-0000000000000000000000"

func BenchmarkInboxPages(b *testing.B) {
	ctx := context.Background()
	dsn := withDatabase(storetest.AdminDSN(), "gw_bench_inbox")
	db, err := store.Open(ctx, dsn, 16)
	if err != nil {
		b.Skipf("gw_bench_inbox is missing (run BenchmarkInbox in ./store first): %v", err)
	}
	st, err := store.New(db, storetest.TestKey)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close(); db.Close() })
	var acc, conv int64
	if err := db.GetContext(ctx, &acc, `SELECT account_id FROM bench_seed`); err != nil {
		b.Skipf("gw_bench_inbox is not seeded (run BenchmarkInbox in ./store first): %v", err)
	}
	if err := db.GetContext(ctx, &conv, `SELECT min(id) FROM conversations WHERE account_id = $1`, acc); err != nil {
		b.Fatal(err)
	}
	sum := sha256.Sum256([]byte(inboxPagesSession))
	if _, err := db.ExecContext(ctx, `INSERT INTO sessions (id_hash, account_id, user_id)
		SELECT $2, $1, min(user_id) FROM memberships WHERE account_id = $1
		ON CONFLICT (id_hash) DO UPDATE SET created_at = now(), last_seen_at = now()`, acc, sum[:]); err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(server.Options{}, server.Deps{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := web.Mount(srv, web.Config{Dashboard: dashboard.Options{Development: true}, Store: st}); err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	b.Cleanup(hs.Close)
	get := func(path string) {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+path, nil)
		req.AddCookie(&http.Cookie{Name: "session", Value: inboxPagesSession})
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
	pages := []struct{ name, path string }{
		{"inbox/all", "/dashboard/inbox"},
		{"inbox/mine", "/dashboard/inbox?view=mine"},
		{"inbox/unassigned", "/dashboard/inbox?view=unassigned"},
		{"inbox/window-open", "/dashboard/inbox?view=window_open"},
		{"inbox/resolved", "/dashboard/inbox?view=resolved"},
		{"inbox/search", "/dashboard/inbox?search=Customer+4242"},
		{"inbox/search-common", "/dashboard/inbox?search=Okafor"},
		{"inbox/search-medium", "/dashboard/inbox?search=Silva"},
		{"thread/500", fmt.Sprintf("/dashboard/inbox/%d", conv)},
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) { reportLatencies(b, func() { get(p.path) }) })
	}
}
