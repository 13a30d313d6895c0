package dashboard_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"gateway/server/dashboard/browsertest"
)

// An existing user accepts an invitation in real Chromium: the sign-up page sends them to
// sign in, a wrong password keeps the invitation, the right one opens the invited workspace;
// the workspaces page opens the other one by keyboard and says so. An unknown invitation link
// says it cannot be used. Each page is checked with axe-core.
func TestBrowserInvitationAndWorkspaces(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme Retail", "owner@acme.example")
	signUp(t, env, "Beta Logistics", "bob@beta.example")
	tok := mustInviteToken(t, owner.post("/dashboard/invite", url.Values{"email": {"bob@beta.example"}, "role": {"developer"}}).Body)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"

	b.Run("bad invitation", chromedp.Navigate(base+"/signin?invite=nope"), chromedp.WaitVisible("#email", chromedp.ByQuery))
	if !strings.Contains(b.Text("main"), "invitation link is not valid") {
		t.Fatal("an unknown invitation link says nothing")
	}
	b.CheckPage("signin-bad-invitation")

	b.Run("invitation, sign-up", chromedp.Navigate(base+"/signup?invite="+tok), chromedp.WaitVisible("#password", chromedp.ByQuery))
	b.Run("fill sign-up", chromedp.SendKeys("#password", "another good password", chromedp.ByQuery))
	b.PressOn(`form[action="/dashboard/signup"] button[type=submit]`)
	if main := b.Text("main"); !strings.Contains(main, "sign in to accept the invitation") || !strings.Contains(main, "invited to join Acme Retail") {
		t.Fatalf("sign-up with an email in use: %q", main)
	}
	b.CheckPage("signup-email-in-use")
	b.PressOn(`a[href^="/dashboard/signin?invite="]`)
	if !strings.Contains(b.Text("main"), "invited to join Acme Retail") {
		t.Fatalf("sign-in page with the invitation: %q", b.Text("main"))
	}
	b.CheckPage("signin-invitation")
	b.Run("wrong password", chromedp.SendKeys("#password", "wrong password!", chromedp.ByQuery))
	b.PressOn(`form[action="/dashboard/signin"] button[type=submit]`)
	if !strings.Contains(b.Text("main"), "incorrect") || !strings.Contains(b.Text("main"), "invited to join") {
		t.Fatalf("a wrong password: %q", b.Text("main"))
	}
	b.CheckPage("signin-invitation-wrong-password")
	b.Run("right password", chromedp.SendKeys("#password", "correct horse battery", chromedp.ByQuery))
	b.PressOn(`form[action="/dashboard/signin"] button[type=submit]`)
	if got := b.Text("header .workspace"); !strings.HasPrefix(got, "Acme Retail") {
		t.Fatalf("after accepting, the header says %q", got)
	}
	if !strings.Contains(b.Text("main .notice"), "joined this workspace") {
		t.Fatal("accepting the invitation says nothing")
	}
	b.CheckPage("invitation-accepted")

	b.Run("workspaces", chromedp.Navigate(base+"/workspaces"), chromedp.WaitVisible("table", chromedp.ByQuery))
	b.CheckPage("workspaces")
	b.PressOn(`form[action^="/dashboard/workspaces/"] button`)
	if got := b.Text("header .workspace"); !strings.HasPrefix(got, "Beta Logistics") {
		t.Fatalf("after opening Beta, the header says %q", got)
	}
	if !strings.Contains(b.Text("main .notice"), "You opened this workspace") {
		t.Fatal("opening a workspace says nothing")
	}
	b.CheckPage("workspace-opened")
}
