package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"gateway/platform/eventhook"
	"gateway/server/dashboard/browsertest"
	"gateway/server/servertest"
	"gateway/server/worker"
)

// receiver is a loopback webhook receiver whose answer the test switches.
type receiver struct {
	*httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	got    []received
}

type received struct {
	header http.Header
	body   []byte
	status int
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.status.Store(200)
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		st := int(r.status.Load())
		r.mu.Lock()
		r.got = append(r.got, received{header: req.Header.Clone(), body: b, status: st})
		r.mu.Unlock()
		w.WriteHeader(st)
		fmt.Fprintf(w, `{"received":true,"status":%d}`, st)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) all() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// waitFor polls cond every 100 ms for up to 60 s (the machine may be busy).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// pageHas reloads the page until its text contains want.
func pageHas(t *testing.T, b *browsertest.Browser, url, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		var text string
		b.Run("load "+url, chromedp.Navigate(url), chromedp.Text("main", &text, chromedp.ByQuery))
		if strings.Contains(text, want) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.Snapshot("timeout")
	t.Fatalf("timed out waiting for %q on %s", want, url)
}

// The whole first day of a business, in real Chromium: sign up, see the join code, connect
// the number, create a live key that answers GET /v1/me, add a webhook endpoint, send a test
// event and see it in the request log, watch a failure and redeliver it, rotate the secret and
// check both signatures, revoke the key, sign out. Each page is checked with axe-core, and the
// primary buttons are pressed with the keyboard.
func TestBrowserFlow(t *testing.T) {
	env := newEnv(t, true)
	disp := worker.NewDispatcher(env.Store, worker.DispatcherConfig{AllowPrivate: true, PollInterval: 50 * time.Millisecond})
	if err := disp.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(disp.Stop)
	recv := newReceiver(t)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"

	// Sign up.
	b.Run("open sign-up", chromedp.Navigate(base+"/signup"), chromedp.WaitVisible("#email", chromedp.ByQuery))
	b.CheckPage("signup")
	b.Run("fill sign-up",
		chromedp.SendKeys("#workspace", "Flow Co", chromedp.ByQuery),
		chromedp.SendKeys("#email", "flow@example.com", chromedp.ByQuery),
		chromedp.SendKeys("#password", "a long enough password", chromedp.ByQuery))
	b.PressOn(`form[action="/dashboard/signup"] button[type=submit]`)
	b.Run("overview", chromedp.WaitVisible("#join-code", chromedp.ByQuery))
	acct := accountOf(t, env.Store, "flow@example.com")
	a, _ := env.Store.AccountByID(context.Background(), acct)
	if got := b.Text("#join-phrase"); got != "join "+a.JoinCode {
		t.Fatalf("join phrase %q, want %q", got, "join "+a.JoinCode)
	}
	b.CheckPage("overview")
	var navLinks string
	// Each link's own words (the Inbox link's unread badge, hidden here, is apart).
	b.Eval(`Array.from(document.querySelectorAll("nav a")).map(a => a.childNodes[0].textContent.trim()).join("|")`, &navLinks)
	if navLinks != "Overview|Templates|Send|Inbox|Messages|Contacts|Broadcasts|Campaigns|API keys|Webhooks|Request log|API errors|Audit log|Members|Workspaces" {
		t.Fatalf("nav links %q", navLinks)
	}
	// The account's own page is in the header, beside signing out, and an owner's whole nav fits
	// one row on a 1280-pixel screen.
	// At a phone's width those links are behind the header's menu button: open it.
	b.Eval(`(m => { m.open = true; return m.open; })(document.getElementById("menu"))`, nil)
	b.Run("header links shown", chromedp.WaitVisible(`header.top a[href="/dashboard/password"]`, chromedp.ByQuery))
	if got := b.Text(`header.top a[href="/dashboard/password"]`); got != "Change password" {
		t.Fatalf("header link %q", got)
	}
	var navRows int
	b.Eval(`window.innerWidth < 1280 ? 1 : new Set(Array.from(document.querySelectorAll("nav a")).map(a => a.offsetTop)).size`, &navRows)
	if navRows != 1 {
		t.Fatalf("the nav takes %d rows at 1280 pixels", navRows)
	}

	// Connect the number with the token form (the in-test connector stores it).
	b.Run("open token form", chromedp.Click("#connect summary", chromedp.ByQuery),
		chromedp.SendKeys("#waba_id", "102290129340398", chromedp.ByQuery),
		chromedp.SendKeys("#phone_number_id", "106540352242922", chromedp.ByQuery),
		chromedp.SendKeys("#access_token", "bad", chromedp.ByQuery))
	b.PressOn(`form[action="/dashboard/connect/token"] button[type=submit]`)
	if msg := b.Text("main p.error"); !strings.Contains(msg, "Invalid OAuth access token") {
		t.Fatalf("a failed connection shows %q", msg)
	}
	b.CheckPage("connect-failed")
	b.Run("retry", chromedp.SendKeys("#access_token", "good-token", chromedp.ByQuery))
	b.PressOn(`form[action="/dashboard/connect/token"] button[type=submit]`)
	if txt := b.Text("main"); !strings.Contains(txt, "Flow Test Co") || !strings.Contains(txt, "+15550001234") {
		t.Fatalf("overview after connecting: %s", txt)
	}

	// Create a live key; it answers GET /v1/me with the connected number.
	b.Run("keys", chromedp.Navigate(base+"/keys"), chromedp.WaitVisible("#name", chromedp.ByQuery))
	b.CheckPage("keys")
	b.Run("fill key", chromedp.SendKeys("#name", "Production", chromedp.ByQuery))
	b.PressOn(`form[action="/dashboard/keys"] button[type=submit]`)
	key := b.Text("code#new-key")
	b.CheckPage("key-created")
	me := env.Do(servertest.Request{Method: "GET", Path: "/v1/me", Key: key})
	if me.Status != 200 || me.Map(t)["data"].(map[string]any)["chat"].(map[string]any)["phone_number"] != "15550001234" {
		t.Fatalf("GET /v1/me with the new key: %d %s", me.Status, me.Body)
	}
	if txt := b.Text("table"); !strings.Contains(txt, "Production") || !strings.Contains(txt, key[len(key)-4:]) {
		t.Fatalf("keys list: %s", txt)
	}

	// Add an endpoint on the loopback receiver and send a test event.
	b.Run("webhooks", chromedp.Navigate(base+"/webhooks"), chromedp.WaitVisible("#url", chromedp.ByQuery))
	b.CheckPage("webhooks")
	b.Run("fill url", chromedp.SendKeys("#url", recv.URL+"/hooks", chromedp.ByQuery))
	b.PressOn(`form[action="/dashboard/webhooks"] button[type=submit]`)
	oldSecret := b.Text("code#secret")
	if !strings.HasPrefix(oldSecret, "whsec_") {
		t.Fatalf("secret %q", oldSecret)
	}
	b.CheckPage("webhook-created")
	var epPath string
	b.Eval(`document.querySelector('form[action$="/test"]').getAttribute("action").replace("/test", "")`, &epPath)
	b.PressOn(`form[action$="/test"] button`)
	if got := b.Text("#test-result"); !strings.Contains(got, "Test event: delivered.") || !strings.Contains(got, "HTTP 200") {
		t.Fatalf("the test event's result on the page: %q", got)
	}
	pageHas(t, b, base+"/request-log", "webhook.test")
	if txt := b.Text("table.log tbody tr"); !strings.Contains(txt, "200") || strings.Contains(txt, "failed") {
		t.Fatalf("request log row: %s", txt)
	}
	b.CheckPage("request-log")

	// The receiver fails: the failure shows; after it recovers, redeliver.
	recv.status.Store(503)
	b.Run("endpoint", chromedp.Navigate(env.URL+epPath), chromedp.WaitVisible(`form[action$="/test"] button`, chromedp.ByQuery))
	b.PressOn(`form[action$="/test"] button`)
	pageHas(t, b, base+"/request-log?outcome=failed", "503 failed")
	b.CheckPage("request-log-failed")
	recv.status.Store(200)
	b.Run("open failed attempt", chromedp.Click(`table.log tbody tr a`, chromedp.ByQuery), chromedp.WaitVisible("#response-status", chromedp.ByQuery))
	if got := b.Text("#response-status"); got != "503" {
		t.Fatalf("attempt page status %q", got)
	}
	if txt := b.Text("main"); !strings.Contains(txt, `"event": "webhook.test"`) || !strings.Contains(txt, "X-Service-Signature") || !strings.Contains(txt, `"status":503`) {
		t.Fatalf("attempt page lacks the body, headers or response: %s", txt)
	}
	b.CheckPage("attempt")
	before := len(recv.all())
	b.PressOn(`form[action$="/redeliver"] button`)
	waitFor(t, "the redelivery", func() bool {
		got := recv.all()
		return len(got) > before && got[len(got)-1].status == 200
	})
	pageHas(t, b, base+"/request-log?outcome=succeeded", "webhook.test")
	var okRows int
	waitFor(t, "two successful rows", func() bool {
		b.Run("reload", chromedp.Navigate(base+"/request-log?outcome=succeeded"), chromedp.Evaluate(`document.querySelectorAll("table.log tbody tr").length`, &okRows))
		return okRows >= 2
	})

	// Rotate the secret: during the overlap both signatures come, and X-Service-Signature is
	// the new secret's.
	b.Run("endpoint", chromedp.Navigate(env.URL+epPath), chromedp.WaitVisible(`a[href$="confirm=rotate"]`, chromedp.ByQuery))
	b.PressOn(`a[href$="confirm=rotate"]`)
	b.CheckPage("rotate-confirm")
	b.PressOn(`form[action$="/rotate"] button`)
	newSecret := b.Text("code#secret")
	if newSecret == oldSecret || !strings.HasPrefix(newSecret, "whsec_") {
		t.Fatalf("rotated secret %q (old %q)", newSecret, oldSecret)
	}
	n := len(recv.all())
	b.PressOn(`form[action$="/test"] button`)
	waitFor(t, "a delivery after the rotation", func() bool { return len(recv.all()) > n })
	got := recv.all()[n]
	sigs := strings.Split(got.header.Get("Webhook-Signature"), " ")
	ts := got.header.Get("Webhook-Timestamp")
	var unix int64
	fmt.Sscan(ts, &unix)
	wantNew, _ := eventhook.StandardSignature(newSecret, got.header.Get("Webhook-Id"), time.Unix(unix, 0), got.body)
	wantOld, _ := eventhook.StandardSignature(oldSecret, got.header.Get("Webhook-Id"), time.Unix(unix, 0), got.body)
	if len(sigs) != 2 || sigs[0] != wantNew || sigs[1] != wantOld {
		t.Fatalf("webhook-signature %q, want the new then the old secret's", got.header.Get("Webhook-Signature"))
	}
	if got.header.Get("X-Service-Signature") != eventhook.Signature(newSecret, got.body) {
		t.Fatal("X-Service-Signature is not the new secret's")
	}
	if err := env.ValidateSchema("WebhookTestEvent", got.body); err != nil || got.header.Get("X-Service-Event") != "webhook.test" {
		t.Fatalf("the test event does not match its documented schema: %v\n%s", err, got.body)
	}

	// Revoke the key: it answers 401 from the next request.
	b.Run("keys", chromedp.Navigate(base+"/keys"), chromedp.WaitVisible(`td a[href^="/dashboard/keys/"]`, chromedp.ByQuery))
	b.PressOn(`td a[href^="/dashboard/keys/"]`)
	b.CheckPage("revoke-confirm")
	b.PressOn(`form[action$="/revoke"] button`)
	if !strings.Contains(b.Text("main .notice"), "revoked") {
		t.Fatal("no notice after revoking")
	}
	if r := env.Do(servertest.Request{Method: "GET", Path: "/v1/me", Key: key}); r.Status != 401 {
		t.Fatalf("revoked key: %d", r.Status)
	}

	// The audit log has the story.
	b.Run("audit", chromedp.Navigate(base+"/audit"), chromedp.WaitVisible("table", chromedp.ByQuery))
	b.CheckPage("audit")
	audit := b.Text("table")
	for _, want := range []string{"key.created", "key.revoked", "webhook.added", "webhook.rotated", "number.connected"} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit log lacks %s", want)
		}
	}
	b.Run("audit entry", chromedp.Click("table tbody tr a", chromedp.ByQuery), chromedp.WaitVisible("dl.facts", chromedp.ByQuery))
	b.CheckPage("audit-entry")
	for _, p := range []string{"/password", "/invite", "/workspaces", "/disconnect", "/no-such-page"} {
		b.Run("open "+p, chromedp.Navigate(base+p), chromedp.WaitVisible("main", chromedp.ByQuery))
		b.CheckPage(strings.TrimPrefix(p, "/"))
		if p == "/password" {
			// The header link of the page being shown is marked as such, as the nav's are.
			var weight string
			b.Eval(`getComputedStyle(document.querySelector('header.top a[aria-current="page"]')).fontWeight`, &weight)
			if weight != "700" {
				t.Errorf("the header's current link has font-weight %q, want 700", weight)
			}
		}
	}

	// Sign out: every page sends the browser to sign-in.
	b.Run("overview", chromedp.Navigate(base+"/"), chromedp.WaitVisible("main", chromedp.ByQuery))
	b.Eval(`(m => { m.open = true; return m.open; })(document.getElementById("menu"))`, nil)
	b.Run("sign-out shown", chromedp.WaitVisible("header form button", chromedp.ByQuery))
	b.PressOn(`header form button`)
	b.CheckPage("signin")
	for _, p := range []string{"/", "/keys", "/webhooks", "/request-log", "/audit", "/invite", "/workspaces", "/password", epPath[len("/dashboard"):]} {
		var loc string
		b.Run("after sign-out "+p, chromedp.Navigate(base+p), chromedp.Location(&loc))
		if loc != base+"/signin" {
			t.Errorf("after sign-out %s lands on %s", p, loc)
		}
	}
}
