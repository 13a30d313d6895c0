package dashboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"gateway/platform/simulator"
	"gateway/server/dashboard/browsertest"
	"gateway/server/servertest"
	"gateway/store"
)

// The inbox, live, in Chromium with axe-core on every state: the empty inbox; a handset's text,
// photo, location and document appear in the list without a reload (the page's marker
// survives), with the last message in words, the window's time left and the navigation's
// unread badge; a new message appears in an open thread without a reload; the teammate assigns
// the conversation to themself (Mine lists it), adds an internal note, resolves it (Resolved
// lists it) and reopens it, each recorded in the audit log. Screenshots at 1280 and 390 px.
func TestBrowserInboxLive(t *testing.T) {
	clock := &inboxClock{}
	env := inboxEnv(t, clock)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	acc := signUpInBrowser(t, b, env, "Live Bakery", "live@example.com")
	conn := env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Live Bakery"}})
	const from = "447700900123"
	inject := func(kind string, payload any) {
		t.Helper()
		if _, err := env.Sim.Inject(simulator.Inbound{PhoneNumberID: conn.PhoneNumberID, From: from, Name: "Oliver Brown", Type: kind, Payload: payload}); err != nil {
			t.Fatalf("inject %s: %v", kind, err)
		}
	}
	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		b.Run("empty inbox", chromedp.Navigate(base+"/inbox"), chromedp.WaitVisible("#inbox-empty", chromedp.ByQuery))
		b.CheckPage(fmt.Sprintf("inbox-empty-%d", width))
	}
	atWidth(b, 1280)
	b.Run("mark the page", chromedp.Evaluate(`window.__sameInboxPage = true`, nil))
	inject("text", map[string]any{"body": "Hello, are you open on Sunday?"})
	b.Run("the conversation appears", chromedp.WaitVisible(`#conversations li.conv`, chromedp.ByQuery))
	inject("image", map[string]any{"mime_type": "image/jpeg"})
	inject("location", map[string]any{"latitude": 51.5074, "longitude": -0.1278, "name": "Trafalgar Square"})
	inject("document", map[string]any{"mime_type": "application/pdf", "filename": "menu.pdf"})
	var last string
	b.Run("the last message follows", chromedp.Poll(`(() => { const l = document.querySelector("#conversations .conv-last");
		return l && l.textContent.trim() === "Document" ? l.textContent.trim() : null; })()`, &last))
	var same bool
	b.Eval(`window.__sameInboxPage === true`, &same)
	if !same {
		t.Fatal("the inbox reloaded the page instead of updating it")
	}
	row := b.Text("#conversations li.conv")
	if !strings.Contains(row, "Oliver Brown") || !strings.Contains(row, "4") || !strings.Contains(row, "Window open, 24 h left") {
		t.Fatalf("the inbox row reads %q", row)
	}
	b.Run("badge", chromedp.Poll(`document.querySelector("#nav-unread-count").textContent === "1" && !document.querySelector("#nav-unread").hidden`, nil))
	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		b.Run("inbox", chromedp.Navigate(base+"/inbox"), chromedp.WaitVisible("#conversations", chromedp.ByQuery))
		b.CheckPage(fmt.Sprintf("inbox-%d", width))
	}
	atWidth(b, 1280)

	// The thread, opened from the list by keyboard; a new message shows without a reload.
	b.PressOn("#conversations a.conv-link")
	conv := conversationOf(t, env, acc, from)
	if !strings.HasSuffix(b.Location(), fmt.Sprintf("/dashboard/inbox/%d", conv)) {
		t.Fatalf("the row led to %s", b.Location())
	}
	b.Run("mark the thread", chromedp.Evaluate(`window.__sameThreadPage = true`, nil))
	// A note being typed when the thread updates is kept (the team section is replaced).
	b.Run("start a note", chromedp.SendKeys("#t-note", "Half-typed", chromedp.ByQuery))
	inject("text", map[string]any{"body": "One more thing: do you deliver?"})
	b.Run("the new message appears", chromedp.Poll(`document.querySelector("#thread") && document.querySelector("#thread").textContent.includes("do you deliver?")`, nil))
	b.Eval(`window.__sameThreadPage === true`, &same)
	if !same {
		t.Fatal("the thread reloaded the page instead of updating it")
	}
	var typed string
	b.Eval(`document.querySelector("#t-note").value`, &typed)
	if typed != "Half-typed" {
		t.Fatalf("the note being typed reads %q after the update", typed)
	}
	// (by script: the read that the update made may replace the section once more meanwhile)
	b.Run("clear the note", chromedp.Evaluate(`document.querySelector("#t-note").value = ""`, nil))

	// Team: assign to oneself, a note, resolve, reopen.
	b.Run("choose assignee", chromedp.SetValue("#t-assignee", fmt.Sprint(userOf(t, env, "live@example.com")), chromedp.ByQuery))
	b.FocusAndPress("#assign")
	if got := b.Text("#team-state"); !strings.Contains(got, "Assigned to live@example.com") {
		t.Fatalf("after assigning: %q", got)
	}
	b.CheckPage("inbox-assigned")
	b.Run("write note", chromedp.SendKeys("#t-note", "Wants delivery on Sunday; check with the driver.", chromedp.ByQuery))
	b.FocusAndPress("#add-note")
	if got := b.Text("#notes"); !strings.Contains(got, "check with the driver") || !strings.Contains(got, "live@example.com") {
		t.Fatalf("notes: %q", got)
	}
	b.CheckPage("inbox-note")
	b.Run("mine", chromedp.Navigate(base+"/inbox?view=mine"), chromedp.WaitVisible("#conversations", chromedp.ByQuery))
	b.Run("thread again", chromedp.Navigate(fmt.Sprintf("%s/inbox/%d", base, conv)), chromedp.WaitVisible("#resolve", chromedp.ByQuery))
	b.FocusAndPress("#resolve")
	if got := b.Text("#team-state"); !strings.Contains(got, "Resolved") {
		t.Fatalf("after resolving: %q", got)
	}
	b.CheckPage("inbox-resolved")
	b.Run("resolved view", chromedp.Navigate(base+"/inbox?view=resolved"), chromedp.WaitVisible("#conversations", chromedp.ByQuery))
	b.Run("all view", chromedp.Navigate(base+"/inbox"), chromedp.WaitVisible("#inbox-empty", chromedp.ByQuery))
	b.Run("thread to reopen", chromedp.Navigate(fmt.Sprintf("%s/inbox/%d", base, conv)), chromedp.WaitVisible("#reopen", chromedp.ByQuery))
	b.FocusAndPress("#reopen")
	if got := b.Text("#team-state"); strings.Contains(got, "Resolved") || !strings.Contains(got, "Open") {
		t.Fatalf("after reopening: %q", got)
	}
	b.CheckPage("inbox-reopened")
	var actions []string
	if err := env.Store.DB().Select(&actions, `SELECT action FROM audit_log WHERE account_id = $1 AND action LIKE 'conversation.%' ORDER BY id`, acc); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(actions, ","); got != "conversation.assigned,conversation.note_added,conversation.resolved,conversation.reopened" {
		t.Fatalf("audit log: %s", got)
	}
}

