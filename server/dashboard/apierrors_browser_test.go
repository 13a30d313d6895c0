package dashboard_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"gateway/server/dashboard/browsertest"
	"gateway/server/domain"
	"gateway/server/servertest"
)

// The API errors page in Chromium at 1280 and 390 px with axe-core: an integrator's refused
// calls with the workspace's key (a 422 and a 404) are listed newest first with method, path
// (never the query, which may carry the key), status, error code and the key's prefix only;
// another workspace's refusals and calls without a valid key are not.
func TestBrowserAPIErrors(t *testing.T) {
	env := reportsEnv(t)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	acc := signUpInBrowser(t, b, env, "Errors Co", "errors@example.com")
	key, k := env.NewKey(acc, domain.ModeLive)
	other := env.NewTenant("Other Co")
	otherKey, _ := env.NewKey(other.Account.ID, domain.ModeLive)

	if r := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Key: key, Body: map[string]any{"destination": "x"}}); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("bad send: %d", r.Status)
	}
	if r := env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/messages/999999?apiKey=" + key, Key: key}); r.Status != http.StatusNotFound {
		t.Fatalf("unknown message: %d", r.Status)
	}
	if r := env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/messages/999998", Key: otherKey}); r.Status != http.StatusNotFound {
		t.Fatalf("other workspace's call: %d", r.Status)
	}
	if r := env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/me", Key: "svc_live_not-a-key"}); r.Status != http.StatusUnauthorized {
		t.Fatalf("unknown key: %d", r.Status)
	}

	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		b.Run("api errors", chromedp.Navigate(base+"/api-errors"), chromedp.WaitVisible("#api-errors", chromedp.ByQuery))
		var rows []string
		b.Eval(`Array.from(document.querySelectorAll("#api-errors tbody tr")).map(r => Array.from(r.cells).slice(1).map(c => c.innerText.trim()).join(" | "))`, &rows)
		want := []string{
			"GET /v1/messages/999999 | 404 | not_found | " + k.Prefix + "…",
			"POST /v1/messages/template | 422 | validation_failed | " + k.Prefix + "…",
		}
		if strings.Join(rows, "\n") != strings.Join(want, "\n") {
			t.Errorf("at %d px the API errors are\n%s\nwant\n%s", width, strings.Join(rows, "\n"), strings.Join(want, "\n"))
		}
		var html string
		b.Eval(`document.querySelector("main").innerHTML`, &html)
		if strings.Contains(html, key) || strings.Contains(html, "apiKey") {
			t.Errorf("the page shows a key or a query")
		}
		b.CheckPage(fmt.Sprintf("api-errors-%d", width))
	}
}
