package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"gateway/server"
	"gateway/server/dashboard"
	"gateway/server/servertest"
	"gateway/store"
)

// Workspace B opening or acting on A's keys, endpoints, attempts, deliveries and audit
// entries by id gets 404, and A's things are left as they were.
func TestOtherWorkspacesIDsAre404(t *testing.T) {
	env := newEnv(t, true)
	a := signUp(t, env, "Acme", "owner@acme.example")
	b := signUp(t, env, "Beta", "owner@beta.example")
	accA := accountOf(t, env.Store, "owner@acme.example")

	find(t, reKeyCode, a.post("/dashboard/keys", url.Values{"name": {"prod"}, "mode": {"live"}}).Body)
	keys, _ := env.Store.APIKeysByAccount(context.Background(), accA)
	p := a.post("/dashboard/webhooks", url.Values{"url": {"http://127.0.0.1:9/hook"}})
	find(t, reSecret, p.Body)
	eps, _ := env.Store.WebhookEndpointsByAccount(context.Background(), accA)
	if len(keys) != 1 || len(eps) != 1 {
		t.Fatalf("A has %d keys and %d endpoints", len(keys), len(eps))
	}
	keyID, epID := keys[0].ID, eps[0].ID
	if s := a.post(fmt.Sprintf("/dashboard/webhooks/%d/test", epID), nil).Status; s != http.StatusSeeOther {
		t.Fatalf("send test event: %d", s)
	}
	var deliveryID string
	var attemptID int64
	if err := env.Store.DB().Get(&deliveryID, `SELECT id FROM webhook_deliveries WHERE account_id = $1`, accA); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.DB().Get(&attemptID, `INSERT INTO webhook_attempts (account_id, delivery_id, attempt, attempted_at, status_code, latency_ms)
		VALUES ($1, $2, 1, now(), 200, 12) RETURNING id`, accA, deliveryID); err != nil {
		t.Fatal(err)
	}
	var auditID int64
	if err := env.Store.DB().Get(&auditID, `SELECT max(id) FROM audit_log WHERE account_id = $1`, accA); err != nil {
		t.Fatal(err)
	}
	// A sees each of them.
	for _, path := range []string{fmt.Sprintf("/dashboard/keys/%d", keyID), fmt.Sprintf("/dashboard/webhooks/%d", epID),
		fmt.Sprintf("/dashboard/request-log/%d", attemptID), fmt.Sprintf("/dashboard/audit/%d", auditID)} {
		if s := a.get(path).Status; s != http.StatusOK {
			t.Errorf("A GET %s = %d, want 200", path, s)
		}
	}
	for _, path := range []string{fmt.Sprintf("/dashboard/keys/%d", keyID), fmt.Sprintf("/dashboard/webhooks/%d", epID),
		fmt.Sprintf("/dashboard/webhooks/%d?confirm=delete", epID), fmt.Sprintf("/dashboard/request-log/%d", attemptID),
		fmt.Sprintf("/dashboard/audit/%d", auditID)} {
		if s := b.get(path).Status; s != http.StatusNotFound {
			t.Errorf("B GET %s = %d, want 404", path, s)
		}
	}
	for _, path := range []string{fmt.Sprintf("/dashboard/keys/%d/revoke", keyID), fmt.Sprintf("/dashboard/webhooks/%d/rotate", epID),
		fmt.Sprintf("/dashboard/webhooks/%d/test", epID), fmt.Sprintf("/dashboard/webhooks/%d/disable", epID),
		fmt.Sprintf("/dashboard/webhooks/%d/delete", epID), "/dashboard/deliveries/" + deliveryID + "/redeliver"} {
		if s := b.post(path, nil).Status; s != http.StatusNotFound {
			t.Errorf("B POST %s = %d, want 404", path, s)
		}
	}
	k, err := env.Store.APIKeyByID(context.Background(), accA, keyID)
	if err != nil || k.RevokedAt != nil {
		t.Fatalf("A's key after B's attempts: %+v, %v", k, err)
	}
	e, err := env.Store.EndpointStatusByID(context.Background(), accA, epID)
	if err != nil || !e.Enabled || e.PreviousSecretExpiresAt != nil {
		t.Fatalf("A's endpoint after B's attempts: %+v, %v", e, err)
	}
	// B's own lists show nothing of A's.
	for _, path := range []string{"/dashboard/keys", "/dashboard/webhooks", "/dashboard/request-log", "/dashboard/audit"} {
		body := b.get(path).Body
		if strings.Contains(body, "127.0.0.1:9/hook") || strings.Contains(body, "prod") && path == "/dashboard/keys" {
			t.Errorf("B's %s shows A's data", path)
		}
	}
}

