package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"gateway/server/dashboard/browsertest"
)

// One meaning per number, in Chromium at 1280 and 390 px with axe-core: the campaigns list, the
// report's counts and the report's chart table give the same funnel (Sent ≥ Delivered ≥ Read,
// Failed apart) for Spring sale's five messages (sent, delivered, read, failed, read: Sent 4,
// Delivered 3, Read 2, Failed 1); a message page names its campaign; sends that named no
// campaign are "No campaign", never a campaign called "API"; the CSV is named after the campaign.
func TestBrowserCampaignFunnel(t *testing.T) {
	env := reportsEnv(t)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	acc := signUpInBrowser(t, b, env, "Funnel Bakery", "funnel@example.com")
	s := seedReports(t, env, acc)
	db := env.Store.DB()
	var apiCampaign, apiMessage int64
	if err := db.Get(&apiCampaign, `INSERT INTO campaigns (account_id, name) VALUES ($1, 'API') RETURNING id`, acc); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&apiMessage, `INSERT INTO messages (account_id, contact_id, conversation_id, campaign_id, direction, type, destination,
			template_name, content, platform_message_id, status, created_at, sent_at)
		VALUES ($1, $2, (SELECT id FROM conversations WHERE account_id = $1 AND contact_id = $2), $3, 'out', 'template', '5511987654321',
			'order_confirmation', '{"language": "en_US"}', 'wamid.api-1', 'delivered', $4, $4) RETURNING id`,
		acc, s.contact, apiCampaign, time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}

	cells := func(sel string) string {
		var out string
		b.Eval(fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map(c => c.textContent.trim()).join(",")`, sel), &out)
		return out
	}
	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		b.Run("campaigns", chromedp.Navigate(base+"/campaigns"), chromedp.WaitVisible("#campaigns", chromedp.ByQuery))
		var rows []string
		b.Eval(`Array.from(document.querySelectorAll("#campaigns tbody tr")).map(r => Array.from(r.cells).slice(0, 6).map(c => c.textContent.trim()).join(","))`, &rows)
		if strings.Join(rows, " | ") != "No campaign,1,1,1,0,0 | Spring sale,5,4,3,2,1" {
			t.Errorf("at %d px the campaigns list reads %q", width, rows)
		}
		if main := cells("main"); strings.Contains(main, "API") {
			t.Errorf("the campaigns page names an API campaign: %q", main)
		}
		b.CheckPage(fmt.Sprintf("campaigns-%d", width))

		b.Run("report", chromedp.Navigate(fmt.Sprintf("%s/campaigns/%d", base, s.campaign)), chromedp.WaitVisible("#campaign-counts", chromedp.ByQuery))
		counts := cells("#count-total, #count-pending, #count-sent, #count-delivered, #count-read, #count-failed")
		if counts != "5,0,4,3,2,1" {
			t.Errorf("at %d px the report's counts are %s", width, counts)
		}
		// The chart table's columns add up to the same counts under the same labels.
		var sums []int
		b.Eval(`[1, 2, 3, 4].map(i => Array.from(document.querySelectorAll("#chart-table tbody tr")).reduce((n, r) => n + Number(r.cells[i].textContent), 0))`, &sums)
		if fmt.Sprint(sums) != "[4 3 2 1]" {
			t.Errorf("at %d px the chart table's Sent, Delivered, Read, Failed add up to %v, want [4 3 2 1]", width, sums)
		}
		b.CheckPage(fmt.Sprintf("campaign-%d", width))

		b.Run("message", chromedp.Navigate(fmt.Sprintf("%s/messages/%d", base, s.read)), chromedp.WaitVisible("#message-campaign", chromedp.ByQuery))
		if got := cells("#message-campaign"); got != "Spring sale" {
			t.Errorf("the message page names the campaign %q", got)
		}
		b.Run("api message", chromedp.Navigate(fmt.Sprintf("%s/messages/%d", base, apiMessage)), chromedp.WaitVisible("#message-campaign", chromedp.ByQuery))
		if got := cells("#message-campaign"); got != "No campaign" {
			t.Errorf("a message without a campaign name shows %q", got)
		}
		b.CheckPage(fmt.Sprintf("message-no-campaign-%d", width))

		b.Run("messages", chromedp.Navigate(base+"/messages"), chromedp.WaitVisible("#messages", chromedp.ByQuery))
		if got := cells(fmt.Sprintf(`#messages tr[data-message="%d"] td[data-label="Campaign"]`, apiMessage)); got != "No campaign" {
			t.Errorf("the messages list shows %q for a message without a campaign name", got)
		}
		if got := cells(`#f-campaign option`); !strings.Contains(got, "No campaign") || strings.Contains(got, "API") {
			t.Errorf("the campaign filter offers %q", got)
		}
	}

	u := newUser(t, env)
	if p := u.post("/dashboard/signin", url.Values{"email": {"funnel@example.com"}, "password": {"a long enough password"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", p.Status)
	}
	p := u.get(fmt.Sprintf("/dashboard/campaigns/%d/export.csv", s.campaign))
	if got := p.Header.Get("Content-Disposition"); got != `attachment; filename="spring-sale.csv"` {
		t.Errorf("CSV disposition %q", got)
	}
}
