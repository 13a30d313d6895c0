package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gateway/store"
)

// A workspace has at most 10 webhook endpoints and 50 active API keys (the defaults): one more
// from the dashboard's forms is refused with a page that says why and what to do, and creates
// nothing; after deleting an endpoint or revoking a key there is room again.
func TestDashboardQuotas(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme", "owner@acme.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	count := func(q string) int {
		t.Helper()
		var n int
		if err := env.Store.DB().Get(&n, q, acc); err != nil {
			t.Fatal(err)
		}
		return n
	}

	for i := range 10 {
		if p := owner.post("/dashboard/webhooks", url.Values{"url": {fmt.Sprintf("http://127.0.0.1:9/hook/%d", i)}}); p.Status != http.StatusOK {
			t.Fatalf("endpoint %d: %d", i, p.Status)
		}
	}
	p := owner.post("/dashboard/webhooks", url.Values{"url": {"http://127.0.0.1:9/hook/extra"}})
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "already has 10 webhook endpoints") {
		t.Fatalf("11th endpoint: %d\n%s", p.Status, p.Body)
	}
	if n := count(`SELECT count(*) FROM webhook_endpoints WHERE account_id = $1`); n != 10 {
		t.Fatalf("%d endpoints stored", n)
	}
	var first int64
	env.Store.DB().Get(&first, `SELECT min(id) FROM webhook_endpoints WHERE account_id = $1`, acc)
	if p := owner.post(fmt.Sprintf("/dashboard/webhooks/%d/delete", first), nil); p.Status != http.StatusSeeOther {
		t.Fatalf("delete: %d", p.Status)
	}
	if p := owner.post("/dashboard/webhooks", url.Values{"url": {"http://127.0.0.1:9/hook/extra"}}); p.Status != http.StatusOK {
		t.Fatalf("endpoint after a delete: %d", p.Status)
	}

	// Keys: fill up to 50 active ones (revoked ones do not count).
	if _, err := env.Store.DB().Exec(`INSERT INTO api_keys (account_id, mode, key_hash, prefix, name, last4, revoked_at)
		SELECT $1, 'test', sha256(('revoked-' || i)::bytea), 'svc_test_', 'old', 'abcd', now() FROM generate_series(1, 5) i`, acc); err != nil {
		t.Fatal(err)
	}
	for count(`SELECT count(*) FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL AND mode <> 'demo'`) < 50 {
		if p := owner.post("/dashboard/keys", url.Values{"name": {"server"}, "mode": {"test"}}); p.Status != http.StatusOK {
			t.Fatalf("key: %d\n%s", p.Status, p.Body)
		}
	}
	p = owner.post("/dashboard/keys", url.Values{"name": {"one more"}, "mode": {"live"}})
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "already has 50 active API keys") || strings.Contains(p.Body, `id="new-key"`) {
		t.Fatalf("51st key: %d\n%s", p.Status, p.Body)
	}
	var key int64
	env.Store.DB().Get(&key, `SELECT max(id) FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL`, acc)
	if p := owner.post(fmt.Sprintf("/dashboard/keys/%d/revoke", key), nil); p.Status != http.StatusSeeOther {
		t.Fatalf("revoke: %d", p.Status)
	}
	if p := owner.post("/dashboard/keys", url.Values{"name": {"one more"}, "mode": {"live"}}); p.Status != http.StatusOK {
		t.Fatalf("key after a revocation: %d", p.Status)
	}
}

// The lists without pages (keys, webhook endpoints, workspaces) show at most store.MaxListed
// rows and say so when they may go on.
func TestDashboardListsAreCapped(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme", "owner@acme.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	db := env.Store.DB()
	if _, err := db.Exec(`INSERT INTO api_keys (account_id, mode, key_hash, prefix, name, last4, revoked_at)
		SELECT $1, 'test', sha256(('revoked-' || i)::bytea), 'svc_test_', 'old', 'abcd', now() FROM generate_series(1, $2::int) i`,
		acc, store.MaxListed+5); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO webhook_endpoints (account_id, url, secret)
		SELECT $1, 'http://127.0.0.1:9/hook/' || i, '\x00' FROM generate_series(1, $2::int) i`, acc, store.MaxListed+5); err != nil {
		t.Fatal(err)
	}
	var user int64
	if err := db.Get(&user, `SELECT id FROM users WHERE email = 'owner@acme.example'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`WITH a AS (INSERT INTO accounts (name, email, join_code)
			SELECT 'W' || i, 'w' || i || '@example.com', 'jc-' || i FROM generate_series(1, $2::int) i RETURNING id)
		INSERT INTO memberships (account_id, user_id, role) SELECT id, $1, 'developer' FROM a`, user, store.MaxListed+5); err != nil {
		t.Fatal(err)
	}
	for path, row := range map[string]string{"/dashboard/keys": "<td>Revoked ", "/dashboard/webhooks": `href="/dashboard/webhooks/`,
		"/dashboard/workspaces": `action="/dashboard/workspaces/`} {
		p := owner.get(path)
		if n := strings.Count(p.Body, row); p.Status != http.StatusOK || n > store.MaxListed || !strings.Contains(p.Body, `id="list-capped"`) {
			t.Errorf("%s: %d, %d rows, capped note %v", path, p.Status, n, strings.Contains(p.Body, `id="list-capped"`))
		}
	}
}
