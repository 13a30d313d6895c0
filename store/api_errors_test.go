package store_test

import (
	"context"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

// The API error log keeps a workspace's newest 1,000 rows of the last 7 days, lists them newest
// first with the key's prefix only, and never shows one workspace's rows to another.
func TestAPIErrorLogRetention(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a, _ := st.CreateAccount(ctx, "acme", "a@example.com", "acme-1")
	b, _ := st.CreateAccount(ctx, "beta", "b@example.com", "beta-1")
	var key int64
	if err := st.DB().Get(&key, `INSERT INTO api_keys (account_id, mode, key_hash, prefix) VALUES ($1, 'live', sha256('k'), 'svc_live_ab12') RETURNING id`, a.ID); err != nil {
		t.Fatal(err)
	}
	// An old row goes at the next write.
	if _, err := st.DB().Exec(`INSERT INTO api_errors (account_id, key_id, method, path, status, code, created_at)
		VALUES ($1, $2, 'GET', '/v1/old', 404, 'not_found', now() - interval '8 days')`, a.ID, key); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordAPIError(ctx, b.ID, 0, "GET", "/v1/me", 403, "account_inactive"); err != nil {
		t.Fatal(err)
	}
	// The rows are written in one statement here (as a thousand calls would leave them), then one
	// more call trims them to the limit.
	if _, err := st.DB().Exec(`INSERT INTO api_errors (account_id, key_id, method, path, status, code)
		SELECT $1, $2, 'POST', '/v1/messages/template', 422, 'validation_failed' FROM generate_series(1, $3)`, a.ID, key, store.APIErrorKeep+4); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordAPIError(ctx, a.ID, key, "POST", "/v1/contacts", 409, "conflict"); err != nil {
		t.Fatal(err)
	}
	var n, old int
	st.DB().Get(&n, `SELECT count(*) FROM api_errors WHERE account_id = $1`, a.ID)
	st.DB().Get(&old, `SELECT count(*) FROM api_errors WHERE account_id = $1 AND path = '/v1/old'`, a.ID)
	if n != store.APIErrorKeep || old != 0 {
		t.Fatalf("%d rows kept (want %d), %d old ones", n, store.APIErrorKeep, old)
	}
	es, err := st.APIErrors(ctx, a.ID, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Path != "/v1/contacts" || es[0].Status != 409 || es[0].KeyPrefix != "svc_live_ab12" || es[1].Code != "validation_failed" {
		t.Fatalf("newest rows %+v", es)
	}
	es, _ = st.APIErrors(ctx, b.ID, 0, 10)
	if len(es) != 1 || es[0].Code != "account_inactive" || es[0].KeyPrefix != "" {
		t.Fatalf("the other workspace's rows %+v", es)
	}
}
