package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"gateway/store/storetest"
)

// Every statement of the pool has a deadline: statement_timeout is set on each connection
// (GATEWAY_STATEMENT_TIMEOUT, 15 s by default), so a statement that runs longer is cancelled by
// the server, not left holding a connection and locks. Without named prepared statements (a
// transaction pooler, which refuses the start-up parameter) it is the role's setting in the
// database, and the pool's connections have it all the same.
func TestStatementTimeout(t *testing.T) {
	for _, c := range []struct {
		env, want string
		pooled    bool // as through a transaction pooler: the role's setting in the database
	}{{"", "15s", false}, {"300ms", "300ms", false}, {"300ms", "300ms", true}} {
		vars := map[string]string{"DATABASE_URL": storetest.DSN(t), "LOG_LEVEL": "error", "GATEWAY_MIGRATE": "false",
			"GATEWAY_STATEMENT_TIMEOUT": c.env}
		if c.pooled {
			vars["DATABASE_DIRECT_URL"] = storetest.DirectDSN(vars["DATABASE_URL"])
			vars["GATEWAY_DB_PREPARED"] = "false"
		}
		a, err := openApp(context.Background(), mustConfig(t, func(k string) string { return vars[k] }), slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		defer a.close()
		var got string
		if err := a.store.DB().Get(&got, `SHOW statement_timeout`); err != nil || got != c.want {
			t.Fatalf("statement_timeout %q (%v), want %q", got, err, c.want)
		}
		if c.env != "" {
			_, err := a.store.DB().Exec(`SELECT pg_sleep(2)`)
			if err == nil || !strings.Contains(err.Error(), "statement timeout") {
				t.Fatalf("a 2 s statement under a 300 ms deadline: %v", err)
			}
		}
	}
}
