package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gateway/store"
)

// Someone who already has an account accepts an invitation by signing in through its link (the
// sign-up form refuses their email and points there); they keep their own workspace, switch
// between the two from the workspaces page, and cannot open a workspace they are not in.
func TestInvitationForAnExistingUserAndSwitchingWorkspaces(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme", "owner@acme.example")
	acme := accountOf(t, env.Store, "owner@acme.example")
	bob := signUp(t, env, "Beta", "bob@beta.example")
	beta := accountOf(t, env.Store, "bob@beta.example")
	signUp(t, env, "Gamma", "gina@gamma.example")
	gamma := accountOf(t, env.Store, "gina@gamma.example")

	p := owner.post("/dashboard/invite", url.Values{"email": {"bob@beta.example"}, "role": {"developer"}})
	tok := mustInviteToken(t, p.Body)

	// The sign-up form refuses the email in use and links to sign-in with the invitation.
	bob.post("/dashboard/signout", nil)
	p = bob.post("/dashboard/signup", url.Values{"invite": {tok}, "email": {"bob@beta.example"}, "password": {"another good password"}})
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, `href="/dashboard/signin?invite=`+tok+`"`) {
		t.Fatalf("sign-up with an email in use: %d, no link to sign in with the invitation", p.Status)
	}
	p = bob.get("/dashboard/signin?invite=" + tok)
	if p.Status != http.StatusOK || !strings.Contains(p.Body, "<strong>Acme</strong>") || !strings.Contains(p.Body, `name="invite" value="`+tok+`"`) {
		t.Fatalf("sign-in page with the invitation: %d\n%s", p.Status, p.Body)
	}
	// A wrong password joins nothing and keeps the invitation in the form.
	p = bob.post("/dashboard/signin", url.Values{"invite": {tok}, "email": {"bob@beta.example"}, "password": {"wrong password!"}})
	if p.Status != http.StatusUnauthorized || !strings.Contains(p.Body, `name="invite" value="`+tok+`"`) {
		t.Fatalf("wrong password with the invitation: %d", p.Status)
	}
	if n := memberships(t, env.Store, "bob@beta.example"); n != 1 {
		t.Fatalf("after a wrong password bob has %d memberships", n)
	}
	p = bob.post("/dashboard/signin", url.Values{"invite": {tok}, "email": {"bob@beta.example"}, "password": {"correct horse battery"}})
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/?notice=joined" {
		t.Fatalf("sign-in accepting the invitation: %d %s", p.Status, p.Header.Get("Location"))
	}
	if ws := openWorkspace(t, bob); ws != "Acme" {
		t.Fatalf("after accepting, the open workspace is %q, want Acme", ws)
	}
	es, _ := env.Store.AuditLog(context.Background(), acme, 0, 50)
	if len(es) == 0 || es[0].Action != store.AuditInvitationAccepted {
		t.Fatalf("Acme's audit log does not start with %s: %+v", store.AuditInvitationAccepted, es)
	}
	// The invitation is used up.
	bob2 := newUser(t, env)
	if p := bob2.post("/dashboard/signin", url.Values{"invite": {tok}, "email": {"bob@beta.example"}, "password": {"correct horse battery"}}); p.Status != http.StatusNotFound {
		t.Fatalf("the invitation used a second time: %d", p.Status)
	}

	// An invitation to a workspace bob is already in opens it and changes nothing else: his
	// role stays, and no second join is audited.
	tok2 := mustInviteToken(t, owner.post("/dashboard/invite", url.Values{"email": {"bob@beta.example"}, "role": {"owner"}}).Body)
	if p := bob2.post("/dashboard/signin", url.Values{"invite": {tok2}, "email": {"bob@beta.example"}, "password": {"correct horse battery"}}); p.Status != http.StatusSeeOther ||
		p.Header.Get("Location") != "/dashboard/?notice=already-member" {
		t.Fatalf("a second invitation to Acme: %d %s", p.Status, p.Header.Get("Location"))
	}
	if ws := openWorkspace(t, bob2); ws != "Acme" {
		t.Fatalf("the second invitation opened %q", ws)
	}
	if es, _ := env.Store.AuditLog(context.Background(), acme, 0, 50); es[0].Action != store.AuditUserInvited {
		t.Fatalf("a second join was audited: %+v", es[0])
	}

	// Both workspaces are listed, with the role in each; opening Beta switches the session.
	p = bob.get("/dashboard/workspaces")
	for _, want := range []string{"<td data-label=\"Workspace\">Acme</td>\n    <td data-label=\"Your role\">developer</td>", "<td data-label=\"Workspace\">Beta</td>\n    <td data-label=\"Your role\">owner</td>",
		fmt.Sprintf(`action="/dashboard/workspaces/%d"`, beta)} {
		if !strings.Contains(p.Body, want) {
			t.Fatalf("workspaces page lacks %q:\n%s", want, p.Body)
		}
	}
	if strings.Contains(p.Body, "Gamma") {
		t.Fatal("the workspaces page lists a workspace bob is not in")
	}
	if p := bob.post(fmt.Sprintf("/dashboard/workspaces/%d", beta), nil); p.Status != http.StatusSeeOther {
		t.Fatalf("switch to Beta: %d", p.Status)
	}
	if ws := openWorkspace(t, bob); ws != "Beta" {
		t.Fatalf("after switching, the open workspace is %q, want Beta", ws)
	}
	// Owner pages follow the role in the open workspace.
	if p := bob.get("/dashboard/audit"); p.Status != http.StatusOK {
		t.Fatalf("Beta's audit log for its owner: %d", p.Status)
	}
	// A workspace bob is not in is a 404, and his session stays where it was.
	for _, id := range []string{fmt.Sprint(gamma), "999999", "x"} {
		if p := bob.post("/dashboard/workspaces/"+id, nil); p.Status != http.StatusNotFound {
			t.Fatalf("switch to workspace %s: %d", id, p.Status)
		}
	}
	if ws := openWorkspace(t, bob); ws != "Beta" {
		t.Fatalf("after refused switches, the open workspace is %q, want Beta", ws)
	}
	// Signing in again opens the first workspace bob joined.
	bob.post("/dashboard/signout", nil)
	bob.post("/dashboard/signin", url.Values{"email": {"bob@beta.example"}, "password": {"correct horse battery"}})
	if ws := openWorkspace(t, bob); ws != "Beta" {
		t.Fatalf("a plain sign-in opens %q, want Beta", ws)
	}
}

// A link whose invitation is unknown shows the sign-in form without it.
func TestSignInWithABadInvitation(t *testing.T) {
	env := newEnv(t, true)
	p := newUser(t, env).get("/dashboard/signin?invite=nope")
	if p.Status != http.StatusNotFound || !strings.Contains(p.Body, "invitation link is not valid") || strings.Contains(p.Body, `name="invite"`) {
		t.Fatalf("sign-in with an unknown invitation: %d", p.Status)
	}
}

// openWorkspace is the workspace named in the page header of the user's session.
func openWorkspace(t *testing.T, u *user) string {
	t.Helper()
	p := u.get("/dashboard/")
	if p.Status != http.StatusOK {
		t.Fatalf("overview: %d", p.Status)
	}
	return strings.TrimSpace(find(t, regexpMust(`<span class="workspace">([^<]+)<`), p.Body))
}

func memberships(t *testing.T, st *store.Store, email string) int {
	t.Helper()
	u, err := st.UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := st.MembershipsByUser(context.Background(), u.ID)
	if err != nil {
		t.Fatal(err)
	}
	return len(ms)
}
