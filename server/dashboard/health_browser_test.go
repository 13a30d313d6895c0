package dashboard_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"gateway/platform/eventhook"
	"gateway/server/dashboard/browsertest"
	"gateway/server/worker"
)

// The failing endpoint's words, whatever number of failures the dispatcher reached.
var (
	failuresInARow = regexp.MustCompile(`\b[1-9][0-9]* failures? in a row, next retry at `)
	dayFailed      = regexp.MustCompile(`^0 delivered, [1-9][0-9]* failed$`)
	positive       = regexp.MustCompile(`^[1-9][0-9]*$`)
)

// Webhook health in Chromium at 1280 and 390 px, axe-core on each page: "Send test event" to a
// receiver answering 500 shows the failure on the endpoint's page (status code, latency), the
// endpoints list then says "Failing since …, 1 failure in a row, next retry at …" instead of
// "Enabled", and the request log's summary counts the day's failed and delivered attempts; once
// the receiver answers 200 a new test shows it delivered.
func TestBrowserWebhookHealth(t *testing.T) {
	env := newEnv(t, true)
	disp := worker.NewDispatcher(env.Store, worker.DispatcherConfig{AllowPrivate: true, PollInterval: 50 * time.Millisecond})
	if err := disp.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(disp.Stop)
	recv := newReceiver(t)
	recv.status.Store(500)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	acc := signUpInBrowser(t, b, env, "Health Co", "health@example.com")
	secret, err := eventhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	ep, err := env.Store.CreateWebhookEndpoint(context.Background(), acc, recv.URL+"/hook", secret)
	if err != nil {
		t.Fatal(err)
	}
	page := fmt.Sprintf("%s/webhooks/%d", base, ep.ID)
	text := func(sel string) string {
		var s string
		b.Eval(fmt.Sprintf(`(document.querySelector(%q) || {}).innerText || ""`, sel), &s)
		return strings.Join(strings.Fields(s), " ")
	}

	b.Run("endpoint", chromedp.Navigate(page), chromedp.WaitVisible("#endpoint-health", chromedp.ByQuery))
	b.PressOn(`form[action$="/test"] button`)
	if got := text("#test-result"); !strings.Contains(got, "Test event: failed.") || !strings.Contains(got, "HTTP 500") || !strings.Contains(got, " ms") {
		t.Fatalf("the test's result: %q", got)
	}
	waitFor(t, "the endpoint to be marked failing", func() bool {
		e, err := env.Store.EndpointStatusByID(context.Background(), acc, ep.ID)
		return err == nil && e.FailingSince != nil
	})

	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		b.Run("webhooks", chromedp.Navigate(base+"/webhooks"), chromedp.WaitVisible("#endpoints", chromedp.ByQuery))
		state := text("#endpoints td.status")
		// The dispatcher retries on its own schedule while the test runs, so a slow machine may
		// count a second failure: the words are checked, not the count.
		if !strings.HasPrefix(state, "Failing Failing since ") || !failuresInARow.MatchString(state) || strings.Contains(state, "Enabled") {
			t.Errorf("at %d px the endpoint's state reads %q", width, state)
		}
		if got := text(`#endpoints td[data-label="Last 24 hours"]`); !dayFailed.MatchString(got) {
			t.Errorf("at %d px the endpoint's day reads %q", width, got)
		}
		b.CheckPage(fmt.Sprintf("webhooks-failing-%d", width))

		b.Run("request log", chromedp.Navigate(base+"/request-log"), chromedp.WaitVisible("#endpoint-summary", chromedp.ByQuery))
		var row []string
		b.Eval(fmt.Sprintf(`Array.from(document.querySelector('#endpoint-summary tr[data-endpoint="%d"]').cells).map(c => c.innerText.trim())`, ep.ID), &row)
		if len(row) != 5 || !strings.HasPrefix(row[1], "Failing") || row[2] != "0" || !positive.MatchString(row[3]) || !strings.Contains(row[4], "1 waiting") {
			t.Errorf("at %d px the request log's summary row is %q", width, row)
		}
		b.CheckPage(fmt.Sprintf("request-log-summary-%d", width))

		b.Run("endpoint", chromedp.Navigate(page), chromedp.WaitVisible("#endpoint-health", chromedp.ByQuery))
		b.CheckPage(fmt.Sprintf("webhook-failing-%d", width))
	}

	// The receiver recovers: the next test is delivered and the page says so.
	recv.status.Store(200)
	b.Run("endpoint", chromedp.Navigate(page), chromedp.WaitVisible("#endpoint-health", chromedp.ByQuery))
	b.PressOn(`form[action$="/test"] button`)
	if got := text("#test-result"); !strings.Contains(got, "Test event: delivered.") || !strings.Contains(got, "HTTP 200") {
		t.Fatalf("the second test's result: %q", got)
	}
	b.CheckPage("webhook-test-delivered-390")
}
