package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gateway/server/dashboard"
	"gateway/server/servertest"
	"gateway/store"
)

// A deactivated workspace is read-only in the dashboard, as the API refuses its keys: the
// panel send is refused and the platform receives nothing; creating keys, adding endpoints,
// inviting and editing contacts are refused too, each with the notice; pages still open and
// say why, and the user's own password can still be changed.
func TestDeactivatedWorkspaceIsReadOnly(t *testing.T) {
	env := reportsEnv(t)
	a := signUp(t, env, "Acme", "owner@acme.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Acme"}})
	if _, err := env.Server.SyncTemplates(context.Background(), acc); err != nil {
		t.Fatal(err)
	}
	var tpl int64
	if err := env.Store.DB().Get(&tpl, `SELECT id FROM templates WHERE account_id = $1 AND name = 'order_confirmation'`, acc); err != nil {
		t.Fatal(err)
	}
	key := find(t, reFormKey, a.get(fmt.Sprintf("/dashboard/send?template=%d", tpl)).Body)
	if _, err := env.Store.SetAccountActive(context.Background(), acc, false); err != nil {
		t.Fatal(err)
	}
	p := a.post("/dashboard/send", url.Values{"template": {fmt.Sprint(tpl)}, "key": {key}, "destination": {"5511987654321"},
		"body": {"Ana", "ORD-7781"}})
	if p.Status != http.StatusForbidden || !strings.Contains(p.Body, "This workspace is deactivated") {
		t.Fatalf("panel send in a deactivated workspace: %d\n%s", p.Status, p.Body)
	}
	if sent := env.Sim.Sent(); len(sent) != 0 {
		t.Fatalf("the platform received %d messages from a deactivated workspace", len(sent))
	}
	var n int
	env.Store.DB().Get(&n, `SELECT count(*) FROM messages WHERE account_id = $1`, acc)
	if n != 0 {
		t.Fatalf("%d messages recorded", n)
	}
	for path, form := range map[string]url.Values{
		"/dashboard/keys":           {"name": {"x"}, "mode": {"live"}},
		"/dashboard/webhooks":       {"url": {"http://127.0.0.1:9/hook"}},
		"/dashboard/invite":         {"email": {"dev@acme.example"}, "role": {"developer"}},
		"/dashboard/templates/sync": {},
		fmt.Sprintf("/dashboard/members/%d/role", userID(t, env, "owner@acme.example")): {"role": {"developer"}},
	} {
		if p := a.post(path, form); p.Status != http.StatusForbidden || !strings.Contains(p.Body, "read-only") {
			t.Errorf("POST %s in a deactivated workspace: %d", path, p.Status)
		}
	}
	keys, _ := env.Store.APIKeysByAccount(context.Background(), acc)
	eps, _ := env.Store.WebhookEndpointsByAccount(context.Background(), acc)
	if len(keys) != 0 || len(eps) != 0 {
		t.Fatalf("a deactivated workspace got %d keys and %d endpoints", len(keys), len(eps))
	}
	if p := a.get("/dashboard/keys"); p.Status != http.StatusOK || !strings.Contains(p.Body, `id="inactive-notice"`) {
		t.Fatalf("keys page of a deactivated workspace: %d, notice shown: %v", p.Status, strings.Contains(p.Body, "inactive-notice"))
	}
	if p := a.post("/dashboard/password", url.Values{"current_password": {"correct horse battery"}, "new_password": {"a new good password"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("password change in a deactivated workspace: %d", p.Status)
	}
	// Reactivated, it works again.
	env.Store.SetAccountActive(context.Background(), acc, true)
	if p := a.post("/dashboard/keys", url.Values{"name": {"x"}, "mode": {"live"}}); p.Status != http.StatusOK {
		t.Fatalf("create a key after reactivation: %d", p.Status)
	}
}

// Connecting a number is for owners, like disconnecting: a developer's connect is refused
// before any platform step. Connecting never replaces a connected number: the owner
// disconnects it first.
func TestConnectIsOwnerOnlyAndNeverReplaces(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme", "owner@acme.example")
	acct := accountOf(t, env.Store, "owner@acme.example")
	p := owner.post("/dashboard/invite", url.Values{"email": {"dev@acme.example"}, "role": {"developer"}})
	dev := newUser(t, env)
	dev.post("/dashboard/signup", url.Values{"invite": {mustInviteToken(t, p.Body)}, "email": {"dev@acme.example"}, "password": {"another good password"}})
	for _, path := range []string{"/dashboard/connect/token", "/dashboard/connect/embedded"} {
		if p := dev.post(path, url.Values{"code": {"c"}, "waba_id": {"1"}, "phone_number_id": {"2"}, "access_token": {"dev-token"}}); p.Status != http.StatusForbidden {
			t.Errorf("developer POST %s = %d, want 403", path, p.Status)
		}
	}
	if _, err := env.Store.ConnectionByAccount(context.Background(), acct); err == nil {
		t.Fatal("a developer connected a number")
	}
	if p := dev.get("/dashboard/"); strings.Contains(p.Body, `action="/dashboard/connect/token"`) {
		t.Error("the developer's overview offers the connect forms")
	}
	if p := owner.post("/dashboard/connect/token", url.Values{"waba_id": {"1"}, "phone_number_id": {"2"}, "access_token": {"first"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("owner connect: %d", p.Status)
	}
	for path, form := range map[string]url.Values{
		"/dashboard/connect/token":    {"waba_id": {"9"}, "phone_number_id": {"8"}, "access_token": {"second"}},
		"/dashboard/connect/embedded": {"code": {"c"}, "waba_id": {"9"}, "phone_number_id": {"8"}},
	} {
		p := owner.post(path, form)
		if p.Status != http.StatusConflict || !strings.Contains(p.Body, "Disconnect it first") {
			t.Errorf("owner POST %s over a connected number: %d", path, p.Status)
		}
	}
	c, err := env.Store.ConnectionByAccount(context.Background(), acct)
	if err != nil || c.PhoneNumberID != "2" || c.AccessToken != "first" {
		t.Fatalf("the connection after the refused replacements: %+v, %v", c, err)
	}
}

// Outside development every page carries Strict-Transport-Security (in development, served
// over plain http, none); the Embedded Signup SDK's origins are in the CSP of the connect page
// only (the overview and the connect posts), not of the other pages.
func TestHSTSAndConnectOnlySDKOrigins(t *testing.T) {
	const sdk = "https://connect.facebook.net/en_US/sdk.js"
	env := servertest.New(t, servertest.Config{Dashboard: dashboard.Options{SignupOpen: true,
		PlatformAppID: "app-1", PlatformESConfigID: "cfg-1", PlatformSDKURL: sdk}, Connector: &testConnector{}})
	u := newUser(t, env)
	p := u.post("/dashboard/signup", url.Values{"workspace": {"Acme"}, "email": {"o@acme.example"}, "password": {"correct horse battery"}})
	cookie := map[string]string{"Cookie": "__Host-session=" + sessionCookie(t, p, "__Host-session").Value, "Sec-Fetch-Site": "same-origin"}
	get := func(path string) page { return u.do("GET", path, nil, cookie) }
	for _, path := range []string{"/dashboard/", "/dashboard/keys", "/dashboard/signin", "/dashboard/static/dashboard.css", "/dashboard/nope"} {
		if h := get(path).Header.Get("Strict-Transport-Security"); !strings.HasPrefix(h, "max-age=") || h == "max-age=0" {
			t.Errorf("%s: Strict-Transport-Security %q", path, h)
		}
	}
	overview := get("/dashboard/")
	if overview.Status != http.StatusOK || !strings.Contains(overview.Body, `id="connect-whatsapp"`) {
		t.Fatalf("overview: %d", overview.Status)
	}
	if csp := overview.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "https://connect.facebook.net") || !strings.Contains(csp, "https://www.facebook.com") {
		t.Errorf("the connect page's CSP lacks the SDK's origins: %q", csp)
	}
	failed := u.do("POST", "/dashboard/connect/token", url.Values{"waba_id": {"1"}, "phone_number_id": {"2"}, "access_token": {"bad"}}, cookie)
	if csp := failed.Header.Get("Content-Security-Policy"); failed.Status != http.StatusUnprocessableEntity || !strings.Contains(csp, "connect.facebook.net") {
		t.Errorf("the failed connect's page (%d) CSP lacks the SDK: %q", failed.Status, csp)
	}
	for _, path := range []string{"/dashboard/keys", "/dashboard/webhooks", "/dashboard/signin", "/dashboard/signup", "/dashboard/password", "/dashboard/nope"} {
		if csp := get(path).Header.Get("Content-Security-Policy"); strings.Contains(csp, "facebook") || !strings.Contains(csp, "frame-src 'none'") {
			t.Errorf("%s: the SDK's origins are allowed: %q", path, csp)
		}
	}
	dev := newEnv(t, true)
	if h := newUser(t, dev).get("/dashboard/signin").Header.Get("Strict-Transport-Security"); h != "" {
		t.Errorf("development (plain http) sends Strict-Transport-Security %q", h)
	}
}
