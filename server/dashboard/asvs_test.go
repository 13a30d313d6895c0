package dashboard_test

import (
	"crypto/sha256"
	"net/url"
	"strings"
	"testing"
)

// Text a user typed is shown as text: markup in a workspace name and a key name reaches the
// pages escaped, never as elements (html/template's contextual escaping).
func TestStoredTextIsEscaped(t *testing.T) {
	env := newEnv(t, true)
	const payload = `<img src=x onerror=alert(1)><script>alert(2)</script>`
	owner := signUp(t, env, payload, "owner@acme.example")
	if p := owner.post("/dashboard/keys", url.Values{"name": {payload}, "mode": {"test"}}); p.Status != 200 {
		t.Fatalf("key: %d", p.Status)
	}
	for _, path := range []string{"/dashboard/", "/dashboard/keys", "/dashboard/workspaces"} {
		p := owner.get(path)
		if strings.Contains(p.Body, "<img src=x") || strings.Contains(p.Body, "<script>alert") || !strings.Contains(p.Body, "&lt;img src=x onerror=alert(1)&gt;") {
			t.Errorf("%s does not escape the stored markup:\n%s", path, p.Body)
		}
	}
}

// The sessions table holds only the SHA-256 of a session id, never the id the cookie carries.
func TestSessionStoresOnlyTheIDHash(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme", "owner@acme.example")
	id := sessionOf(t, env, owner).Value
	sum := sha256.Sum256([]byte(id))
	var withHash, withID int
	db := env.Store.DB()
	if err := db.Get(&withHash, `SELECT count(*) FROM sessions WHERE id_hash = $1`, sum[:]); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&withID, `SELECT count(*) FROM sessions s WHERE strpos(s::text, $1) > 0`, id); err != nil {
		t.Fatal(err)
	}
	if withHash != 1 || withID != 0 {
		t.Fatalf("%d sessions by the id's hash (want 1), %d rows holding the id itself (want 0)", withHash, withID)
	}
}
