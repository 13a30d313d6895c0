package dashboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"gateway/platform/simulator"
	"gateway/server/dashboard/browsertest"
	"gateway/server/servertest"
	"gateway/store"
)

// The panel's send form checks a number with its country's rules, in Chromium at 1280 and
// 390 px with axe-core: 987654321 (a Brazilian mobile typed without its country code, which
// reads as an Iranian number) is refused next to the number's input with what to type instead,
// and nothing reaches the platform; a Brazilian mobile in the form WhatsApp keeps without its
// ninth digit passes; the message's page then shows the number in international format.
func TestBrowserSendFormCountryRules(t *testing.T) {
	env := reportsEnv(t)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	acc := signUpInBrowser(t, b, env, "Padaria Rules", "rules@example.com")
	conn := env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Padaria Rules"}})
	env.Sim.SeedTemplates(conn.WabaID, simulator.DefaultTemplates())
	if _, err := env.Server.SyncTemplates(context.Background(), acc); err != nil {
		t.Fatal(err)
	}
	var tpl int64
	if err := env.Store.DB().Get(&tpl, `SELECT id FROM templates WHERE account_id = $1 AND name = 'order_confirmation'`, acc); err != nil {
		t.Fatal(err)
	}
	fill := func(number string) {
		b.Run("send page", chromedp.Navigate(fmt.Sprintf("%s/send?template=%d", base, tpl)), chromedp.WaitVisible("#send-form", chromedp.ByQuery))
		b.Run("fill send",
			chromedp.SendKeys("#s-destination", number, chromedp.ByQuery),
			chromedp.SendKeys("#s-body-0", "Ana", chromedp.ByQuery),
			chromedp.SendKeys("#s-body-1", "ORD-7781", chromedp.ByQuery))
		b.PressOn("#send-button")
	}
	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		fill("987654321")
		if got := b.Text("#s-destination-error"); !strings.Contains(got, "+987654321 is not a valid number in Iran") || !strings.Contains(got, "starting with the country code") {
			t.Errorf("at %d px the number's refusal reads %q", width, got)
		}
		var invalid string
		b.Eval(`document.querySelector("#s-destination").getAttribute("aria-invalid")`, &invalid)
		if invalid != "true" {
			t.Errorf("the refused number is not marked invalid: %q", invalid)
		}
		b.CheckPage(fmt.Sprintf("send-refused-number-%d", width))
		if n := len(env.Sim.Sent()); n != 0 {
			t.Fatalf("the refused number reached the platform: %d sends", n)
		}
	}
	// A Brazilian mobile as WhatsApp may keep it, without the ninth digit, is the same person.
	fill("+55 11 8765-4321")
	var msg int64
	if _, err := fmt.Sscanf(b.Location(), env.URL+"/dashboard/messages/%d", &msg); err != nil {
		t.Fatalf("after the send: %s (%s)", b.Location(), b.Text("main"))
	}
	if got := b.Text("main"); !strings.Contains(got, "+551187654321") {
		t.Errorf("the message page lacks the number: %s", got)
	}
	fill("5511987654321")
	if got := b.Text("main"); !strings.Contains(got, "+55 11 98765-4321") {
		t.Errorf("the message page does not show the number in international format: %s", got)
	}
	b.CheckPage("message-formatted-number")
	if n := len(env.Sim.Sent()); n != 2 {
		t.Errorf("the platform received %d sends, want 2", n)
	}
}

