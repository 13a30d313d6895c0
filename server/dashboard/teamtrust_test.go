package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

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
		if p := dev.post(path, url.Values{"code": {"c"}, "waba_id": {"1"}, "phone_number_id": {"2"}, "access_token": {"dev-token"}}); p.Status != http.StatusNotFound {
			t.Errorf("developer POST %s = %d, want 404", path, p.Status)
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