// A form post from another site is refused (Go's CrossOriginProtection) and changes nothing.
func TestCrossSitePostRefused(t *testing.T) {
	env := newEnv(t, true)
	a := signUp(t, env, "Acme", "owner@acme.example")
	for _, hdr := range []map[string]string{{"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://evil.example"}} {
		p := a.do("POST", "/dashboard/keys", url.Values{"name": {"x"}, "mode": {"live"}}, hdr)
		if p.Status != http.StatusForbidden {
			t.Errorf("cross-site POST with %v = %d, want 403", hdr, p.Status)
		}
	}
	p := a.do("POST", "/dashboard/signout", url.Values{}, map[string]string{"Sec-Fetch-Site": "cross-site"})
	if p.Status != http.StatusForbidden {
		t.Errorf("cross-site sign-out = %d, want 403", p.Status)
	}
	keys, _ := env.Store.APIKeysByAccount(context.Background(), accountOf(t, env.Store, "owner@acme.example"))
	if len(keys) != 0 {
		t.Fatalf("a cross-site post created %d keys", len(keys))
	}
	// The same post from our own origin works.
	if p := a.do("POST", "/dashboard/keys", url.Values{"name": {"x"}, "mode": {"live"}}, map[string]string{"Sec-Fetch-Site": "same-origin"}); p.Status != http.StatusOK {
		t.Fatalf("same-origin POST = %d", p.Status)
	}
}

func sessionCookie(t testing.TB, p page, name string) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: p.Header}).Cookies() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s cookie in %v", name, p.Header.Values("Set-Cookie"))
	return nil
}

