package dashboard_test

import (
	"encoding/csv"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"gateway/server/dashboard"
	"gateway/server/dashboard/browsertest"
)

// awaitPromise makes chromedp.Evaluate wait for the promise the expression returns.
func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

// fetchText fetches path from the page (with its session) and returns the body's text.
func fetchText(b *browsertest.Browser, path string) string {
	b.T.Helper()
	var body string
	b.Run("fetch "+path, chromedp.Evaluate(fmt.Sprintf(`fetch(%q, {credentials: "same-origin"}).then(r => r.text())`, path), &body, awaitPromise))
	return body
}

// parseCSV reads an export and checks its trailer: the data rows, by header name.
func parseCSV(t *testing.T, body string) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("csv: %v\n%s", err, body)
	}
	last := recs[len(recs)-1]
	if last[0] != dashboard.ExportTrailer || last[1] != fmt.Sprint(len(recs)-2) {
		t.Fatalf("csv trailer %q for %d rows", last, len(recs)-2)
	}
	var rows []map[string]string
	for _, r := range recs[1 : len(recs)-1] {
		row := map[string]string{}
		for i, h := range recs[0] {
			row[h] = r[i]
		}
		rows = append(rows, row)
	}
	return rows
}

// The messages list as a business reads it, in Chromium at 1280 and 390 px with axe-core on
// every page: each row names the contact and its number in international format; a search by
// part of a name, or by the number in any notation, finds that contact's messages (and an old
// contact=ID link still works); the template filter takes part of a name; a failed message says
// what happened and the next step in words; sent, delivered, read and failed badges differ in
// colour and in their mark; the list says how many messages match and downloads exactly those
// as CSV (cells neutralised against formulas); a customer's reply is listed as received, and the
// direction filter keeps it alone, and it opens on its own page from the list and from the
// contact's page; and a status that changes on the server changes on the list
// and on the message's page without a reload, a failure with its problem in words.
func TestBrowserMessagesList(t *testing.T) {
	env := reportsEnv(t)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	acc := signUpInBrowser(t, b, env, "Padaria Lima", "lima@example.com")
	s := seedReports(t, env, acc)
	db := env.Store.DB()
	var bruno, brunoConv, brunoMsg int64
	if err := db.Get(&bruno, `INSERT INTO contacts (account_id, mobile, name) VALUES ($1, '4915112345678', '=HYPERLINK("x") Bruno') RETURNING id`, acc); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&brunoConv, `INSERT INTO conversations (account_id, contact_id) VALUES ($1, $2) RETURNING id`, acc, bruno); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&brunoMsg, `INSERT INTO messages (account_id, contact_id, conversation_id, direction, type, destination, template_name,
			content, platform_message_id, status, created_at, sent_at)
		VALUES ($1, $2, $3, 'out', 'template', '4915112345678', 'shipping_update', '{"language": "de"}', 'wamid.bruno', 'sent',
			timestamptz '2026-11-20 08:00:00Z', timestamptz '2026-11-20 08:00:00Z') RETURNING id`, acc, bruno, brunoConv); err != nil {
		t.Fatal(err)
	}
	rows := func() []string {
		var ids []string
		b.Eval(`Array.from(document.querySelectorAll("#messages tbody tr")).map(r => r.dataset.message)`, &ids)
		return ids
	}
	id := func(n int64) string { return fmt.Sprint(n) }
	cell := func(msg int64, label string) string {
		var s string
		b.Eval(fmt.Sprintf(`(document.querySelector('#messages tr[data-message="%d"] td[data-label="%s"]') || {textContent: ""}).textContent.replace(/\s+/g, " ").trim()`, msg, label), &s)
		return s
	}
	open := func(what, path string) {
		b.Run(what, chromedp.Navigate(base+path), chromedp.WaitVisible("#messages-total", chromedp.ByQuery))
	}

	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		open("messages", "/messages")
		// Seven messages: the campaign's five, Bruno's and Ana's reply.
		if got := b.Text("#messages-total"); !strings.HasPrefix(got, "7 messages.") {
			t.Errorf("at %d px the total reads %q", width, got)
		}
		if got := cell(s.failed, "Contact"); got != "Ana Souza +55 11 98765-4321" {
			t.Errorf("at %d px the contact cell reads %q", width, got)
		}
		if got := cell(brunoMsg, "Contact"); got != `=HYPERLINK("x") Bruno +49 1511 2345678` {
			t.Errorf("Bruno's contact cell reads %q", got)
		}
		if got := cell(s.failed, "Problem"); !strings.Contains(got, "could not be delivered") || !strings.Contains(got, "Next step: Check the number") || !strings.Contains(got, "131026") {
			t.Errorf("at %d px the failed message's problem reads %q", width, got)
		}
		if got := cell(s.inbound, "Direction"); got != "Received" {
			t.Errorf("the reply's direction reads %q", got)
		}
		if got := cell(s.inbound, "Template"); got != "Text message" {
			t.Errorf("the reply's template cell reads %q", got)
		}
		// Each status has its own colour and its own mark.
		var looks map[string]string
		b.Eval(`Object.fromEntries(Array.from(document.querySelectorAll("#messages .status .badge")).map(b =>
			[b.dataset.status, getComputedStyle(b).backgroundColor + "|" + getComputedStyle(b, "::before").content]))`, &looks)
		seen := map[string]string{}
		for _, st := range []string{"sent", "delivered", "read", "failed"} {
			if looks[st] == "" || strings.HasSuffix(looks[st], "|none") {
				t.Errorf("the %s badge has no mark: %q", st, looks[st])
			}
			if other, dup := seen[looks[st]]; dup {
				t.Errorf("the %s and %s badges look alike: %s", other, st, looks[st])
			}
			seen[looks[st]] = st
		}
		b.CheckPage(fmt.Sprintf("messages-list-%d", width))
		// The filters leave most of the first screen to the list.
		var formHeight, screen float64
		b.Eval(`document.querySelector("#message-filters").getBoundingClientRect().height`, &formHeight)
		b.Eval(`window.innerHeight`, &screen)
		if formHeight > screen/2 {
			t.Errorf("at %d px the filters are %.0f px high, more than half of a %.0f px screen", width, formHeight, screen)
		}

		// Search by part of a name, by the number as people write it, and the old contact link.
		b.Run("search", chromedp.SetValue("#f-q", "souza", chromedp.ByQuery))
		b.PressOn(`#message-filters button[type=submit]`)
		if got := rows(); len(got) != 6 || strings.Contains(strings.Join(got, ","), id(brunoMsg)) {
			t.Errorf("search souza: %v", got)
		}
		if got := b.Text("#messages-total"); !strings.HasPrefix(got, "6 messages match this filter.") {
			t.Errorf("search souza total %q", got)
		}
		open("search by number", "/messages?q="+strings.ReplaceAll("+49 (151) 1234-5678", " ", "+"))
		if got := rows(); len(got) != 1 || got[0] != id(brunoMsg) {
			t.Errorf("search by Bruno's number: %v", got)
		}
		open("old contact link", fmt.Sprintf("/messages?contact=%d", bruno))
		if got := rows(); len(got) != 1 || got[0] != id(brunoMsg) {
			t.Errorf("contact=%d: %v", bruno, got)
		}
		if got := b.Text("#contact-filter"); !strings.Contains(got, "+49 1511 2345678") {
			t.Errorf("the contact filter line reads %q", got)
		}
		open("search nobody", "/messages?q=nobody")
		if got := rows(); len(got) != 0 || b.Text("#messages-total") != "0 messages match this filter." {
			t.Errorf("search nobody: %v", got)
		}
		// Part of a template's name, any case.
		open("template part", "/messages?template=CONFIRM")
		if got := rows(); len(got) != 5 {
			t.Errorf("template CONFIRM: %v", got)
		}
		// Received only.
		open("received", "/messages?direction=in")
		if got := rows(); len(got) != 1 || got[0] != id(s.inbound) {
			t.Errorf("direction=in: %v", got)
		}
		b.CheckPage(fmt.Sprintf("messages-received-%d", width))
		// The received message opens on its own page, with what the customer wrote; the
		// contact's page links to it too.
		b.FocusAndPress(fmt.Sprintf(`#messages tr[data-message="%d"] a.message-link`, s.inbound))
		if got := b.Text("#received-text"); got != "Is it in blue?" {
			t.Errorf("at %d px the received message's page says %q", width, got)
		}
		if got := b.Text("#message-kind"); got != "Text message" {
			t.Errorf("at %d px the received message's kind reads %q", width, got)
		}
		b.CheckPage(fmt.Sprintf("message-received-%d", width))
		b.Run("contact", chromedp.Navigate(fmt.Sprintf("%s/contacts/%d", base, s.contact)), chromedp.WaitVisible("#contact-messages", chromedp.ByQuery))
		var links []string
		b.Eval(`Array.from(document.querySelectorAll('#contact-messages td[data-label="Details"] a')).map(a => a.getAttribute("href"))`, &links)
		if !strings.Contains(strings.Join(links, " "), fmt.Sprintf("/dashboard/messages/%d", s.inbound)) {
			t.Errorf("the contact page's messages link to %v, not to the received message", links)
		}
	}

	// The export of a filter: exactly its rows, newest first, formulas neutralised.
	open("filtered", "/messages?q=bruno")
	var href string
	b.Eval(`document.querySelector("#export-messages").getAttribute("href")`, &href)
	if href != "/dashboard/messages/export.csv?q=bruno" {
		t.Errorf("export link %q", href)
	}
	got := parseCSV(t, fetchText(b, href))
	if len(got) != 1 || got[0]["message_id"] != id(brunoMsg) || got[0]["contact_name"] != `'=HYPERLINK("x") Bruno` ||
		got[0]["number"] != "4915112345678" || got[0]["template"] != "shipping_update" || got[0]["direction"] != "sent" {
		t.Errorf("export of q=bruno: %+v", got)
	}
	all := parseCSV(t, fetchText(b, "/dashboard/messages/export.csv"))
	if len(all) != 7 || all[len(all)-1]["message_id"] != id(brunoMsg) {
		t.Errorf("export of everything: %d rows", len(all))
	}
	for _, r := range all {
		if r["message_id"] == id(s.failed) && (r["error_code"] != "131026" || !strings.Contains(r["problem"], "could not be delivered")) {
			t.Errorf("the failed row: %+v", r)
		}
	}

	// Live: a sent message turns delivered and another fails, with no reload; then a message's
	// page follows its status the same way. New sends each round, so statuses only move forward.
	var anaConv int64
	if err := db.Get(&anaConv, `SELECT conversation_id FROM messages WHERE account_id = $1 AND id = $2`, acc, s.failed); err != nil {
		t.Fatal(err)
	}
	newSent := func(contact, conv int64, to string) int64 {
		t.Helper()
		var m int64
		if err := db.Get(&m, `INSERT INTO messages (account_id, contact_id, conversation_id, direction, type, destination, template_name,
				content, platform_message_id, status, created_at, sent_at)
			VALUES ($1, $2, $3, 'out', 'template', $4, 'order_confirmation', '{"language": "en_US"}', 'wamid.live-' || gen_random_uuid(), 'sent', now(), now())
			RETURNING id`, acc, contact, conv, to); err != nil {
			t.Fatal(err)
		}
		return m
	}
	set := func(m int64, stmt string) {
		t.Helper()
		if _, err := db.Exec(`UPDATE messages SET `+stmt+` WHERE account_id = $1 AND id = $2`, acc, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		toAna, toBruno := newSent(s.contact, anaConv, "5511987654321"), newSent(bruno, brunoConv, "4915112345678")
		open("messages before", "/messages")
		b.Eval(`window.__samePage = true`, nil)
		if got := cell(toAna, "Status"); got != "Sent" {
			t.Fatalf("before: %q", got)
		}
		set(toAna, `status = 'delivered', delivered_at = now()`)
		set(toBruno, `status = 'failed', failed_at = now(), error_code = 131049`)
		waitFor(t, "the list's live statuses", func() bool {
			return cell(toAna, "Status") == "Delivered" && cell(toBruno, "Status") == "Failed"
		})
		var same bool
		b.Eval(`window.__samePage === true`, &same)
		if !same {
			t.Errorf("at %d px the list reloaded to show the statuses", width)
		}
		if got := cell(toBruno, "Problem"); !strings.Contains(got, "too many marketing messages") || !strings.Contains(got, "Next step") {
			t.Errorf("at %d px the live failure's problem reads %q", width, got)
		}
		b.CheckPage(fmt.Sprintf("messages-live-%d", width))

		m := newSent(bruno, brunoConv, "4915112345678")
		b.Run("message page", chromedp.Navigate(fmt.Sprintf("%s/messages/%d", base, m)), chromedp.WaitVisible("#message-status", chromedp.ByQuery))
		b.Eval(`window.__samePage = true`, nil)
		if got := b.Text("#message-status"); got != "Sent" {
			t.Fatalf("message page before: %q", got)
		}
		if got := b.Text("main"); !strings.Contains(got, "+49 1511 2345678") {
			t.Errorf("the message page does not show the formatted number")
		}
		set(m, `status = 'failed', failed_at = now(), error_code = 131026`)
		waitFor(t, "the message page's live status", func() bool {
			var st string
			b.Eval(`document.querySelector("#message-status").textContent.trim()`, &st)
			return st == "Failed"
		})
		b.Eval(`window.__samePage === true`, &same)
		if !same {
			t.Errorf("at %d px the message page reloaded", width)
		}
		if got := b.Text("#live-problem"); !strings.Contains(got, "could not be delivered") {
			t.Errorf("at %d px the message page's live problem reads %q", width, got)
		}
		b.CheckPage(fmt.Sprintf("message-live-%d", width))
	}
}
