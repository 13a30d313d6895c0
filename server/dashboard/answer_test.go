package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"gateway/server/servertest"
	"gateway/store"
)

// A contact's page answers the customer while their window is open, through the API's answer
// path (source panel, message.sent with type text, the platform gets the text; a double submit
// sends once); when the window is closed the page says since when and points to the template
// send, and an answer posted anyway is refused with the API's words.
func TestPanelAnswer(t *testing.T) {
	env := reportsEnv(t)
	a := signUp(t, env, "Acme", "owner@acme.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Acme"}})
	ctx := context.Background()
	res, err := env.Store.RecordInbound(ctx, acc, store.InboundMessage{PlatformMessageID: "wamid.in.panel1", From: "5511987654321",
		ProfileName: "Ana", Type: "text", SentAt: time.Now().Add(-time.Hour), Content: json.RawMessage(`{"body":"Is it in blue?"}`)})
	if err != nil {
		t.Fatal(err)
	}
	page := fmt.Sprintf("/dashboard/contacts/%d", res.ContactID)
	p := a.get(page)
	if p.Status != http.StatusOK || !strings.Contains(p.Body, `id="answer-form"`) || !strings.Contains(p.Body, "service window is open until") {
		t.Fatalf("contact page with an open window: %d\n%s", p.Status, p.Body)
	}
	key := find(t, reFormKey, p.Body)
	form := url.Values{"key": {key}, "body": {"Yes, in blue and navy."}}
	p = a.post(page+"/answer", form)
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != page+"?notice=answered" {
		t.Fatalf("answer: %d %s\n%s", p.Status, p.Header.Get("Location"), p.Body)
	}
	p = a.post(page+"/answer", form)
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != page+"?notice=sent-before" {
		t.Fatalf("double submit: %d %s", p.Status, p.Header.Get("Location"))
	}
	if sent := env.Sim.Sent(); len(sent) != 1 || sent[0].Type != "text" || sent[0].TextBody != "Yes, in blue and navy." {
		t.Fatalf("the platform got %+v", sent)
	}
	var n int
	if err := env.Store.DB().Get(&n, `SELECT count(*) FROM messages WHERE account_id = $1 AND direction = 'out' AND type = 'text'
		AND source = 'panel' AND status = 'sent'`, acc); err != nil || n != 1 {
		t.Fatalf("%d panel answers recorded (%v)", n, err)
	}
	evs := env.Events(t, acc, "message.sent", 10)
	if len(evs) != 1 {
		t.Fatalf("message.sent events: %d", len(evs))
	}
	var data map[string]any
	_ = json.Unmarshal(evs[0].Data, &data)
	if data["source"] != "panel" || data["type"] != "text" {
		t.Fatalf("message.sent data %s", evs[0].Data)
	}
	// Each message's page says it in words: the answer what the customer received, the
	// customer's message what they sent.
	var answerID int64
	if err := env.Store.DB().Get(&answerID, `SELECT id FROM messages WHERE account_id = $1 AND source = 'panel'`, acc); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int64]string{answerID: `<p id="sent-text" class="message-preview">Yes, in blue and navy.</p>`,
		res.MessageID: `<p id="received-text" class="message-preview">Is it in blue?</p>`} {
		if p := a.get(fmt.Sprintf("/dashboard/messages/%d", id)); p.Status != http.StatusOK || !strings.Contains(p.Body, want) {
			t.Errorf("message %d's page: %d, want %s", id, p.Status, want)
		}
	}

	// A customer whose window closed: the page says when and points to the template send.
	old, err := env.Store.RecordInbound(ctx, acc, store.InboundMessage{PlatformMessageID: "wamid.in.panel2", From: "447700900123",
		ProfileName: "Oliver", Type: "text", SentAt: time.Now().Add(-30 * time.Hour), Content: json.RawMessage(`{"body":"Thanks"}`)})
	if err != nil {
		t.Fatal(err)
	}
	page = fmt.Sprintf("/dashboard/contacts/%d", old.ContactID)
	p = a.get(page)
	if p.Status != http.StatusOK || strings.Contains(p.Body, `id="answer-form"`) || !strings.Contains(p.Body, "service window closed on") ||
		!strings.Contains(p.Body, `href="/dashboard/send?destination=447700900123"`) {
		t.Fatalf("contact page with a closed window:\n%s", p.Body)
	}
	p = a.post(page+"/answer", url.Values{"key": {"k2"}, "body": {"Hello?"}})
	if p.Status != http.StatusConflict || !strings.Contains(p.Body, "only a template can be sent") {
		t.Fatalf("answer outside the window: %d\n%s", p.Status, p.Body)
	}
	if sent := env.Sim.Sent(); len(sent) != 1 {
		t.Fatalf("%d messages reached the platform", len(sent))
	}
}