// Signing in makes a new session id, and the browser's previous session (a fixated one
// included) stops working; sign-out deletes the session.
func TestSessionIDChangesAtSignIn(t *testing.T) {
	env := newEnv(t, true)
	u := signUp(t, env, "Acme", "owner@acme.example")
	base, _ := url.Parse(env.URL)
	first := u.c.Jar.Cookies(base)[0].Value
	p := u.post("/dashboard/signin", url.Values{"email": {"OWNER@acme.example"}, "password": {"correct horse battery"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("sign-in = %d\n%s", p.Status, p.Body)
	}
	second := sessionCookie(t, p, "session").Value
	if second == first || len(second) < 43 {
		t.Fatalf("session id not renewed at sign-in: %q then %q", first, second)
	}
	old := newUser(t, env)
	old.c.Jar.SetCookies(base, []*http.Cookie{{Name: "session", Value: first, Path: "/"}})
	if p := old.get("/dashboard/keys"); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/signin" {
		t.Fatalf("the replaced session still works: %d", p.Status)
	}
	if p := u.get("/dashboard/keys"); p.Status != http.StatusOK {
		t.Fatalf("the new session does not work: %d", p.Status)
	}
	// Only the hash of the id is stored.
	var n int
	env.Store.DB().Get(&n, `SELECT count(*) FROM sessions WHERE id_hash = convert_to($1, 'UTF8')`, second)
	if n != 0 {
		t.Fatal("the raw session id is stored")
	}
	if p := u.post("/dashboard/signout", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("sign-out = %d", p.Status)
	}
	env.Store.DB().Get(&n, `SELECT count(*) FROM sessions`)
	if n != 0 {
		t.Fatalf("%d sessions left after sign-out", n)
	}
	if p := u.get("/dashboard/"); p.Status != http.StatusSeeOther {
		t.Fatalf("after sign-out the overview answers %d", p.Status)
	}
}

// Sessions end after 12 h idle and 30 days in all.
func TestSessionExpiry(t *testing.T) {
	env := newEnv(t, true)
	u := signUp(t, env, "Acme", "owner@acme.example")
	env.Store.DB().MustExec(`UPDATE sessions SET last_seen_at = now() - interval '11 hours'`)
	if p := u.get("/dashboard/"); p.Status != http.StatusOK {
		t.Fatalf("11 h idle: %d, want 200", p.Status)
	}
	env.Store.DB().MustExec(`UPDATE sessions SET last_seen_at = now() - interval '13 hours'`)
	if p := u.get("/dashboard/"); p.Status != http.StatusSeeOther {
		t.Fatalf("13 h idle: %d, want a redirect to sign-in", p.Status)
	}
	env.Store.DB().MustExec(`UPDATE sessions SET last_seen_at = now(), created_at = now() - interval '31 days'`)
	if p := u.get("/dashboard/"); p.Status != http.StatusSeeOther {
		t.Fatalf("31 days old: %d, want a redirect to sign-in", p.Status)
	}
}

// Outside development the cookie is __Host-session, HttpOnly, Secure, SameSite=Lax, Path=/;
// in development it is "session" without Secure (plain http).
func TestCookieFlags(t *testing.T) {
	prod := newEnv(t, false)
	u := newUser(t, prod)
	p := u.post("/dashboard/signup", url.Values{"workspace": {"Acme"}, "email": {"o@acme.example"}, "password": {"correct horse battery"}})
	c := sessionCookie(t, p, "__Host-session")
	if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Domain != "" {
		t.Fatalf("production cookie %+v", c)
	}
	dev := newEnv(t, true)
	u = newUser(t, dev)
	p = u.post("/dashboard/signup", url.Values{"workspace": {"Acme"}, "email": {"o@acme.example"}, "password": {"correct horse battery"}})
	c = sessionCookie(t, p, "session")
	if !c.HttpOnly || c.Secure || c.SameSite != http.SameSiteLaxMode {
		t.Fatalf("development cookie %+v", c)
	}
}

// Repeated failures throttle sign-in for the email, even with the right password then; a
// failure reads the same whether or not the email exists.
func TestSignInThrottleAndNoEmailOracle(t *testing.T) {
	env := newEnv(t, true)
	signUp(t, env, "Acme", "owner@acme.example")
	u := newUser(t, env)
	wrong := u.post("/dashboard/signin", url.Values{"email": {"owner@acme.example"}, "password": {"wrong password!"}})
	unknown := u.post("/dashboard/signin", url.Values{"email": {"nobody@acme.example"}, "password": {"wrong password!"}})
	if wrong.Status != http.StatusUnauthorized || unknown.Status != wrong.Status {
		t.Fatalf("wrong password %d, unknown email %d", wrong.Status, unknown.Status)
	}
	norm := func(s string) string { return strings.ReplaceAll(s, "nobody@acme.example", "owner@acme.example") }
	if norm(unknown.Body) != wrong.Body {
		t.Fatal("a failed sign-in tells whether the email exists")
	}
	for range 4 {
		u.post("/dashboard/signin", url.Values{"email": {"owner@acme.example"}, "password": {"wrong password!"}})
	}
	p := u.post("/dashboard/signin", url.Values{"email": {"owner@acme.example"}, "password": {"correct horse battery"}})
	if p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" {
		t.Fatalf("after 5 failures the right password got %d, want 429", p.Status)
	}
	// Another email from the same address is not throttled yet (per-address limit is higher).
	signUp(t, env, "Beta", "b@beta.example")
	if p := u.post("/dashboard/signin", url.Values{"email": {"b@beta.example"}, "password": {"correct horse battery"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("another email: %d", p.Status)
	}
	// The address is throttled after 20 failures, whatever the email.
	for i := range 20 {
		u.post("/dashboard/signin", url.Values{"email": {fmt.Sprintf("x%d@nowhere.example", i)}, "password": {"wrong password!"}})
	}
	if p := u.post("/dashboard/signin", url.Values{"email": {"b@beta.example"}, "password": {"correct horse battery"}}); p.Status != http.StatusTooManyRequests {
		t.Fatalf("after 20 failures from one address: %d, want 429", p.Status)
	}
}

// Behind a trusted proxy (GATEWAY_TRUSTED_PROXIES) the sign-in throttle counts the client the
// proxy names, as the demo limit does: one client's failures do not lock out every other
// client of the proxy. Without one, a made-up X-Forwarded-For does not escape the throttle.
func TestSignInThrottleCountsTheForwardedClient(t *testing.T) {
	fail := func(u *user, i int, from string) {
		u.do("POST", "/dashboard/signin", url.Values{"email": {fmt.Sprintf("x%d@nowhere.example", i)}, "password": {"wrong password!"}},
			map[string]string{"Sec-Fetch-Site": "same-origin", "X-Forwarded-For": from})
	}
	signIn := func(u *user, from string) int {
		return u.do("POST", "/dashboard/signin", url.Values{"email": {"owner@acme.example"}, "password": {"correct horse battery"}},
			map[string]string{"Sec-Fetch-Site": "same-origin", "X-Forwarded-For": from}).Status
	}

	env := servertest.New(t, servertest.Config{Options: server.Options{
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
	}, Dashboard: dashboard.Options{Development: true, SignupOpen: true}})
	signUp(t, env, "Acme", "owner@acme.example")
	u := newUser(t, env)
	for i := range 20 {
		fail(u, i, "203.0.113.7")
	}
	if s := signIn(u, "203.0.113.7"); s != http.StatusTooManyRequests {
		t.Fatalf("the client with 20 failures: %d, want 429", s)
	}
	if s := signIn(u, "203.0.113.8"); s != http.StatusSeeOther {
		t.Fatalf("another client through the same proxy: %d, want 303", s)
	}

	direct := newEnv(t, true) // no trusted proxy
	signUp(t, direct, "Acme", "owner@acme.example")
	u = newUser(t, direct)
	for i := range 20 {
		fail(u, i, fmt.Sprintf("198.51.100.%d", i))
	}
	if s := signIn(u, "198.51.100.250"); s != http.StatusTooManyRequests {
		t.Fatalf("a made-up X-Forwarded-For with no trusted proxy: %d, want 429", s)
	}
}

// Every page carries a CSP without inline script, frame-ancestors 'none', X-Frame-Options
// DENY and a Referrer-Policy; signed-out pages redirect to sign-in.
func TestSecurityHeadersOnEveryPage(t *testing.T) {
	env := newEnv(t, true)
	u := signUp(t, env, "Acme", "owner@acme.example")
	anon := newUser(t, env)
	pages := []string{"/dashboard/", "/dashboard/keys", "/dashboard/webhooks", "/dashboard/request-log", "/dashboard/audit",
		"/dashboard/invite", "/dashboard/password", "/dashboard/nope", "/dashboard/keys/999"}
	check := func(who, path string, p page) {
		csp := p.Header.Get("Content-Security-Policy")
		script := ""
		for _, d := range strings.Split(csp, ";") {
			if strings.HasPrefix(strings.TrimSpace(d), "script-src") {
				script = d
			}
		}
		if script == "" || strings.Contains(script, "unsafe-inline") || strings.Contains(script, "unsafe-eval") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s %s: CSP %q", who, path, csp)
		}
		if p.Header.Get("X-Frame-Options") != "DENY" || p.Header.Get("Referrer-Policy") == "" {
			t.Errorf("%s %s: X-Frame-Options %q, Referrer-Policy %q", who, path, p.Header.Get("X-Frame-Options"), p.Header.Get("Referrer-Policy"))
		}
		if strings.Contains(p.Body, "<script>") || strings.Contains(p.Body, " onclick=") || strings.Contains(p.Body, " style=") {
			t.Errorf("%s %s: inline script or style in the page", who, path)
		}
	}
	for _, path := range append(pages, "/dashboard/signin", "/dashboard/signup") {
		p := u.get(path)
		check("owner", path, p)
		if path == "/dashboard/nope" || path == "/dashboard/keys/999" {
			if p.Status != http.StatusNotFound {
				t.Errorf("%s = %d, want 404", path, p.Status)
			}
		}
		check("signed out", path, anon.get(path))
	}
	for _, path := range pages[:7] {
		if p := anon.get(path); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/signin" {
			t.Errorf("signed out %s = %d %s, want a redirect to sign-in", path, p.Status, p.Header.Get("Location"))
		}
	}
}

