package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lib/pq"

	"gateway/server/dashboard/browsertest"
	"gateway/store"
)

// Event types in Chromium at 1280 and 390 px, axe-core on each page: the add form offers every
// event type with the v1 ones chosen and the opt-in ones explained; a message from a customer
// without a number is counted as missed on the endpoint's page, with the way to opt in; choosing
// the type by keyboard and saving makes the endpoint receive it. The contact without a number
// is listed and shown by username and user id.
func TestBrowserWebhookEventTypes(t *testing.T) {
	env := newEnv(t, true)
	recv := newReceiver(t)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	acc := signUpInBrowser(t, b, env, "Opt In Co", "optin@example.com")
	ctx := context.Background()
	text := func(sel string) string {
		var s string
		b.Eval(fmt.Sprintf(`(document.querySelector(%q) || {}).innerText || ""`, sel), &s)
		return strings.Join(strings.Fields(s), " ")
	}
	checked := func() []string {
		var out []string
		b.Eval(`Array.from(document.querySelectorAll('#event-types input:checked')).map(i => i.value)`, &out)
		return out
	}

	b.Run("webhooks", chromedp.Navigate(base+"/webhooks"), chromedp.WaitVisible("#event-types", chromedp.ByQuery))
	if got := checked(); !slices.Equal(got, store.V1EventTypes) {
		t.Fatalf("chosen by default: %v", got)
	}
	if got := text("#event-types"); !strings.Contains(got, "message.received_without_number Opt-in") ||
		!strings.Contains(got, "hides their number behind a WhatsApp username") {
		t.Fatalf("the form's event types read %q", got)
	}
	b.CheckPage("webhooks-event-types")
	b.Run("url", chromedp.SendKeys("#url", recv.URL+"/hook", chromedp.ByQuery))
	b.FocusAndPress(`form[action="/dashboard/webhooks"] button[type=submit]`)
	eps, err := env.Store.WebhookEndpointsByAccount(ctx, acc)
	if err != nil || len(eps) != 1 {
		t.Fatalf("endpoints: %v %v", eps, err)
	}
	ep := eps[0]
	if !slices.Equal([]string(ep.EventTypes), store.V1EventTypes) {
		t.Fatalf("a new endpoint receives %v", ep.EventTypes)
	}

	// A customer who shares only a username writes in.
	fields, _ := json.Marshal(map[string]any{"text": "Is the blue one in stock?"})
	if _, err := env.Store.RecordInbound(ctx, acc, store.InboundMessage{PlatformMessageID: "wamid.ANA1", UserID: "BR.13491208655302741918",
		Username: "ana.makes", ProfileName: "Ana Lima", Type: "text", SentAt: time.Now(), Destination: "15550001111",
		EventFields: fields}); err != nil {
		t.Fatal(err)
	}
	page := fmt.Sprintf("%s/webhooks/%d", base, ep.ID)
	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		b.Run("endpoint", chromedp.Navigate(page), chromedp.WaitVisible("#missed-events", chromedp.ByQuery))
		if got := text("#missed-events"); !strings.Contains(got, "message.received_without_number: 1 event.") ||
			!strings.Contains(got, "choose them under Events and save") {
			t.Errorf("at %d px the missed events read %q", width, got)
		}
		b.CheckPage(fmt.Sprintf("webhook-missed-%d", width))

		b.Run("contacts", chromedp.Navigate(base+"/contacts"), chromedp.WaitVisible("#contacts", chromedp.ByQuery))
		if got := text("#contacts tbody"); !strings.Contains(got, "Ana Lima") || !strings.Contains(got, "No number shared: username ana.makes") {
			t.Errorf("at %d px the contacts list reads %q", width, got)
		}
		b.CheckPage(fmt.Sprintf("contacts-without-number-%d", width))
		b.Run("contact", chromedp.Click(`#contacts a`, chromedp.ByQuery), chromedp.WaitVisible("#contact-mobile", chromedp.ByQuery))
		if got := text("#contact-mobile") + " | " + text("#contact-username") + " | " + text("#contact-user-id"); got !=
			"No number shared: username ana.makes | ana.makes | BR.13491208655302741918" {
			t.Errorf("at %d px the contact reads %q", width, got)
		}
		b.CheckPage(fmt.Sprintf("contact-without-number-%d", width))
	}

	// Opt in by keyboard.
	atWidth(b, 1280)
	b.Run("endpoint", chromedp.Navigate(page), chromedp.WaitVisible("#event-types", chromedp.ByQuery))
	b.Run("choose", chromedp.Focus("#ev-message-received-without-number", chromedp.ByQuery),
		chromedp.KeyEvent(" "))
	b.FocusAndPress(`form[action$="/events"] button[type=submit]`)
	if got := text("main .notice"); !strings.Contains(got, "events were changed") {
		t.Fatalf("after saving: %q", got)
	}
	if got := checked(); !slices.Contains(got, store.EventMessageReceivedWithoutNumber) || len(got) != len(store.V1EventTypes)+1 {
		t.Fatalf("chosen after saving: %v", got)
	}
	if got := text("#missed-events"); strings.Contains(got, "message.received_without_number") ||
		!strings.Contains(got, "contact.created_without_number: 1 event.") {
		t.Fatalf("after opting in to message.received_without_number the missed events read %q", got)
	}
	b.CheckPage("webhook-opted-in")
	var stored pq.StringArray
	if err := env.Store.DB().GetContext(ctx, &stored, `SELECT event_types FROM webhook_endpoints WHERE account_id = $1 AND id = $2`,
		acc, ep.ID); err != nil || !slices.Contains([]string(stored), store.EventMessageReceivedWithoutNumber) {
		t.Fatalf("stored types %v %v", stored, err)
	}
}
