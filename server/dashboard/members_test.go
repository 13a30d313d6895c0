package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"gateway/server/servertest"
	"gateway/store"
)

// join invites email into the owner's workspace with the role and signs the new user up
// through the link.
func join(t *testing.T, env *servertest.Env, owner *user, email, role string) *user {
	t.Helper()
	tok := mustInviteToken(t, owner.post("/dashboard/invite", url.Values{"email": {email}, "role": {role}}).Body)
	u := newUser(t, env)
	if p := u.post("/dashboard/signup", url.Values{"invite": {tok}, "email": {email}, "password": {"another good password"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("join %s: %d\n%s", email, p.Status, p.Body)
	}
	return u
}

func userID(t *testing.T, env *servertest.Env, email string) int64 {
	t.Helper()
	u, err := env.Store.UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

func auditActions(t *testing.T, env *servertest.Env, acct int64) string {
	t.Helper()
	es, err := env.Store.AuditLog(context.Background(), acct, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Action+" "+e.Target+" "+e.Detail)
	}
	return strings.Join(out, "\n")
}

// Every member sees the members page; only owners change roles and remove members (a
// developer's posts are 404 and change nothing); a role change applies at the member's next
// request; a removed member's session ends; another workspace's member is a 404; each change
// is audited.
func TestMembersRolesAndRemoval(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme", "owner@acme.example")
	acct := accountOf(t, env.Store, "owner@acme.example")
	dev := join(t, env, owner, "dev@acme.example", "developer")
	devID := userID(t, env, "dev@acme.example")
	signUp(t, env, "Beta", "bob@beta.example")
	bobID := userID(t, env, "bob@beta.example")

	p := dev.get("/dashboard/members")
	if p.Status != http.StatusOK || !strings.Contains(p.Body, "owner@acme.example") || !strings.Contains(p.Body, "dev@acme.example") ||
		strings.Contains(p.Body, "/dashboard/members/") || strings.Contains(p.Body, "Pending invitations") {
		t.Fatalf("developer's members page: %d\n%s", p.Status, p.Body)
	}
	ownerID := userID(t, env, "owner@acme.example")
	for _, path := range []string{fmt.Sprintf("/dashboard/members/%d/role", ownerID), fmt.Sprintf("/dashboard/members/%d/remove", ownerID)} {
		if p := dev.post(path, url.Values{"role": {"developer"}}); p.Status != http.StatusForbidden || !strings.Contains(p.Body, "Only owners can manage members") {
			t.Errorf("developer POST %s = %d, want 403 saying only owners can", path, p.Status)
		}
	}
	if p := dev.get(fmt.Sprintf("/dashboard/members/%d", ownerID)); p.Status != http.StatusForbidden {
		t.Errorf("developer's member page = %d, want 403", p.Status)
	}
	if m, _ := env.Store.MemberByID(context.Background(), acct, ownerID); m.Role != store.RoleOwner {
		t.Fatalf("the owner after the developer's posts: %+v", m)
	}

	// Another workspace's user is not found here.
	if p := owner.post(fmt.Sprintf("/dashboard/members/%d/remove", bobID), nil); p.Status != http.StatusNotFound {
		t.Errorf("removing another workspace's member = %d, want 404", p.Status)
	}
	if p := owner.post(fmt.Sprintf("/dashboard/members/%d/role", devID), url.Values{"role": {"admin"}}); p.Status != http.StatusUnprocessableEntity {
		t.Errorf("an unknown role = %d, want 422", p.Status)
	}

	if p := owner.post(fmt.Sprintf("/dashboard/members/%d/role", devID), url.Values{"role": {"owner"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("make the developer an owner: %d\n%s", p.Status, p.Body)
	}
	if p := dev.get("/dashboard/audit"); p.Status != http.StatusOK {
		t.Fatalf("the promoted member's audit page: %d", p.Status)
	}
	if p := owner.post(fmt.Sprintf("/dashboard/members/%d/role", devID), url.Values{"role": {"developer"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("make them a developer again: %d", p.Status)
	}
	if p := owner.post(fmt.Sprintf("/dashboard/members/%d/remove", devID), nil); p.Status != http.StatusSeeOther {
		t.Fatalf("remove: %d", p.Status)
	}
	if p := dev.get("/dashboard/keys"); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/signin" {
		t.Fatalf("the removed member's session: %d %s", p.Status, p.Header.Get("Location"))
	}
	if _, err := env.Store.MemberByID(context.Background(), acct, devID); err == nil {
		t.Fatal("the removed member is still a member")
	}
	got := auditActions(t, env, acct)
	for _, want := range []string{"member.role_changed dev@acme.example developer → owner", "member.role_changed dev@acme.example owner → developer",
		"member.removed dev@acme.example role developer"} {
		if !strings.Contains(got, want) {
			t.Errorf("audit log lacks %q:\n%s", want, got)
		}
	}
}

// The last owner cannot be removed or demoted (409 with the reason, nothing changed); with a
// second owner, either can leave. Two owners demoting each other at once leave one owner.
func TestLastOwnerKept(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme", "owner@acme.example")
	acct := accountOf(t, env.Store, "owner@acme.example")
	ownerID := userID(t, env, "owner@acme.example")
	for path, form := range map[string]url.Values{
		fmt.Sprintf("/dashboard/members/%d/role", ownerID):   {"role": {"developer"}},
		fmt.Sprintf("/dashboard/members/%d/remove", ownerID): nil,
	} {
		p := owner.post(path, form)
		if p.Status != http.StatusConflict || !strings.Contains(p.Body, "only owner") {
			t.Errorf("POST %s for the last owner: %d", path, p.Status)
		}
	}
	if m, err := env.Store.MemberByID(context.Background(), acct, ownerID); err != nil || m.Role != store.RoleOwner {
		t.Fatalf("the last owner after the refusals: %+v %v", m, err)
	}

	second := join(t, env, owner, "second@acme.example", "owner")
	secondID := userID(t, env, "second@acme.example")
	var wg sync.WaitGroup
	for _, c := range []struct {
		u      *user
		target int64
	}{{owner, secondID}, {second, ownerID}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.u.post(fmt.Sprintf("/dashboard/members/%d/role", c.target), url.Values{"role": {"developer"}})
		}()
	}
	wg.Wait()
	var owners int
	env.Store.DB().Get(&owners, `SELECT count(*) FROM memberships WHERE account_id = $1 AND role = 'owner'`, acct)
	if owners != 1 {
		t.Fatalf("after two owners demoted each other at once: %d owners, want 1", owners)
	}
}

// Owners see the pending invitations; resending makes a new link (shown once) with a new
// expiry and the old link stops working; revoking stops the link; another workspace's
// invitation is a 404; each is audited.
func TestInvitationsResendAndRevoke(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme", "owner@acme.example")
	acct := accountOf(t, env.Store, "owner@acme.example")
	other := signUp(t, env, "Beta", "bob@beta.example")
	old := mustInviteToken(t, owner.post("/dashboard/invite", url.Values{"email": {"x@acme.example"}, "role": {"developer"}}).Body)
	yTok := mustInviteToken(t, owner.post("/dashboard/invite", url.Values{"email": {"y@acme.example"}, "role": {"owner"}}).Body)
	invs, err := env.Store.PendingInvitations(context.Background(), acct, 10)
	if err != nil || len(invs) != 2 {
		t.Fatalf("pending invitations: %+v %v", invs, err)
	}
	x, y := invs[1], invs[0]
	env.Store.DB().MustExec(`UPDATE invitations SET expires_at = now() - interval '1 hour' WHERE id = $1`, x.ID)
	p := owner.get("/dashboard/members")
	if !strings.Contains(p.Body, "x@acme.example") || !strings.Contains(p.Body, "y@acme.example") || !strings.Contains(p.Body, "expired") {
		t.Fatalf("members page lists the invitations:\n%s", p.Body)
	}
	// Another workspace cannot touch them.
	for _, path := range []string{fmt.Sprintf("/dashboard/invitations/%d/resend", x.ID), fmt.Sprintf("/dashboard/invitations/%d/revoke", y.ID)} {
		if p := other.post(path, nil); p.Status != http.StatusNotFound {
			t.Errorf("another workspace's POST %s = %d, want 404", path, p.Status)
		}
	}
	p = owner.post(fmt.Sprintf("/dashboard/invitations/%d/resend", x.ID), nil)
	fresh := mustInviteToken(t, p.Body)
	if p.Status != http.StatusOK || fresh == old {
		t.Fatalf("resend: %d", p.Status)
	}
	if _, err := env.Store.InvitationByToken(context.Background(), sha256Of(old)); err == nil {
		t.Error("the old link still works after a resend")
	}
	inv, err := env.Store.InvitationByToken(context.Background(), sha256Of(fresh))
	if err != nil || inv.ID != x.ID {
		t.Fatalf("the new link: %+v %v", inv, err)
	}
	if p := owner.post(fmt.Sprintf("/dashboard/invitations/%d/revoke", y.ID), nil); p.Status != http.StatusSeeOther {
		t.Fatalf("revoke: %d", p.Status)
	}
	invs, _ = env.Store.PendingInvitations(context.Background(), acct, 10)
	if len(invs) != 1 || invs[0].ID != x.ID {
		t.Fatalf("pending after the revoke: %+v", invs)
	}
	if p := newUser(t, env).post("/dashboard/signup", url.Values{"invite": {yTok}, "email": {"y@acme.example"}, "password": {"another good password"}}); p.Status != http.StatusNotFound {
		t.Errorf("sign-up with the revoked link = %d, want 404", p.Status)
	}
	if p := owner.post(fmt.Sprintf("/dashboard/invitations/%d/revoke", y.ID), nil); p.Status != http.StatusNotFound {
		t.Errorf("revoking twice = %d, want 404", p.Status)
	}
	if p := newUser(t, env).get("/dashboard/signup?invite=" + fresh); p.Status != http.StatusOK {
		t.Fatalf("the resent link: %d", p.Status)
	}
	got := auditActions(t, env, acct)
	for _, want := range []string{"invitation.resent x@acme.example", "invitation.revoked y@acme.example"} {
		if !strings.Contains(got, want) {
			t.Errorf("audit log lacks %q:\n%s", want, got)
		}
	}
}
