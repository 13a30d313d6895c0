package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"gateway/platform/simulator"
	"gateway/server/servertest"
)

// richEnv is sendEnv with the simulator's rich templates (media and location headers, URL,
// quick-reply and copy-code buttons, an AUTHENTICATION template) synced too.
func richEnv(t testing.TB) (*servertest.Env, servertest.Tenant) {
	t.Helper()
	env := servertest.New(t, servertest.Config{Simulator: quietSim()})
	tn := env.NewTenant("Acme Ltd")
	c := env.ConnectNumber(tn)
	env.Sim.SeedTemplates(c.WabaID, simulator.RichTemplates())
	if _, err := env.Server.SyncTemplates(context.Background(), tn.Account.ID); err != nil {
		t.Fatal(err)
	}
	return env, tn
}

// A test key's otp_login_code behaves like a live AUTHENTICATION template: the code fills the
// OTP button, the note shows the rendered text; client_reference comes back in the response,
// GET /messages/{id} and the test message.sent event. The listing stays the three fixtures.
func TestTestModeOTPAndClientReference(t *testing.T) {
	t.Parallel()
	env, a, _ := testModeEnv(t)
	var list struct {
		Templates []struct {
			Name         string            `json:"name"`
			HeaderFormat string            `json:"header_format"`
			Buttons      []json.RawMessage `json:"buttons"`
		} `json:"templates"`
	}
	mustOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/templates", Key: a.Test}), &list)
	if len(list.Templates) != 3 || list.Templates[2].Name != "otp_login_code" || list.Templates[2].HeaderFormat != "NONE" ||
		len(list.Templates[2].Buttons) != 1 || string(list.Templates[2].Buttons[0]) != `{"index":0,"takes_value":true,"text":"Copy code","type":"OTP"}` ||
		len(list.Templates[0].Buttons) != 0 {
		t.Fatalf("test-mode listing %+v", list)
	}

	r := send(env, a.Test, map[string]any{"destination": "15551234567", "template_name": "otp_login_code",
		"body_variables": []string{"482913"}, "client_reference": "login-77"})
	var d struct {
		sendData
		ClientReference string `json:"client_reference"`
	}
	mustOK(t, r, &d)
	if !strings.Contains(d.Note, `Rendered: "482913 is your verification code. For your security, do not share this code."`) ||
		!strings.Contains(d.Note, `button 0 (OTP "Copy code") carries "482913"`) || d.ClientReference != "login-77" {
		t.Fatalf("test send: %s", r.Body)
	}
	var m struct {
		ClientReference string `json:"client_reference"`
	}
	mustOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: fmt.Sprintf("/v1/messages/%d", d.MessageID), Key: a.Test}), &m)
	if m.ClientReference != "login-77" {
		t.Fatalf("GET test message: client_reference %q", m.ClientReference)
	}
	evs := events(t, env, a.Account.ID, "message.sent")
	if len(evs) != 1 || !evs[0].Test || !strings.Contains(string(evs[0].Data), `"client_reference": "login-77"`) {
		t.Fatalf("test message.sent %+v", evs)
	}
	checkEventBodies(t, env, a.Account.ID)

	// The fixture's one button is index 0; a code given explicitly is used as is.
	mustFail(t, send(env, a.Test, map[string]any{"destination": "15551234567", "template_name": "otp_login_code",
		"body_variables": []string{"482913"}, "button_variables": []map[string]any{{"index": 1, "value": "1"}}}), http.StatusUnprocessableEntity, "validation_failed")
	r = send(env, a.Test, map[string]any{"destination": "15551234567", "template_name": "otp_login_code",
		"body_variables": []string{"482913"}, "button_variables": []map[string]any{{"index": 0, "value": "999999"}}})
	d.ClientReference = ""
	mustOK(t, r, &d)
	if !strings.Contains(d.Note, `carries "999999"`) || d.ClientReference != "" {
		t.Fatalf("explicit code: %s", r.Body)
	}
}

// A live rich send keeps what was sent on the message row and returns client_reference in the
// response and GET /messages/{id}.
func TestRichSendLive(t *testing.T) {
	t.Parallel()
	env, a := richEnv(t)
	r := send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "spring_sale", "body_variables": []string{"Ana"},
		"header_media":     map[string]any{"type": "image", "link": "https://cdn.example.com/a.jpg"},
		"button_variables": []map[string]any{{"index": 0, "value": "SPRING24"}}, "client_reference": "crm-1"})
	var d struct {
		sendData
		ClientReference string `json:"client_reference"`
	}
	mustOK(t, r, &d)
	if d.ClientReference != "crm-1" {
		t.Fatalf("send: %s", r.Body)
	}
	var content string
	if err := env.Store.DB().Get(&content, `SELECT content::text FROM messages WHERE account_id = $1 AND id = $2`, a.Account.ID, d.MessageID); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(content, `"header_media": {"link": "https://cdn.example.com/a.jpg", "type": "image"}`) ||
		!strings.Contains(content, `"buttons": [{"type": "URL", "index": 0, "value": "SPRING24"}]`) {
		t.Fatalf("stored content %s", content)
	}
	var m struct {
		ClientReference string `json:"client_reference"`
	}
	mustOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: fmt.Sprintf("/v1/messages/%d", d.MessageID), Key: a.Live}), &m)
	if m.ClientReference != "crm-1" {
		t.Fatalf("GET message: client_reference %q", m.ClientReference)
	}
	// Without one, it is absent everywhere.
	r = send(env, a.Live, map[string]any{"destination": "15551234568", "template_name": "login_code", "body_variables": []string{"1234"}})
	if mustOK(t, r, &d); strings.Contains(string(r.Body), "client_reference") {
		t.Fatalf("send without a reference: %s", r.Body)
	}
	checkEventBodies(t, env, a.Account.ID)
}
