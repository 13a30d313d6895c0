package dashboard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"gateway/server/dashboard"
	"gateway/server/dashboard/browsertest"
	"gateway/server/servertest"
)

// fakeSDK serves a stand-in of Meta's JavaScript SDK on its own origin: FB.login opens the
// sign-up window there, which reports FINISH with a WABA and number to the opener, and then
// answers the login with a code.
func fakeSDK(t *testing.T, launched chan<- string) *httptest.Server {
	var origin string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sdk.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprintf(w, `window.FB = {
  init: function (o) { window.__fbInit = o; },
  login: function (cb, opts) {
    window.__fbOpts = opts;
    window.addEventListener("message", function (ev) {
      if (ev.origin !== %[1]q) return;
      setTimeout(function () { cb({authResponse: {code: "code-from-es"}}); }, 50);
    });
    window.open(%[1]q + "/signup?app=" + encodeURIComponent(window.__fbInit.appId) + "&config=" +
      encodeURIComponent(opts.config_id) + "&type=" + encodeURIComponent(opts.response_type), "es", "popup,width=400,height=400");
  }
};
setTimeout(function () { window.fbAsyncInit && window.fbAsyncInit(); }, 0);`, origin)
		case "/signup":
			q := r.URL.Query()
			select {
			case launched <- fmt.Sprintf("app=%s config=%s type=%s", q.Get("app"), q.Get("config"), q.Get("type")):
			default:
			}
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><title>Sign up</title><script>
window.opener.postMessage(JSON.stringify({type: "WA_EMBEDDED_SIGNUP", event: "FINISH",
  data: {waba_id: "400000000000001", phone_number_id: "500000000000001"}}), "*");
setTimeout(function () { window.close(); }, 100);
</script>`)
		default:
			http.NotFound(w, r)
		}
	}))
	origin = srv.URL
	t.Cleanup(srv.Close)
	return srv
}

// The "Connect WhatsApp" button loads the SDK from its configured URL, runs FB.init and
// FB.login with the configuration id, takes the WABA and number from the WA_EMBEDDED_SIGNUP
// message and posts them with the code to /dashboard/connect/embedded.
func TestEmbeddedSignupLauncher(t *testing.T) {
	launched := make(chan string, 1)
	sdk := fakeSDK(t, launched)
	c := &testConnector{}
	env := servertest.New(t, servertest.Config{
		Dashboard: dashboard.Options{Development: true, SignupOpen: true,
			PlatformAppID: "app-77", PlatformESConfigID: "cfg-88", PlatformSDKURL: sdk.URL + "/sdk.js"},
		Connector: c,
	})
	c.st = env.Store
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	b.Run("sign up", chromedp.Navigate(base+"/signup"),
		chromedp.SendKeys("#workspace", "ES Co", chromedp.ByQuery),
		chromedp.SendKeys("#email", "es@example.com", chromedp.ByQuery),
		chromedp.SendKeys("#password", "a long enough password", chromedp.ByQuery),
		chromedp.Submit("#password", chromedp.ByQuery),
		chromedp.WaitVisible("#connect-whatsapp", chromedp.ByQuery))
	b.PressOn("#connect-whatsapp")
	b.Run("connected", chromedp.WaitVisible("main .notice", chromedp.ByQuery))
	txt := b.Text("main")
	if !strings.Contains(txt, "400000000000001") || !strings.Contains(txt, "500000000000001") || !strings.Contains(txt, "connected") {
		t.Fatalf("overview after Embedded Signup: %s", txt)
	}
	conn, err := env.Store.ConnectionByAccount(t.Context(), accountOf(t, env.Store, "es@example.com"))
	if err != nil || conn.AccessToken != "token-for-code-from-es" {
		t.Fatalf("connection %+v, %v", conn, err)
	}
	// FB.init got the app id; FB.login the configuration id and the code response type.
	if got := <-launched; got != "app=app-77 config=cfg-88 type=code" {
		t.Fatalf("the sign-up window was opened with %q", got)
	}
}