// The campaign's CSV, downloaded from its page in Chromium, names the contact, the caller's
// reference, the delivered and read times and the variables of each message, and is named after
// the campaign.
func TestBrowserCampaignCSVEnriched(t *testing.T) {
	env := reportsEnv(t)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	acc := signUpInBrowser(t, b, env, "Padaria Export", "export@example.com")
	s := seedReports(t, env, acc)
	if _, err := env.Store.DB().Exec(`UPDATE messages SET client_reference = 'order-7781' WHERE account_id = $1 AND id = $2`, acc, s.read); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		b.Run("campaign", chromedp.Navigate(fmt.Sprintf("%s/campaigns/%d", base, s.campaign)), chromedp.WaitVisible("main", chromedp.ByQuery))
		var href string
		b.Eval(`(Array.from(document.querySelectorAll("a")).find(a => a.href.endsWith("/export.csv")) || {}).getAttribute("href")`, &href)
		if href != fmt.Sprintf("/dashboard/campaigns/%d/export.csv", s.campaign) {
			t.Fatalf("at %d px the campaign's CSV link is %q", width, href)
		}
		b.CheckPage(fmt.Sprintf("campaign-export-%d", width))
		var disposition string
		b.Run("headers", chromedp.Evaluate(fmt.Sprintf(`fetch(%q).then(r => r.headers.get("Content-Disposition"))`, href), &disposition, awaitPromise))
		if !strings.Contains(disposition, `filename="spring-sale.csv"`) {
			t.Errorf("the CSV's name: %q", disposition)
		}
		rows := parseCSV(t, fetchText(b, href))
		if len(rows) != 5 {
			t.Fatalf("%d rows", len(rows))
		}
		for _, r := range rows {
			if r["contact_name"] != "Ana Souza" || r["variables"] != `["Ana", "ORD-7781"]` {
				t.Errorf("row %s: name %q, variables %q", r["message_id"], r["contact_name"], r["variables"])
			}
			switch r["message_id"] {
			case fmt.Sprint(s.read):
				if r["client_reference"] != "order-7781" || r["read_at"] != "2026-11-20T10:50:01Z" {
					t.Errorf("the read row: %+v", r)
				}
			case fmt.Sprint(s.ids[1]):
				if r["delivered_at"] != "2026-11-20T09:35:01Z" || r["read_at"] != "" {
					t.Errorf("the delivered row: %+v", r)
				}
			}
		}
	}
}

// The sign-up page while signed in says who is signed in, in which workspace, and offers to
// sign out first instead of its form (a post of the form is refused and changes no session);
// "Sign out, then sign up" ends the session and opens the empty form. Chromium at 1280 and
// 390 px, axe-core on each page.
func TestBrowserSignUpWhileSignedIn(t *testing.T) {
	env := reportsEnv(t)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	for i, width := range []int{1280, 390} {
		atWidth(b, width)
		email := fmt.Sprintf("first%d@example.com", i)
		signUpInBrowser(t, b, env, "First Bakery", email)
		b.Run("sign-up again", chromedp.Navigate(base+"/signup"), chromedp.WaitVisible("#signed-in-notice", chromedp.ByQuery))
		if got := b.Text("#signed-in-notice"); !strings.Contains(got, "You are signed in as "+email+" in the workspace First Bakery") {
			t.Errorf("at %d px the notice reads %q", width, got)
		}
		var forms int
		b.Eval(`document.querySelectorAll('form[action="/dashboard/signup"]').length`, &forms)
		if forms != 0 {
			t.Errorf("at %d px the sign-up form is offered while signed in", width)
		}
		b.CheckPage(fmt.Sprintf("signup-signed-in-%d", width))
		// A form posted from an older tab creates nobody and keeps the session.
		var status int
		b.Run("stale post", chromedp.Evaluate(`fetch("/dashboard/signup", {method: "POST", body: new URLSearchParams({workspace: "Other", email: "other@example.com", password: "a long enough password"})}).then(r => r.status)`, &status, awaitPromise))
		var users int
		if err := env.Store.DB().Get(&users, `SELECT count(*) FROM users WHERE email = 'other@example.com'`); err != nil {
			t.Fatal(err)
		}
		if status != 409 || users != 0 {
			t.Errorf("a sign-up posted while signed in: %d, %d users made", status, users)
		}
		b.Run("still signed in", chromedp.Navigate(base+"/"), chromedp.WaitVisible("header .workspace", chromedp.ByQuery))
		if got := b.Text("header .workspace"); !strings.Contains(got, "First Bakery") {
			t.Errorf("the session changed: %q", got)
		}
		b.Run("sign-up page", chromedp.Navigate(base+"/signup"), chromedp.WaitVisible("#signed-in-notice", chromedp.ByQuery))
		b.PressOn(`#signed-in-notice ~ .actions button[type=submit]`)
		if loc := b.Location(); loc != base+"/signup" {
			t.Errorf("after signing out: %s", loc)
		}
		b.Run("form", chromedp.WaitVisible("#email", chromedp.ByQuery))
		var notice int
		b.Eval(`document.querySelectorAll("#signed-in-notice").length`, &notice)
		if notice != 0 {
			t.Errorf("still signed in after signing out")
		}
		b.CheckPage(fmt.Sprintf("signup-signed-out-%d", width))
		b.Run("sign-in page", chromedp.Navigate(base+"/signin"), chromedp.WaitVisible("#email", chromedp.ByQuery))
		b.CheckPage(fmt.Sprintf("signin-%d", width))
	}
}
