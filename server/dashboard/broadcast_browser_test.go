package dashboard_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"gateway/server/dashboard/browsertest"
)

// A broadcast in Chromium with axe-core on every page, at 1280 and 390 px, by keyboard: from
// the templates page's link to the start form (listed numbers, fixed variables, a schedule in a
// time zone), the pre-flight, the confirm; the scheduled broadcast paused and resumed; a second
// one at once whose page follows the platform's reports without a reload (broadcast.js) until
// every message is read; its recipients' results, its CSV and its campaign's report. No page
// scrolls sideways.
func TestBrowserBroadcast(t *testing.T) {
	env := broadcastEnv(t, 1500*time.Millisecond, 3*time.Second)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	acc := signUpInBrowser(t, b, env, "Broadcast Bakery", "broadcast@example.com")
	tpl := connectWorkspace(t, env, acc)
	text := func(sel string) string {
		t.Helper()
		var s string
		b.Eval(fmt.Sprintf(`(document.querySelector(%q) || {textContent: ""}).textContent.trim()`, sel), &s)
		return s
	}
	noSideways := func(name string) {
		t.Helper()
		var overflow int
		b.Eval(`document.documentElement.scrollWidth - window.innerWidth`, &overflow)
		if overflow > 0 {
			t.Errorf("%s scrolls sideways by %d px", name, overflow)
		}
	}
	start := func(width int, name, numbers string, schedule bool) string {
		t.Helper()
		b.Run("templates", chromedp.Navigate(base+"/templates"), chromedp.WaitVisible(fmt.Sprintf("#broadcast-template-%d", tpl), chromedp.ByQuery))
		b.FocusAndPress(fmt.Sprintf("#broadcast-template-%d", tpl))
		b.Run("fill the form", chromedp.WaitVisible("#b-name", chromedp.ByQuery),
			chromedp.SendKeys("#b-name", name, chromedp.ByQuery),
			chromedp.SendKeys("#b-numbers", numbers, chromedp.ByQuery),
			chromedp.SendKeys("#b-p1-value", "friend", chromedp.ByQuery),
			chromedp.SendKeys("#b-p2-value", "ORD-9", chromedp.ByQuery))
		if schedule {
			at := time.Now().Add(48 * time.Hour).In(mustZone(t, "America/Sao_Paulo")).Format("2006-01-02T15:04")
			b.Run("schedule", chromedp.SetValue("#b-send-at", at, chromedp.ByQuery), chromedp.SetValue("#b-zone", "America/Sao_Paulo", chromedp.ByQuery))
		}
		noSideways(fmt.Sprintf("broadcast-new-%d", width))
		if width < 500 {
			// On a phone the template's choice takes the line, its name not cut.
			var choice, form float64
			b.Eval(`document.querySelector("#b-template-choice").getBoundingClientRect().width`, &choice)
			b.Eval(`document.querySelector("#broadcast-form").getBoundingClientRect().width`, &form)
			if choice < form-2 {
				t.Errorf("at %d px the template's choice is %.0f px wide, the form %.0f px", width, choice, form)
			}
		}
		b.CheckPage(fmt.Sprintf("broadcast-new-%d", width))
		b.FocusAndPress("#preflight-button")
		b.Run("pre-flight", chromedp.WaitVisible("#preflight", chromedp.ByQuery))
		noSideways(fmt.Sprintf("broadcast-preflight-%d", width))
		b.CheckPage(fmt.Sprintf("broadcast-preflight-%d", width))
		pf := text("#pf-recipients")
		b.FocusAndPress("#start-button")
		b.Run("broadcast page", chromedp.WaitVisible("#broadcast-progress", chromedp.ByQuery))
		if n := text(".notice"); !strings.Contains(n, "The broadcast was started") {
			t.Errorf("at %d px the start says %q, want its notice", width, n)
		}
		return pf
	}
	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		// Scheduled: the pre-flight counts two people (one number listed twice); pause, resume.
		if pf := start(width, fmt.Sprintf("Spring %d", width), "5511987654321\n+55 11 98765-4321\n5511987654322", true); pf != "2" {
			t.Errorf("at %d px the pre-flight counts %q recipients, want 2", width, pf)
		}
		if st := text("#b-state"); st != "Scheduled" || !strings.Contains(text("#broadcast-facts"), "America/Sao_Paulo") {
			t.Errorf("at %d px the scheduled broadcast reads %q, facts %q", width, st, text("#broadcast-facts"))
		}
		noSideways(fmt.Sprintf("broadcast-scheduled-%d", width))
		b.CheckPage(fmt.Sprintf("broadcast-scheduled-%d", width))
		b.FocusAndPress("#pause-button")
		if st := text("#b-state"); st != "Paused" || !strings.Contains(text("main"), "Paused by a member") {
			t.Errorf("at %d px after the pause: %q, %q", width, st, text("#b-reason"))
		}
		if n := text(".notice"); !strings.Contains(n, "The broadcast is paused") {
			t.Errorf("at %d px the pause says %q, want its notice", width, n)
		}
		b.CheckPage(fmt.Sprintf("broadcast-paused-%d", width))
		b.FocusAndPress("#resume-button")
		if st := text("#b-state"); st != "Scheduled" || !strings.Contains(text(".notice"), "The broadcast was resumed") {
			t.Errorf("at %d px after the resume: %q, notice %q", width, st, text(".notice"))
		}

		// At once: the page follows the reports without a reload until every message is read.
		start(width, fmt.Sprintf("Flash %d", width), fmt.Sprintf("55119%03d0001\n55119%03d0002\n55119%03d0003", width, width, width), false)
		b.Eval(`window.__sameDocument = true`, nil)
		deadline := time.Now().Add(90 * time.Second)
		for text("#b-read") != "3" && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
		}
		var same bool
		b.Eval(`window.__sameDocument === true`, &same)
		if text("#b-read") != "3" || !same || text("#b-state") != "Completed" || text("#b-percent") != "100" {
			b.Snapshot("not-followed")
			// What the counters and the rows say, to tell a missed count from a missed poll.
			var rows []string
			env.Store.DB().Select(&rows, `SELECT concat_ws(' ', broadcast_id, state, slot, n) FROM broadcast_counts WHERE account_id = $1
				UNION ALL SELECT concat_ws(' ', r.broadcast_id, r.state, r.message_id, m.status) FROM broadcast_recipients r
				LEFT JOIN messages m ON m.account_id = r.account_id AND m.platform_message_id = r.message_id WHERE r.account_id = $1`, acc)
			t.Logf("counters and recipients: %s", strings.Join(rows, " | "))
			t.Fatalf("at %d px the page reads %q read, state %q, %q%% (same page %v)", width, text("#b-read"), text("#b-state"), text("#b-percent"), same)
		}
		b.Run("reload", chromedp.Reload(), chromedp.WaitVisible("#recipients", chromedp.ByQuery))
		var rows int
		b.Eval(`document.querySelectorAll("#recipients tbody tr").length`, &rows)
		if rows != 3 {
			t.Errorf("at %d px the recipients table has %d rows, want 3", width, rows)
		}
		noSideways(fmt.Sprintf("broadcast-done-%d", width))
		b.CheckPage(fmt.Sprintf("broadcast-done-%d", width))
		var href string
		b.Eval(`document.querySelector("#export-link").getAttribute("href")`, &href)
		got := parseCSV(t, fetchText(b, href))
		if len(got) != 3 || got[0]["status"] != "sent" || got[0]["message_id"] == "" {
			t.Errorf("at %d px the export reads %v", width, got)
		}
		b.FocusAndPress("#campaign-link")
		if !strings.Contains(text("h1"), fmt.Sprintf("Flash %d", width)) {
			t.Errorf("at %d px the campaign link opens %q", width, text("h1"))
		}
		b.Run("list", chromedp.Navigate(base+"/broadcasts"), chromedp.WaitVisible("#broadcasts", chromedp.ByQuery))
		noSideways(fmt.Sprintf("broadcasts-%d", width))
		b.CheckPage(fmt.Sprintf("broadcasts-%d", width))
	}
	if sent := env.Sim.Sent(); len(sent) != 6 {
		t.Errorf("the platform got %d sends, want 6 (three per broadcast at once, none of the scheduled ones)", len(sent))
	}
}
