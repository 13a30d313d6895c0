package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"gateway/server/dashboard/browsertest"
)

// With the browser in São Paulo (UTC−3), every time on the pages is São Paulo's with the UTC
// value on hover, the campaign chart's hours are São Paulo's hours, and the messages list's date
// filter takes São Paulo's days: a message sent at 01:30 UTC on the 21st is on the 20th there.
// Checked at 1280 and 390 px, axe-core on each page.
func TestBrowserViewerTimeZone(t *testing.T) {
	env := reportsEnv(t)
	b := browsertest.New(t)
	b.Run("São Paulo", emulation.SetTimezoneOverride("America/Sao_Paulo"))
	base := env.URL + "/dashboard"
	acc := signUpInBrowser(t, b, env, "Padaria Sol", "padaria@example.com")
	s := seedReports(t, env, acc)
	// One more message late on the 20th in São Paulo, already the 21st in UTC.
	late := time.Date(2026, 11, 21, 1, 30, 0, 0, time.UTC)
	if _, err := env.Store.DB().Exec(`INSERT INTO messages (account_id, contact_id, conversation_id, direction, type, destination, template_name,
			content, platform_message_id, status, created_at, sent_at)
		VALUES ($1, $2, (SELECT id FROM conversations WHERE account_id = $1 AND contact_id = $2), 'out', 'template', '5511987654321', 'order_confirmation', '{"language": "en_US"}', 'wamid.late', 'sent', $3, $3)`,
		acc, s.contact, late); err != nil {
		t.Fatal(err)
	}

	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		// The sent messages: the newest row is the late one, at 22:30 on the 20th in São Paulo.
		b.Run("messages", chromedp.Navigate(base+"/messages?direction=out"), chromedp.WaitVisible("#messages", chromedp.ByQuery))
		var first struct{ Text, Datetime, Title string }
		b.Eval(`(() => { const t = document.querySelector("#messages tbody tr time"); return {text: t.textContent, datetime: t.dateTime, title: t.title}; })()`, &first)
		if first.Text != "2026-11-20 22:30:00 -03" || first.Datetime != "2026-11-21T01:30:00Z" || first.Title != "2026-11-21 01:30:00 UTC" {
			t.Errorf("at %d px the newest message's time is %+v", width, first)
		}
		b.CheckPage(fmt.Sprintf("messages-sao-paulo-%d", width))

		// The date filter: the 20th in São Paulo holds all six messages, the 21st none.
		for day, want := range map[string]int{"2026-11-20": 6, "2026-11-21": 0} {
			b.Run("filter "+day, chromedp.Navigate(base+"/messages?from="+day+"&to="+day), chromedp.WaitVisible("main", chromedp.ByQuery))
			var n int
			b.Eval(`document.querySelectorAll("#messages tbody tr").length`, &n)
			if n != want {
				t.Errorf("messages on %s (São Paulo): %d, want %d", day, n, want)
			}
		}

		// The campaign chart's hours: sends at 09:10, 09:35 UTC are 06h; 10:00, 10:25, 10:50 are 07h.
		b.Run("campaign", chromedp.Navigate(fmt.Sprintf("%s/campaigns/%d", base, s.campaign)), chromedp.WaitVisible("#chart-table", chromedp.ByQuery))
		var rows, help, first2 string
		b.Eval(`Array.from(document.querySelectorAll("#chart-table tbody tr")).map(r => Array.from(r.cells).map(c => c.textContent).join(",")).join(" | ")`, &rows)
		b.Eval(`document.querySelector("#chart-title + p.help").textContent`, &help)
		b.Eval(`Array.from(document.querySelectorAll("#campaign-counts time")).map(t => t.textContent + "@" + t.title).join(" | ")`, &first2)
		if rows != "11-20 06h,2,1,0,0 | 11-20 07h,2,2,2,1" {
			t.Errorf("at %d px the chart's rows are %q", width, rows)
		}
		if !strings.Contains(help, "America/Sao_Paulo") {
			t.Errorf("the chart's help does not name the zone: %q", help)
		}
		if first2 != "2026-11-20 06:10:00 -03@2026-11-20 09:10:00 UTC | 2026-11-20 07:50:00 -03@2026-11-20 10:50:00 UTC" {
			t.Errorf("first and last send: %q", first2)
		}
		b.CheckPage(fmt.Sprintf("campaign-sao-paulo-%d", width))
	}
}

// A tz cookie that names no zone (a path, a made-up name, "Local") leaves the times in UTC; a
// valid one is used.
func TestViewerZoneCookie(t *testing.T) {
	env := reportsEnv(t)
	a := signUp(t, env, "Zones", "zones@example.com")
	s := seedReports(t, env, accountOf(t, env.Store, "zones@example.com"))
	u, _ := url.Parse(env.URL + "/dashboard/")
	for value, want := range map[string]string{
		"../../../etc/passwd": "2026-11-20 09:10:00 UTC</time>",
		"Mars/Olympus_Mons":   "2026-11-20 09:10:00 UTC</time>",
		"Local":               "2026-11-20 09:10:00 UTC</time>",
		"Asia/Tokyo":          "2026-11-20 18:10:00 JST</time>",
		"America/Sao_Paulo":   "2026-11-20 06:10:00 -03</time>",
	} {
		a.c.Jar.SetCookies(u, []*http.Cookie{{Name: "tz", Value: url.QueryEscape(value), Path: "/dashboard"}})
		p := a.get(fmt.Sprintf("/dashboard/messages/%d", s.ids[0]))
		if p.Status != http.StatusOK || !strings.Contains(p.Body, `<time datetime="2026-11-20T09:10:00Z" title="2026-11-20 09:10:00 UTC">`+want) {
			t.Errorf("tz=%q: %d, no %q", value, p.Status, want)
		}
	}
}
