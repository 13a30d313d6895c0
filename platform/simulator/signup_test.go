package simulator

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func attr(t *testing.T, page, name string) string {
	t.Helper()
	m := regexp.MustCompile(name + `="([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no %s in page:\n%s", name, page)
	}
	return m[1]
}

func TestSDKAndSignupWindow(t *testing.T) {
	h := newHarness(t, Config{AppID: "42"})

	for _, p := range []string{"/sdk.js", "/en_US/sdk.js"} {
		resp, body := get(t, h.base+p)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") ||
			!strings.Contains(body, "window.FB =") || !strings.Contains(body, "/dialog/embedded_signup?") {
			t.Fatalf("GET %s: %d %s", p, resp.StatusCode, resp.Header)
		}
	}
	if resp, body := get(t, h.base+"/dialog/embedded_signup.js"); resp.StatusCode != 200 || !strings.Contains(body, "WA_EMBEDDED_SIGNUP") {
		t.Fatalf("window script: %d", resp.StatusCode)
	}

	q := url.Values{"app_id": {"42"}, "config_id": {"cfg-1"}, "origin": {"http://127.0.0.1:8080"}}
	resp, page := get(t, h.base+"/dialog/embedded_signup?"+q.Encode())
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Fatalf("window: %d %v", resp.StatusCode, resp.Header)
	}
	for _, want := range []string{"Create a new WhatsApp Business Account", `<label for="business_name">Business name</label>`,
		`value="finish">Finish</button>`, `value="cancel">Cancel</button>`} {
		if !strings.Contains(page, want) {
			t.Fatalf("window lacks %q:\n%s", want, page)
		}
	}
	if regexp.MustCompile(`<script>|<script [^s]|style=`).MatchString(page) {
		t.Fatalf("inline script or style in:\n%s", page)
	}

	finish := func(action string) string {
		form := url.Values{"app_id": {"42"}, "config_id": {"cfg-1"}, "origin": {"http://127.0.0.1:8080"},
			"business_name": {"Acme"}, "action": {action}}
		resp, err := http.PostForm(h.base+"/dialog/embedded_signup", form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", action, resp.StatusCode)
		}
		return string(b)
	}
	page = finish("finish")
	if attr(t, page, "data-event") != "FINISH" || attr(t, page, "data-origin") != "http://127.0.0.1:8080" ||
		!strings.Contains(page, `<script src="/dialog/embedded_signup.js"></script>`) {
		t.Fatalf("finish page:\n%s", page)
	}
	wabaID, pnid, code := attr(t, page, "data-waba-id"), attr(t, page, "data-phone-number-id"), attr(t, page, "data-code")
	var found *Number
	for _, n := range h.sim.Numbers() {
		if n.PhoneNumberID == pnid {
			found = &n
		}
	}
	if found == nil || found.WabaID != wabaID || found.VerifiedName != "Acme" || !found.Unregistered || len(h.sim.Templates(wabaID)) == 0 {
		t.Fatalf("new business %v in %+v", found, h.sim.Numbers())
	}
	x := url.Values{"client_id": {"42"}, "client_secret": {testSecret}, "code": {code}}
	if status, out, _ := h.do(http.MethodGet, "/v23.0/oauth/access_token?"+x.Encode(), "", nil); status != 200 || out["access_token"] != found.AccessToken {
		t.Fatalf("the window's code does not exchange: %d %v", status, out)
	}
	// Each sign-up makes a fresh business.
	if page2 := finish("finish"); attr(t, page2, "data-waba-id") == wabaID || attr(t, page2, "data-phone-number-id") == pnid {
		t.Fatal("a second sign-up reused the business")
	}

	page = finish("cancel")
	if attr(t, page, "data-event") != "CANCEL" || attr(t, page, "data-code") != "" {
		t.Fatalf("cancel page:\n%s", page)
	}

	for _, bad := range []url.Values{
		{"app_id": {"41"}, "config_id": {"c"}, "origin": {"http://x"}},
		{"app_id": {"42"}, "config_id": {""}, "origin": {"http://x"}},
		{"app_id": {"42"}, "config_id": {"c"}, "origin": {"javascript:alert(1)"}},
	} {
		_, page := get(t, h.base+"/dialog/embedded_signup?"+bad.Encode())
		if attr(t, page, "data-event") != "ERROR" || attr(t, page, "data-error-message") == "" || strings.Contains(page, "<form") {
			t.Fatalf("%v: page\n%s", bad, page)
		}
	}
}
