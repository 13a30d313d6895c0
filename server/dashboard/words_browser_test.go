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

// Plain words on the business's pages, in Chromium at 1280 and 390 px with axe-core: the
// number's quality and limit in words with the platform's code beside them; template statuses
// in words, a template in review in amber and a rejected one in red with its reason in words;
// a message's statuses as four distinct badges; a failed message says what happened and what to
// do; the send page names no API route or field; a contact who replied STOP shows it on its page
// and in the audit log.
func TestBrowserPlainWords(t *testing.T) {
	env := reportsEnv(t)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	acc := signUpInBrowser(t, b, env, "Words Bakery", "words@example.com")
	conn := env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Words Bakery"}})
	if _, err := env.Store.DB().Exec(`UPDATE connections SET quality_rating = 'GREEN', messaging_limit = 'TIER_1K', details_for = phone_number_id
		WHERE account_id = $1`, acc); err != nil {
		t.Fatal(err)
	}
	s := seedReports(t, env, acc)
	b.Run("templates", chromedp.Navigate(base+"/templates"), chromedp.WaitVisible("#sync-now", chromedp.ByQuery))
	b.PressOn("#sync-now")

	// The contact replies STOP through the platform's webhook.
	if _, err := env.Sim.InjectInboundMessage(simulator.Inbound{PhoneNumberID: conn.PhoneNumberID, From: "5511987654321", Name: "Ana Souza",
		Type: "text", Payload: map[string]any{"body": "STOP"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the STOP to block the contact", func() bool {
		c, err := env.Store.ContactByID(context.Background(), acc, s.contact)
		return err == nil && c.Blocked
	})

	text := func(sel string) string {
		var s string
		b.Eval(fmt.Sprintf(`(document.querySelector(%q) || {}).innerText || ""`, sel), &s)
		return strings.Join(strings.Fields(s), " ")
	}
	template := func(name string) (badge, class, all string) {
		var out []string
		b.Eval(fmt.Sprintf(`(() => { const s = Array.from(document.querySelectorAll("section.template")).find(s => s.querySelector("h2").textContent.startsWith(%q));
			const d = s.querySelector(".template-status"), b = d.querySelector(".badge"); return [b.textContent, b.className, d.textContent]; })()`, name), &out)
		return out[0], out[1], strings.Join(strings.Fields(out[2]), " ")
	}
	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		shot := func(name string) { b.CheckPage(fmt.Sprintf("%s-%d", name, width)) }

		b.Run("overview", chromedp.Navigate(base+"/"), chromedp.WaitVisible("#quality", chromedp.ByQuery))
		if q, l := text("#quality"), text("#messaging-limit"); q != "High quality (GREEN)" || l != "1,000 customers a day (TIER_1K)" {
			t.Errorf("overview: quality %q, limit %q", q, l)
		}
		shot("overview")

		b.Run("templates", chromedp.Navigate(base+"/templates"), chromedp.WaitVisible("section.template", chromedp.ByQuery))
		if badge, class, all := template("flash_sale"); badge != "Rejected" || !strings.Contains(class, "fail") ||
			!strings.Contains(all, "Reason: Promotional content") || !strings.Contains(all, "REJECTED, PROMOTIONAL") {
			t.Errorf("flash_sale: %q %q %q", badge, class, all)
		}
		if badge, class, all := template("payment_reminder"); badge != "In review" || !strings.Contains(class, "warn") || !strings.Contains(all, "PENDING") {
			t.Errorf("payment_reminder: %q %q %q", badge, class, all)
		}
		shot("templates")

		b.Run("messages", chromedp.Navigate(base+"/messages"), chromedp.WaitVisible("#messages", chromedp.ByQuery))
		var badges map[string]string
		b.Eval(`Object.fromEntries(Array.from(document.querySelectorAll("#messages .status .badge")).map(b => [b.dataset.status, b.textContent + " " + getComputedStyle(b).backgroundColor]))`, &badges)
		seen := map[string]string{}
		for _, st := range []string{"sent", "delivered", "read", "failed"} {
			got := badges[st]
			word := strings.ToUpper(st[:1]) + st[1:]
			if !strings.HasPrefix(got, word+" ") {
				t.Errorf("the %s badge reads %q", st, got)
			}
			color := strings.TrimPrefix(got, word+" ")
			if other, dup := seen[color]; dup {
				t.Errorf("%s and %s badges share the colour %s", other, st, color)
			}
			seen[color] = st
		}
		shot("messages")

		b.Run("failed message", chromedp.Navigate(fmt.Sprintf("%s/messages/%d", base, s.failed)), chromedp.WaitVisible("#message-error", chromedp.ByQuery))
		if what, next := text("#error-what"), text("#error-next"); !strings.Contains(what, "could not be delivered") || !strings.Contains(next, "Check the number") {
			t.Errorf("failed message: %q / %q", what, next)
		}
		if sent := text("#sent-text"); !strings.Contains(sent, "“Ana”, “ORD-7781”") {
			t.Errorf("what the customer received: %q", sent)
		}
		shot("message-failed")

		b.Run("send", chromedp.Navigate(base+"/send"), chromedp.WaitVisible("main", chromedp.ByQuery))
		if main := text("main"); strings.Contains(main, "/v1/") || strings.Contains(main, "source") || strings.Contains(main, "API campaign") {
			t.Errorf("the send page speaks API: %q", main)
		}
		shot("send")

		b.Run("contact", chromedp.Navigate(fmt.Sprintf("%s/contacts/%d", base, s.contact)), chromedp.WaitVisible("#blocked-reason", chromedp.ByQuery))
		if why := text("#blocked-reason"); !strings.Contains(why, "replied “STOP”") {
			t.Errorf("blocked reason %q", why)
		}
		if main := text("main"); strings.Contains(main, "409") {
			t.Errorf("the contact page speaks API: %q", main)
		}
		shot("contact-stopped")

		b.Run("audit", chromedp.Navigate(base+"/audit"), chromedp.WaitVisible("#audit", chromedp.ByQuery))
		if log := text("#audit"); !strings.Contains(log, "The contact Contact blocked (contact.blocked) 5511987654321 "+store.OptOutDetail) {
			t.Errorf("audit log: %q", log)
		}
		shot("audit")
	}
}