// userOf is the id of the user with that email.
func userOf(t *testing.T, env *servertest.Env, email string) int64 {
	t.Helper()
	var id int64
	if err := env.Store.DB().Get(&id, `SELECT id FROM users WHERE lower(email) = lower($1)`, email); err != nil {
		t.Fatal(err)
	}
	return id
}

// The inbox follows the server's event stream: with fetch disabled in the page (so neither the
// polling fallback nor a fetch of the list can show anything), a new customer's conversation
// appears at the top of the list and an existing one's row moves up with its new message, put
// in place from the stream's rendered rows; the page is not reloaded, a focused row's link
// keeps the focus, and axe-core finds nothing.
func TestBrowserInboxStream(t *testing.T) {
	env := inboxEnv(t, &inboxClock{})
	b := browsertest.New(t)
	acc := signUpInBrowser(t, b, env, "Stream Bakery", "stream@example.com")
	conn := env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Stream Bakery"}})
	inject := func(from, name, body string) {
		t.Helper()
		if _, err := env.Sim.Inject(simulator.Inbound{PhoneNumberID: conn.PhoneNumberID, From: from, Name: name, Type: "text",
			Payload: map[string]any{"body": body}}); err != nil {
			t.Fatal(err)
		}
	}
	inject("447700900301", "Ada First", "Morning!")
	atWidth(b, 1280)
	b.Run("inbox", chromedp.Navigate(env.URL+"/dashboard/inbox"), chromedp.WaitVisible("#conversations li.conv", chromedp.ByQuery))
	b.Run("no fetch from here on", chromedp.Evaluate(`window.__samePage = true;
		window.fetch = function () { window.__fetched = true; return Promise.reject(new Error("no fetch in this test")); }`, nil))
	inject("447700900302", "Bea Stream", "Is the shop open?")
	var first string
	b.Run("the new conversation is on top", chromedp.Poll(`(() => { const l = document.querySelector("#conversations li.conv .conv-name");
		return l && l.textContent.trim() === "Bea Stream" ? l.textContent.trim() : null; })()`, &first))
	// Ada's row, focused, moves up with her new message and keeps the focus.
	b.Run("focus Ada", chromedp.Focus(`#conversations li.conv:nth-child(2) a.conv-link`, chromedp.ByQuery))
	inject("447700900301", "Ada First", "One more question")
	b.Run("Ada's row moves up", chromedp.Poll(`(() => { const l = document.querySelector("#conversations li.conv");
		return l && l.textContent.includes("One more question"); })()`, nil))
	var state struct {
		Same, Fetched bool
		Focus         string
		Rows          int
	}
	b.Eval(`({Same: window.__samePage === true, Fetched: window.__fetched === true,
		Focus: document.activeElement.closest("li.conv") ? document.activeElement.closest("li.conv").textContent : "",
		Rows: document.querySelectorAll("#conversations li.conv").length})`, &state)
	if !state.Same || state.Fetched || !strings.Contains(state.Focus, "Ada First") || state.Rows != 2 {
		t.Fatalf("after the stream's updates: %+v", state)
	}
	b.Run("badge", chromedp.Poll(`document.querySelector("#nav-unread-count").textContent === "2"`, nil))
	b.CheckPage("inbox-stream-1280")
}

