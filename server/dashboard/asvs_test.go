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

// Pages declare their type and charset, forbid sniffing, caching and sharing their window with
// other origins' openers; the static files are served but their folder is not listed; a method
// no route takes is not served.
func TestDashboardResponseHeaders(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme", "owner@acme.example")
	for _, path := range []string{"/dashboard/", "/dashboard/keys", "/dashboard/signin", "/dashboard/nope"} {
		h := owner.get(path).Header
		if h.Get("Content-Type") != "text/html; charset=utf-8" || h.Get("X-Content-Type-Options") != "nosniff" ||
			h.Get("Cache-Control") != "no-store" || h.Get("Referrer-Policy") != "same-origin" || h.Get("Cross-Origin-Opener-Policy") == "" {
			t.Errorf("%s: %v", path, h)
		}
	}
	if p := owner.get("/dashboard/static/dashboard.css"); p.Status != 200 || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/css") {
		t.Errorf("stylesheet: %d %s", p.Status, p.Header.Get("Content-Type"))
	}
	for _, path := range []string{"/dashboard/static/", "/dashboard/static"} {
		if p := owner.get(path); p.Status == 200 || strings.Contains(p.Body, `href="dashboard.css"`) {
			t.Errorf("%s lists the folder: %d\n%s", path, p.Status, p.Body)
		}
	}
	if p := owner.do("PUT", "/dashboard/keys", url.Values{"name": {"x"}}, map[string]string{"Sec-Fetch-Site": "same-origin"}); p.Status == 200 {
		t.Errorf("PUT /dashboard/keys: %d", p.Status)
	}
}
