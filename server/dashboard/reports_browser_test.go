package dashboard_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"gateway/platform/eventhook"
	"gateway/platform/simulator"
	"gateway/server/dashboard"
	"gateway/server/dashboard/browsertest"
	"gateway/server/domain"
	"gateway/server/servertest"
	"gateway/server/worker"
	"gateway/store"
)

// Issue 11's acceptance in real Chromium, axe-core on every page: sync the templates and see a
// rejected one with its reason; send from the panel and see the message reach the simulator,
// its status move to read in the messages list as the simulator reports, and a message.sent
// with source "panel" reach a webhook receiver; block the contact and see the next API send
// answer 409; open the campaign and see its counts and chart match the statuses; download its
// CSV and check the row.
func TestBrowserReports(t *testing.T) {
	c := &testConnector{}
	env := servertest.New(t, servertest.Config{
		Dashboard: dashboard.Options{Development: true, SignupOpen: true, WebhookAllowPrivate: true},
		Connector: c,
		Simulator: &simulator.Config{SentDelay: 50 * time.Millisecond, DeliveredDelay: 150 * time.Millisecond, ReadDelay: 300 * time.Millisecond},
	})
	c.st = env.Store
	disp := worker.NewDispatcher(env.Store, worker.DispatcherConfig{AllowPrivate: true, PollInterval: 50 * time.Millisecond})
	if err := disp.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(disp.Stop)
	recv := newReceiver(t)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"

	b.Run("open sign-up", chromedp.Navigate(base+"/signup"), chromedp.WaitVisible("#email", chromedp.ByQuery))
	b.Run("fill sign-up",
		chromedp.SendKeys("#workspace", "Reports Co", chromedp.ByQuery),
		chromedp.SendKeys("#email", "reports@example.com", chromedp.ByQuery),
		chromedp.SendKeys("#password", "a long enough password", chromedp.ByQuery))
	b.PressOn(`form[action="/dashboard/signup"] button[type=submit]`)
	acc := accountOf(t, env.Store, "reports@example.com")
	env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Reports Co"}})
	secret, err := eventhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.CreateWebhookEndpoint(context.Background(), acc, recv.URL+"/hook", secret); err != nil {
		t.Fatal(err)
	}

	// Templates: Sync now, the rejected one with its reason.
	b.Run("templates", chromedp.Navigate(base+"/templates"), chromedp.WaitVisible("#sync-now", chromedp.ByQuery))
	b.CheckPage("templates-empty")
	b.PressOn("#sync-now")
	var rejected string
	b.Eval(`Array.from(document.querySelectorAll("section.template")).filter(s => s.querySelector("h2").textContent.startsWith("flash_sale")).map(s => s.querySelector(".template-status").textContent).join("")`, &rejected)
	if !strings.Contains(rejected, "REJECTED") || !strings.Contains(rejected, "Reason: Promotional content") {
		t.Fatalf("flash_sale shows %q", rejected)
	}
	b.CheckPage("templates")

	// Send from the panel, with the preview first.
	var tpl int64
	if err := env.Store.DB().Get(&tpl, `SELECT id FROM templates WHERE account_id = $1 AND name = 'order_confirmation'`, acc); err != nil {
		t.Fatal(err)
	}
	b.Run("send page", chromedp.Navigate(fmt.Sprintf("%s/send?template=%d", base, tpl)), chromedp.WaitVisible("#send-form", chromedp.ByQuery))
	b.Run("fill send",
		chromedp.SendKeys("#s-destination", "5511987654321", chromedp.ByQuery),
		chromedp.SendKeys("#s-campaign", "Browser promo", chromedp.ByQuery),
		chromedp.SendKeys("#s-body-0", "Ana", chromedp.ByQuery),
		chromedp.SendKeys("#s-body-1", "ORD-7781", chromedp.ByQuery))
	b.PressOn("#preview-button")
	if got := b.Text("#preview"); !strings.Contains(got, "Hi Ana, your order ORD-7781 is confirmed.") {
		t.Fatalf("preview %q", got)
	}
	b.CheckPage("send")
	b.PressOn("#send-button")
	var msgID int64
	if _, err := fmt.Sscanf(b.Location(), env.URL+"/dashboard/messages/%d", &msgID); err != nil {
		t.Fatalf("after the send: %s", b.Location())
	}
	b.CheckPage("message")
	// The message page shows what the customer received: the template's text with the values.
	if got := b.Text("#sent-text"); !strings.Contains(got, "Hi Ana, your order ORD-7781 is confirmed.") {
		t.Fatalf("what the customer received: %q", got)
	}
	waitFor(t, "the simulator to receive the send", func() bool {
		for _, m := range env.Sim.Sent() {
			if m.TemplateName == "order_confirmation" && m.BizOpaqueCallbackData == fmt.Sprint(msgID) {
				return true
			}
		}
		return false
	})

	// The messages list follows the simulator's reports up to read.
	deadline := time.Now().Add(60 * time.Second)
	for {
		var status string
		b.Run("messages", chromedp.Navigate(base+"/messages"), chromedp.WaitVisible("main", chromedp.ByQuery),
			chromedp.Evaluate(fmt.Sprintf(`(document.querySelector('tr[data-message="%d"] .status') || {}).textContent || ""`, msgID), &status))
		if strings.TrimSpace(status) == "Read" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the list still shows %q", status)
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.CheckPage("messages")

	// message.sent with source panel at the receiver.
	waitFor(t, "message.sent at the receiver", func() bool {
		for _, r := range recv.all() {
			var ev struct {
				Event string         `json:"event"`
				Data  map[string]any `json:"data"`
			}
			if json.Unmarshal(r.body, &ev) == nil && ev.Event == "message.sent" && ev.Data["source"] == "panel" && ev.Data["message_id"] == float64(msgID) {
				return true
			}
		}
		return false
	})

	// The campaign: counts and chart match the statuses; the CSV has the row.
	var campaign, contact int64
	if err := env.Store.DB().QueryRow(`SELECT campaign_id, contact_id FROM messages WHERE account_id = $1 AND id = $2`, acc, msgID).Scan(&campaign, &contact); err != nil {
		t.Fatal(err)
	}
	b.Run("campaign", chromedp.Navigate(fmt.Sprintf("%s/campaigns/%d", base, campaign)), chromedp.WaitVisible("#campaign-counts", chromedp.ByQuery))
	for sel, want := range map[string]string{"#count-total": "1", "#count-read": "1", "#count-failed": "0", "#delivery-rate": "100.0 %", "#read-rate": "100.0 %"} {
		if got := b.Text(sel); got != want {
			t.Errorf("campaign %s = %q, want %q", sel, got, want)
		}
	}
	var bars int
	b.Eval(`document.querySelectorAll("#campaign-chart rect").length`, &bars)
	if bars != 4 {
		t.Errorf("chart has %d bars, want one hour of four series", bars)
	}
	b.CheckPage("campaign")
	var body string
	b.Run("csv", chromedp.Evaluate(fmt.Sprintf(`fetch("/dashboard/campaigns/%d/export.csv").then(r => r.text())`, campaign), &body,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(rows) != 3 || rows[1][0] != fmt.Sprint(msgID) || rows[1][6] != "read" || rows[1][7] != "panel" ||
		rows[2][0] != dashboard.ExportTrailer || rows[2][1] != "1" {
		t.Fatalf("csv %q (%v)", body, err)
	}
	b.Run("campaigns", chromedp.Navigate(base+"/campaigns"), chromedp.WaitVisible("main", chromedp.ByQuery))
	b.CheckPage("campaigns")

	// Block the contact; the next API send to it is a 409.
	b.Run("contact", chromedp.Navigate(fmt.Sprintf("%s/contacts/%d", base, contact)), chromedp.WaitVisible("#block", chromedp.ByQuery))
	b.CheckPage("contact")
	b.PressOn("#block")
	if got := b.Text("#contact-blocked"); !strings.Contains(got, "Blocked") {
		t.Fatalf("after blocking: %q", got)
	}
	key, _ := env.NewKey(acc, domain.ModeLive)
	r := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Key: key,
		Body: map[string]any{"destination": "5511987654321", "template_name": "order_confirmation", "body_variables": []string{"Ana", "ORD-2"}}})
	if r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "contact_blocked") {
		t.Fatalf("API send to the blocked contact: %d %s", r.Status, r.Body)
	}
	b.Run("contacts", chromedp.Navigate(base+"/contacts"), chromedp.WaitVisible("main", chromedp.ByQuery))
	b.CheckPage("contacts")
}
