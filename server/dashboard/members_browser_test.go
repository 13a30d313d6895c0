package dashboard_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"gateway/server/dashboard/browsertest"
)

// The members page and invitation management in real Chromium, by keyboard: an owner resends
// an expired invitation (the new link is shown once) and revokes another, promotes a developer
// and removes them, and is refused when removing themselves as the last owner. Each page is
// checked with axe-core.
func TestBrowserMembersAndInvitations(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme Retail", "owner@acme.example")
	join(t, env, owner, "dev@acme.example", "developer")
	devID := userID(t, env, "dev@acme.example")
	ownerID := userID(t, env, "owner@acme.example")
	owner.post("/dashboard/invite", url.Values{"email": {"late@acme.example"}, "role": {"developer"}})
	owner.post("/dashboard/invite", url.Values{"email": {"gone@acme.example"}, "role": {"owner"}})
	env.Store.DB().MustExec(`UPDATE invitations SET expires_at = now() - interval '1 hour' WHERE email = 'late@acme.example'`)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"

	b.Run("sign in", chromedp.Navigate(base+"/signin"), chromedp.WaitVisible("#email", chromedp.ByQuery),
		chromedp.SendKeys("#email", "owner@acme.example", chromedp.ByQuery),
		chromedp.SendKeys("#password", "correct horse battery", chromedp.ByQuery))
	b.PressOn(`form[action="/dashboard/signin"] button[type=submit]`)
	// rows reads a table's rows as lines of tab-separated cells, whatever the layout (on a
	// phone the rows are cards).
	rows := func(table string) string {
		var out string
		b.Eval(fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map(r => Array.from(r.cells).map(c => c.textContent.trim()).join("\t")).join("\n")`,
			table+" tbody tr"), &out)
		return out
	}
	// On a phone the navigation is behind the Menu disclosure: open it as a person taps Menu.
	var narrow bool
	b.Eval(`document.querySelector("#menu summary").offsetParent !== null`, &narrow)
	if narrow {
		b.Run("open the menu", chromedp.Click("#menu summary", chromedp.ByQuery))
	}
	b.PressOn(`nav a[href="/dashboard/members"]`)
	if got := b.Text("#members tbody"); !strings.Contains(got, "owner@acme.example") || !strings.Contains(got, "dev@acme.example") {
		t.Fatalf("members table: %q", got)
	}
	if got := b.Text("#invitations tbody"); !strings.Contains(got, "late@acme.example") || !strings.Contains(got, "expired") || !strings.Contains(got, "gone@acme.example") {
		t.Fatalf("invitations table: %q", got)
	}
	b.CheckPage("members")

	b.PressOn(`button[aria-label="Resend the invitation to late@acme.example"]`)
	if got := b.Text(".once"); !strings.Contains(got, "New invitation link for late@acme.example") || !strings.Contains(b.Text("#invite-link"), "/dashboard/signup?invite=") {
		t.Fatalf("resend: %q", got)
	}
	if strings.Contains(b.Text("#invitations tbody"), "expired") {
		t.Fatal("the resent invitation is still marked expired")
	}
	b.CheckPage("invitation-resent")

	b.PressOn(`button[aria-label="Revoke the invitation to gone@acme.example"]`)
	if !strings.Contains(b.Text("main .notice"), "invitation was revoked") || strings.Contains(b.Text("#invitations tbody"), "gone@acme.example") {
		t.Fatalf("revoke: %q", b.Text("main"))
	}
	b.CheckPage("invitation-revoked")

	b.PressOn(`a[aria-label="Manage dev@acme.example"]`)
	b.CheckPage("member")
	b.Run("choose owner", chromedp.Click(`input[name=role][value=owner]`, chromedp.ByQuery))
	b.PressOn(fmt.Sprintf(`form[action="/dashboard/members/%d/role"] button[type=submit]`, devID))
	if !strings.Contains(b.Text("main .notice"), "role was changed") || !strings.Contains(rows("#members"), "dev@acme.example\towner") {
		t.Fatalf("role change: %q", b.Text("main"))
	}
	b.PressOn(`a[aria-label="Manage dev@acme.example"]`)
	b.PressOn(fmt.Sprintf(`form[action="/dashboard/members/%d/remove"] button[type=submit]`, devID))
	if !strings.Contains(b.Text("main .notice"), "member was removed") || strings.Contains(b.Text("#members tbody"), "dev@acme.example") {
		t.Fatalf("removal: %q", b.Text("main"))
	}
	b.CheckPage("member-removed")

	b.PressOn(`a[aria-label="Manage owner@acme.example"]`)
	b.PressOn(fmt.Sprintf(`form[action="/dashboard/members/%d/remove"] button[type=submit]`, ownerID))
	if !strings.Contains(b.Text("main .error"), "only owner") {
		t.Fatalf("removing the last owner: %q", b.Text("main"))
	}
	b.CheckPage("last-owner-refused")

	// In a deactivated workspace the pages say so and a change is refused with the reason.
	if _, err := env.Store.SetAccountActive(context.Background(), accountOf(t, env.Store, "owner@acme.example"), false); err != nil {
		t.Fatal(err)
	}
	b.Run("members, deactivated", chromedp.Navigate(base+"/members"), chromedp.WaitVisible("#inactive-notice", chromedp.ByQuery))
	b.CheckPage("members-deactivated")
	b.PressOn(`button[aria-label="Resend the invitation to late@acme.example"]`)
	if got := b.Text("main .error"); !strings.Contains(got, "read-only") {
		t.Fatalf("a change in a deactivated workspace: %q", b.Text("main"))
	}
	b.CheckPage("change-refused-deactivated")
}