// Without EventSource (removed before the page's scripts run) the inbox falls back to polling:
// a new customer's conversation still appears without a reload.
func TestBrowserInboxPollingFallback(t *testing.T) {
	env := inboxEnv(t, &inboxClock{})
	b := browsertest.New(t)
	acc := signUpInBrowser(t, b, env, "Poll Bakery", "poll@example.com")
	conn := env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Poll Bakery"}})
	b.Run("no EventSource", chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := cdppage.AddScriptToEvaluateOnNewDocument(`delete window.EventSource;`).Do(ctx)
		return err
	}))
	b.Run("inbox", chromedp.Navigate(env.URL+"/dashboard/inbox"), chromedp.WaitVisible("#inbox-empty", chromedp.ByQuery))
	var has bool
	b.Eval(`typeof EventSource !== "undefined"`, &has)
	if has {
		t.Fatal("EventSource is still there")
	}
	b.Run("mark the page", chromedp.Evaluate(`window.__samePage = true`, nil))
	if _, err := env.Sim.Inject(simulator.Inbound{PhoneNumberID: conn.PhoneNumberID, From: "447700900401", Name: "Cleo Poll", Type: "text",
		Payload: map[string]any{"body": "Polled hello"}}); err != nil {
		t.Fatal(err)
	}
	b.Run("the conversation appears", chromedp.Poll(`(() => { const l = document.querySelector("#conversations li.conv");
		return l && l.textContent.includes("Cleo Poll"); })()`, nil))
	var same bool
	b.Eval(`window.__samePage === true`, &same)
	if !same {
		t.Fatal("the inbox reloaded the page instead of updating it")
	}
}
