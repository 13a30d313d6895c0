package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"gateway/server/servertest"
	"gateway/store"
)

var reFormKey = regexp.MustCompile(`name="key" value="([0-9a-f]+)"`)

// A send from the panel goes through the API's send path: it reaches the platform, is recorded
// with source panel, writes message.sent with source "panel" (valid against the event's
// schema), a double submit of the form sends once, and the API's refusals (variable count,
// blocked contact) are shown on the form.
func TestPanelSend(t *testing.T) {
	env := reportsEnv(t)
	a := signUp(t, env, "Acme", "owner@acme.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Acme"}})
	if _, err := env.Server.SyncTemplates(context.Background(), acc); err != nil {
		t.Fatal(err)
	}
	var tpl int64
	if err := env.Store.DB().Get(&tpl, `SELECT id FROM templates WHERE account_id = $1 AND name = 'order_confirmation'`, acc); err != nil {
		t.Fatal(err)
	}
	p := a.get("/dashboard/send")
	if p.Status != http.StatusOK || !strings.Contains(p.Body, "order_confirmation (en_US)") || strings.Contains(p.Body, "flash_sale") {
		t.Fatalf("send page lists the approved templates only: %d\n%s", p.Status, p.Body)
	}
	p = a.get(fmt.Sprintf("/dashboard/send?template=%d", tpl))
	key := find(t, reFormKey, p.Body)
	if strings.Count(p.Body, `name="body"`) != 2 {
		t.Fatalf("form for a two-variable template:\n%s", p.Body)
	}
	// Preview.
	q := url.Values{"template": {fmt.Sprint(tpl)}, "key": {key}, "destination": {"5511987654321"}, "body": {"Ana", "ORD-7781"}}
	p = a.get("/dashboard/send?" + q.Encode())
	if !strings.Contains(p.Body, "Hi Ana, your order ORD-7781 is confirmed.") || find(t, reFormKey, p.Body) != key {
		t.Fatalf("preview:\n%s", p.Body)
	}
	form := url.Values{"template": {fmt.Sprint(tpl)}, "key": {key}, "destination": {"+55 11 98765-4321"}, "name": {"Ana"},
		"campaign": {"Panel promo"}, "body": {"Ana", "ORD-7781"}}
	p = a.post("/dashboard/send", form)
	loc := p.Header.Get("Location")
	if p.Status != http.StatusSeeOther || !strings.HasPrefix(loc, "/dashboard/messages/") || !strings.HasSuffix(loc, "?notice=sent") {
		t.Fatalf("send: %d %s\n%s", p.Status, loc, p.Body)
	}
	var m struct {
		ID     int64  `db:"id"`
		Source string `db:"source"`
		Status string `db:"status"`
		Camp   string `db:"campaign"`
	}
	if err := env.Store.DB().Get(&m, `SELECT m.id, m.source, m.status, p.name AS campaign FROM messages m JOIN campaigns p ON p.id = m.campaign_id
		WHERE m.account_id = $1`, acc); err != nil {
		t.Fatal(err)
	}
	if m.Source != "panel" || m.Status != "sent" || m.Camp != "Panel promo" || loc != fmt.Sprintf("/dashboard/messages/%d?notice=sent", m.ID) {
		t.Fatalf("recorded %+v, redirected to %s", m, loc)
	}
	if sent := env.Sim.Sent(); len(sent) != 1 || sent[0].TemplateName != "order_confirmation" || sent[0].BizOpaqueCallbackData != fmt.Sprint(m.ID) {
		t.Fatalf("the platform got %+v", sent)
	}
	// The form's key is bound to the message, as an API send's Idempotency-Key is, so no later
	// failure can release it for a second send.
	var bound int64
	if err := env.Store.DB().Get(&bound, `SELECT message_id FROM idempotency_keys WHERE account_id = $1 AND key = $2`, acc, "panel:"+key); err != nil || bound != m.ID {
		t.Fatalf("the form's key is bound to message %d (%v), want %d", bound, err, m.ID)
	}
	evs := env.Events(t, acc, "message.sent", 10)
	if len(evs) != 1 {
		t.Fatalf("message.sent events %v", evs)
	}
	var data map[string]any
	json.Unmarshal(evs[0].Data, &data)
	if data["source"] != "panel" || data["message_id"] != float64(m.ID) {
		t.Fatalf("message.sent data %v", data)
	}
	if err := env.ValidateSchema("MessageSentData", evs[0].Data); err != nil {
		t.Fatalf("message.sent data against its schema: %v", err)
	}
	// The message page shows it, with the notice.
	if p := a.get(loc); !strings.Contains(p.Body, "The message was sent.") || !strings.Contains(p.Body, "order_confirmation") {
		t.Fatalf("message page after the send:\n%s", p.Body)
	}
	// The same form again: nothing more is sent.
	p = a.post("/dashboard/send", form)
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != fmt.Sprintf("/dashboard/messages/%d?notice=sent-before", m.ID) {
		t.Fatalf("double submit: %d %s", p.Status, p.Header.Get("Location"))
	}
	if n := len(env.Sim.Sent()); n != 1 {
		t.Fatalf("double submit reached the platform: %d sends", n)
	}
	// Refusals of the API's rules, with new forms.
	form.Set("key", "k2")
	form["body"] = []string{"Ana"}
	if p := a.post("/dashboard/send", form); p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "takes 2 variables") {
		t.Fatalf("one variable short: %d\n%s", p.Status, p.Body)
	}
	if _, err := env.Store.SetContactBlocked(context.Background(), acc, "5511987654321", true); err != nil {
		t.Fatal(err)
	}
	form.Set("key", "k3")
	form["body"] = []string{"Ana", "ORD-2"}
	if p := a.post("/dashboard/send", form); p.Status != http.StatusConflict || !strings.Contains(p.Body, "opted out") {
		t.Fatalf("send to a blocked contact: %d\n%s", p.Status, p.Body)
	}
	if n := len(env.Sim.Sent()); n != 1 {
		t.Fatalf("refused sends reached the platform: %d sends", n)
	}
}