// A developer does not see the owner pages; sign-up closed refuses new workspaces but an
// invitation link still works, once.
func TestInvitationAndRoles(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme", "owner@acme.example")
	p := owner.post("/dashboard/invite", url.Values{"email": {"dev@acme.example"}, "role": {"developer"}})
	tok := mustInviteToken(t, p.Body)
	dev := newUser(t, env)
	if p := dev.get("/dashboard/signup?invite=" + tok); p.Status != http.StatusOK || !strings.Contains(p.Body, "Acme") {
		t.Fatalf("invitation page: %d", p.Status)
	}
	p = dev.post("/dashboard/signup", url.Values{"invite": {tok}, "email": {"dev@acme.example"}, "password": {"another good password"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("accept invitation: %d\n%s", p.Status, p.Body)
	}
	if accountOf(t, env.Store, "dev@acme.example") != accountOf(t, env.Store, "owner@acme.example") {
		t.Fatal("the invited user is in another workspace")
	}
	if p := dev.get("/dashboard/keys"); p.Status != http.StatusOK {
		t.Fatalf("developer keys page: %d", p.Status)
	}
	// An owner-only page tells a developer why it is closed: 403 "Only owners can …", the same
	// for an audit entry that exists and one that does not.
	for path, task := range map[string]string{"/dashboard/audit": "see the audit log", "/dashboard/audit/1": "see the audit log",
		"/dashboard/audit/999999": "see the audit log", "/dashboard/invite": "invite teammates"} {
		if p := dev.get(path); p.Status != http.StatusForbidden || !strings.Contains(p.Body, "<h1>Only owners can "+task+"</h1>") {
			t.Errorf("developer %s = %d, want 403 saying only owners can %s", path, p.Status, task)
		}
	}
	again := newUser(t, env)
	if p := again.post("/dashboard/signup", url.Values{"invite": {tok}, "email": {"x@acme.example"}, "password": {"another good password"}}); p.Status != http.StatusNotFound {
		t.Fatalf("a used invitation: %d, want 404", p.Status)
	}
	entries, _ := env.Store.AuditLog(context.Background(), accountOf(t, env.Store, "owner@acme.example"), 0, 10)
	var invited bool
	for _, e := range entries {
		invited = invited || e.Action == store.AuditUserInvited && e.Target == "dev@acme.example"
	}
	if !invited {
		t.Fatalf("no user.invited entry in %+v", entries)
	}
	_ = time.Second
}
