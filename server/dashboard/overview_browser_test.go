package dashboard_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"gateway/server/dashboard/browsertest"
	"gateway/server/servertest"
	"gateway/store"
)

// The overview in Chromium at 1280 and 390 px with axe-core: a new workspace has nothing to look
// at and is told to connect its number; after a day of sends it shows the last 24 hours (sent,
// delivery rate, failed, replies), lists what needs attention (the number's quality, a failing
// webhook endpoint, failed messages, a rejected template) with links, and the next step.
func TestBrowserOverviewDay(t *testing.T) {
	env := reportsEnv(t)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	acc := signUpInBrowser(t, b, env, "Overview Bakery", "overview@example.com")
	text := func(sel string) string {
		var s string
		b.Eval(fmt.Sprintf(`(document.querySelector(%q) || {}).innerText || ""`, sel), &s)
		return strings.Join(strings.Fields(s), " ")
	}
	b.Run("overview", chromedp.Navigate(base+"/"), chromedp.WaitVisible("#last-day", chromedp.ByQuery))
	if got := text("#attention"); !strings.Contains(got, "Nothing") {
		t.Errorf("a new workspace's attention list: %q", got)
	}
	if got := text("#next-step"); !strings.Contains(got, "Connect your WhatsApp number") {
		t.Errorf("a new workspace's next step: %q", got)
	}

	env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Overview Bakery"}})
	db := env.Store.DB()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := db.Exec(`UPDATE connections SET quality_rating = 'YELLOW', messaging_limit = 'TIER_1K', details_for = phone_number_id WHERE account_id = $1`, acc)
	must(err)
	b.Run("templates", chromedp.Navigate(base+"/templates"), chromedp.WaitVisible("#sync-now", chromedp.ByQuery))
	b.PressOn("#sync-now")
	var contact, conv, campaign int64
	must(db.Get(&contact, `INSERT INTO contacts (account_id, mobile, name) VALUES ($1, '5511987654321', 'Ana') RETURNING id`, acc))
	must(db.Get(&conv, `INSERT INTO conversations (account_id, contact_id) VALUES ($1, $2) RETURNING id`, acc, contact))
	must(db.Get(&campaign, `INSERT INTO campaigns (account_id, name) VALUES ($1, 'Today') RETURNING id`, acc))
	for i, st := range []string{"sent", "read", "failed"} {
		_, err := db.Exec(`INSERT INTO messages (account_id, contact_id, conversation_id, campaign_id, direction, type, destination,
				template_name, content, platform_message_id, status, created_at, sent_at)
			VALUES ($1, $2, $3, $4, 'out', 'template', '5511987654321', 'order_confirmation', '{}', $5, $6, now() - interval '1 hour', now() - interval '1 hour')`,
			acc, contact, conv, campaign, fmt.Sprintf("wamid.day-%d", i), st)
		must(err)
	}
	// Two days ago: not in the day.
	_, err = db.Exec(`INSERT INTO messages (account_id, contact_id, conversation_id, campaign_id, direction, type, destination,
			template_name, content, platform_message_id, status, created_at, sent_at)
		VALUES ($1, $2, $3, $4, 'out', 'template', '5511987654321', 'order_confirmation', '{}', 'wamid.old', 'failed', now() - interval '2 days', now() - interval '2 days')`,
		acc, contact, conv, campaign)
	must(err)
	_, err = db.Exec(`INSERT INTO messages (account_id, contact_id, conversation_id, direction, type, destination, content, status)
		VALUES ($1, $2, $3, 'in', 'text', '5511987654321', '{"text": "Thanks!"}', 'received')`, acc, contact, conv)
	must(err)
	_, err = db.Exec(`INSERT INTO webhook_endpoints (account_id, url, secret, failing_since) VALUES ($1, 'https://hooks.example.com/in', '\x00', now() - interval '3 hours')`, acc)
	must(err)

	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		b.Run("overview", chromedp.Navigate(base+"/"), chromedp.WaitVisible("#last-day", chromedp.ByQuery))
		day := text("#day-sent") + " | " + text("#day-delivery") + " | " + text("#day-failed") + " | " + text("#day-replies")
		if day != "2 | 33.3 % | 1 | 1" {
			t.Errorf("at %d px the last day reads %q", width, day)
		}
		att := text("#attention")
		for _, want := range []string{"Your number's quality is Medium quality", "https://hooks.example.com/in has been failing since",
			"1 message failed in the last 24 hours. See why", "The template flash_sale was rejected. See the reasons"} {
			if !strings.Contains(att, want) {
				t.Errorf("at %d px the attention list lacks %q: %q", width, want, att)
			}
		}
		var links []string
		b.Eval(`Array.from(document.querySelectorAll("#attention a")).map(a => a.getAttribute("href"))`, &links)
		if len(links) != 4 || links[2] != "/dashboard/messages?status=failed" || links[3] != "/dashboard/templates?status=REJECTED" {
			t.Errorf("attention links %q", links)
		}
		if got := text("#next-step"); !strings.Contains(got, "Create an API key") {
			t.Errorf("the next step: %q", got)
		}
		b.CheckPage(fmt.Sprintf("overview-day-%d", width))
	}
}
