package dashboard_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"gateway/server/dashboard/browsertest"
)

// Every pagination link, followed in Chromium by keyboard: the messages list (with a filter,
// which the link must keep), a contact's messages, the contacts list (next, then previous) and
// the request log (with a filter). Each link must load a page whose first row differs from the
// page it was on, and every page passes axe-core. Before the fix html/template escaped the
// link's query a second time ("=" as %3d), so each link loaded the first page again.
func TestBrowserPagingLinks(t *testing.T) {
	env := reportsEnv(t)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	b.Run("open sign-up", chromedp.Navigate(base+"/signup"), chromedp.WaitVisible("#email", chromedp.ByQuery))
	b.Run("fill sign-up",
		chromedp.SendKeys("#workspace", "Paging Co", chromedp.ByQuery),
		chromedp.SendKeys("#email", "paging@example.com", chromedp.ByQuery),
		chromedp.SendKeys("#password", "a long enough password", chromedp.ByQuery))
	b.PressOn(`form[action="/dashboard/signup"] button[type=submit]`)
	acc := accountOf(t, env.Store, "paging@example.com")

	// 61 contacts; the first has 60 sent messages, one a minute; an endpoint with 60 logged
	// attempts, one a second.
	db := env.Store.DB()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var contact, conv, endpoint int64
	must(db.Get(&contact, `INSERT INTO contacts (account_id, mobile, name) VALUES ($1, '5511900000000', 'Ana Souza') RETURNING id`, acc))
	_, err := db.Exec(`INSERT INTO contacts (account_id, mobile, name)
		SELECT $1, '55119000' || lpad(i::text, 5, '0'), 'Contact ' || i FROM generate_series(1, 60) i`, acc)
	must(err)
	must(db.Get(&conv, `INSERT INTO conversations (account_id, contact_id) VALUES ($1, $2) RETURNING id`, acc, contact))
	base0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	_, err = db.Exec(`INSERT INTO messages (account_id, contact_id, conversation_id, direction, type, destination, template_name,
			content, platform_message_id, status, created_at, sent_at)
		SELECT $1, $2, $3, 'out', 'template', '5511900000000', 'order_confirmation', '{"language": "en_US"}',
			'wamid.page-' || i, 'sent', $4::timestamptz + i * interval '1 minute', $4::timestamptz + i * interval '1 minute'
		FROM generate_series(1, 60) i`, acc, contact, conv, base0)
	must(err)
	must(db.Get(&endpoint, `INSERT INTO webhook_endpoints (account_id, url, secret) VALUES ($1, 'http://127.0.0.1:9/hook', '\x00') RETURNING id`, acc))
	for i := range 60 {
		var event, delivery string
		must(db.Get(&event, `INSERT INTO events (account_id, type, data, created_at) VALUES ($1, 'message.sent', '{}', now()) RETURNING id`, acc))
		must(db.Get(&delivery, `SELECT id FROM webhook_deliveries WHERE account_id = $1 AND event_id = $2`, acc, event))
		_, err := db.Exec(`INSERT INTO webhook_attempts (account_id, delivery_id, attempt, attempted_at, status_code, latency_ms)
			VALUES ($1, $2, 1, $3, 200, 12)`, acc, delivery, base0.Add(time.Duration(i)*time.Second))
		must(err)
	}

	// follow opens start, reads the first row through firstRow, presses the link, and checks the
	// new page's first row differs and its address carries want.
	follow := func(name, start, link, firstRow string, want ...string) {
		t.Helper()
		b.Run("open "+name, chromedp.Navigate(start), chromedp.WaitVisible(link, chromedp.ByQuery))
		before := b.Text(firstRow)
		b.FocusAndPress(link)
		after := b.Text(firstRow)
		if after == before {
			t.Fatalf("%s: %s loaded the same first row %q (at %s)", name, link, after, b.Location())
		}
		u, err := url.Parse(b.Location())
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(u.RawQuery, w) {
				t.Fatalf("%s: the page after %s is %s, without %q", name, link, u, w)
			}
		}
		b.CheckPage(name + "-page-2")
	}
	follow("messages", base+"/messages?status=sent", "#older-messages", "#messages tbody tr", "status=sent", "after=")
	follow("contact", fmt.Sprintf("%s/contacts/%d", base, contact), "#older-messages", "#contact-messages tbody tr", "after=")
	follow("contacts", base+"/contacts", "#next-page", "#contacts tbody tr", "page=2")
	follow("contacts-back", base+"/contacts?page=2", "#prev-page", "#contacts tbody tr", "page=1")
	follow("request-log", fmt.Sprintf("%s/request-log?outcome=succeeded&endpoint=%d", base, endpoint), "#older-attempts", "table.log tbody tr",
		"outcome=succeeded", "before=")
}
