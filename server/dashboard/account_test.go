package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gateway/server/dashboard"
	"gateway/server/servertest"
	"gateway/store"
)

// Connecting with a token shows the platform's reason on failure and stores the number on
// success; disconnecting asks first (owners only) and is audited.
func TestConnectAndDisconnect(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme", "owner@acme.example")
	acct := accountOf(t, env.Store, "owner@acme.example")
	p := owner.post("/dashboard/connect/token", url.Values{"waba_id": {"1"}, "phone_number_id": {"2"}, "access_token": {"bad"}})
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "Invalid OAuth access token") || !strings.Contains(p.Body, `value="2"`) {
		t.Fatalf("failed connect: %d", p.Status)
	}
	p = owner.post("/dashboard/connect/embedded", url.Values{"code": {""}, "waba_id": {"1"}, "phone_number_id": {"2"}})
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "did not finish") {
		t.Fatalf("embedded connect without a code: %d", p.Status)
	}
	if p := owner.post("/dashboard/connect/token", url.Values{"waba_id": {"1"}, "phone_number_id": {"2"}, "access_token": {"good"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("connect: %d", p.Status)
	}
	if _, err := env.Store.ConnectionByAccount(context.Background(), acct); err != nil {
		t.Fatal(err)
	}
	// A developer can neither see the confirmation nor disconnect.
	p = owner.post("/dashboard/invite", url.Values{"email": {"dev@acme.example"}, "role": {"developer"}})
	dev := newUser(t, env)
	dev.post("/dashboard/signup", url.Values{"invite": {mustInviteToken(t, p.Body)}, "email": {"dev@acme.example"}, "password": {"another good password"}})
	if p := dev.get("/dashboard/disconnect"); p.Status != http.StatusForbidden || !strings.Contains(p.Body, "only its owners can disconnect the number") {
		t.Fatalf("developer disconnect page: %d", p.Status)
	}
	if p := dev.post("/dashboard/disconnect", nil); p.Status != http.StatusForbidden {
		t.Fatalf("developer disconnect: %d", p.Status)
	}
	p = owner.get("/dashboard/disconnect")
	if p.Status != http.StatusOK || !strings.Contains(p.Body, `<button type="submit" class="danger">Disconnect</button>`) {
		t.Fatalf("confirmation page: %d", p.Status)
	}
	if p := owner.post("/dashboard/disconnect", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("disconnect: %d", p.Status)
	}
	if _, err := env.Store.ConnectionByAccount(context.Background(), acct); err == nil {
		t.Fatal("still connected")
	}
	es, _ := env.Store.AuditLog(context.Background(), acct, 0, 50)
	var actions []string
	for _, e := range es {
		actions = append(actions, e.Action)
	}
	got := strings.Join(actions, " ")
	for _, want := range []string{store.AuditNumberConnected, store.AuditNumberDisconnect, store.AuditUserInvited} {
		if !strings.Contains(got, want) {
			t.Errorf("audit log %q lacks %s", got, want)
		}
	}
}

// Changing the password needs the current one, signs the other sessions out and keeps this
// one.
func TestChangePassword(t *testing.T) {
	env := newEnv(t, true)
	u := signUp(t, env, "Acme", "owner@acme.example")
	other := newUser(t, env)
	if p := other.post("/dashboard/signin", url.Values{"email": {"owner@acme.example"}, "password": {"correct horse battery"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("second sign-in: %d", p.Status)
	}
	if p := u.post("/dashboard/password", url.Values{"current_password": {"wrong one!!"}, "new_password": {"a new good password"}}); p.Status != http.StatusUnprocessableEntity {
		t.Fatalf("wrong current password: %d", p.Status)
	}
	if p := u.post("/dashboard/password", url.Values{"current_password": {"correct horse battery"}, "new_password": {"short"}}); p.Status != http.StatusUnprocessableEntity {
		t.Fatalf("short new password: %d", p.Status)
	}
	if p := u.post("/dashboard/password", url.Values{"current_password": {"correct horse battery"}, "new_password": {"a new good password"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("change: %d", p.Status)
	}
	if p := u.get("/dashboard/keys"); p.Status != http.StatusOK {
		t.Fatalf("this session after the change: %d", p.Status)
	}
	if p := other.get("/dashboard/keys"); p.Status != http.StatusSeeOther {
		t.Fatalf("the other session after the change: %d", p.Status)
	}
	fresh := newUser(t, env)
	if p := fresh.post("/dashboard/signin", url.Values{"email": {"owner@acme.example"}, "password": {"a new good password"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("sign-in with the new password: %d", p.Status)
	}
}

// Sign-up refuses bad fields with messages tied to them, and a taken email (any case).
func TestSignUpValidation(t *testing.T) {
	env := newEnv(t, true)
	u := newUser(t, env)
	p := u.post("/dashboard/signup", url.Values{"workspace": {""}, "email": {"not an email"}, "password": {"short"}})
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, `id="email-error"`) || !strings.Contains(p.Body, `id="workspace-error"`) {
		t.Fatalf("bad sign-up: %d", p.Status)
	}
	signUp(t, env, "Acme", "owner@acme.example")
	p = u.post("/dashboard/signup", url.Values{"workspace": {"Other"}, "email": {"OWNER@acme.example"}, "password": {"correct horse battery"}})
	if p.Status != http.StatusUnprocessableEntity {
		t.Fatalf("taken email: %d", p.Status)
	}
}

// With sign-up closed, the form and the post are refused; sign-in still works.
func TestSignUpClosed(t *testing.T) {
	env := servertest.New(t, servertest.Config{Dashboard: dashboard.Options{Development: true}})
	u := newUser(t, env)
	if p := u.get("/dashboard/signup"); p.Status != http.StatusForbidden || !strings.Contains(p.Body, "closed") {
		t.Fatalf("sign-up page: %d", p.Status)
	}
	if p := u.post("/dashboard/signup", url.Values{"workspace": {"X"}, "email": {"x@example.com"}, "password": {"correct horse battery"}}); p.Status != http.StatusForbidden {
		t.Fatalf("sign-up post: %d", p.Status)
	}
	if p := u.get("/dashboard/signin"); p.Status != http.StatusOK || strings.Contains(p.Body, `href="/dashboard/signup"`) {
		t.Fatalf("sign-in page offers sign-up while closed: %d", p.Status)
	}
	var n int
	env.Store.DB().Get(&n, `SELECT count(*) FROM users`)
	if n != 0 {
		t.Fatalf("%d users after a closed sign-up", n)
	}
}
