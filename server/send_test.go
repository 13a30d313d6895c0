package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/server"
	"gateway/server/domain"
	"gateway/server/servertest"
	"gateway/server/servertest/wait"
	"gateway/store"
	"gateway/store/storetest"
)

// ---- helpers shared by the messaging tests (send, messages, templates, idempotency, test mode) ----

// msgEnvelope is the response envelope as a client reads it.
type msgEnvelope struct {
	Success bool                `json:"success"`
	Message string              `json:"message"`
	Code    string              `json:"code"`
	Errors  map[string][]string `json:"errors"`
	Data    json.RawMessage     `json:"data"`
}

// sendData is data of a successful POST /messages/template.
type sendData struct {
	MessageID      int64  `json:"message_id"`
	ChatMessageID  string `json:"chat_message_id"`
	CampaignID     int64  `json:"campaign_id"`
	ConversationID int64  `json:"conversation_id"`
	ContactID      int64  `json:"contact_id"`
	ContactCreated bool   `json:"contact_created"`
	Status         string `json:"status"`
	Mode           string `json:"mode"`
	Delivery       string `json:"delivery"`
	Note           string `json:"note"`
}

// mustOK checks a 200 success envelope and decodes its data into v.
func mustOK(t testing.TB, r *servertest.Response, v any) msgEnvelope {
	t.Helper()
	var e msgEnvelope
	r.JSON(t, &e)
	if r.Status != http.StatusOK || !e.Success {
		t.Fatalf("want 200, got %d %s", r.Status, r.Body)
	}
	if v != nil {
		if err := json.Unmarshal(e.Data, v); err != nil {
			t.Fatalf("decode data %s: %v", e.Data, err)
		}
	}
	return e
}

// mustFail checks the status, success=false, the code and a non-empty message.
func mustFail(t testing.TB, r *servertest.Response, status int, code string) msgEnvelope {
	t.Helper()
	var e msgEnvelope
	r.JSON(t, &e)
	if r.Status != status || e.Success || e.Code != code || e.Message == "" {
		t.Fatalf("want %d %s, got %d %s", status, code, r.Status, r.Body)
	}
	return e
}

// dbInt runs a query returning one integer.
func dbInt(t testing.TB, env *servertest.Env, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := env.Store.DB().Get(&n, q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// quietSim is a simulator whose status webhooks are far in the future, so tests see only what
// they cause themselves.
func quietSim() *simulator.Config {
	return &simulator.Config{SentDelay: time.Hour, DeliveredDelay: time.Hour, ReadDelay: time.Hour}
}

// setSimWebhookURL points the simulator's webhooks at url ("" stops them) through its control
// API, as an operator of `gateway platform-sim` would.
func setSimWebhookURL(t testing.TB, env *servertest.Env, url string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"webhook_url": url})
	resp, err := http.Post(env.SimURL+"/_sim/config", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("simulator config: %d", resp.StatusCode)
	}
}

// sendEnv is a gateway over a quiet simulator with one tenant whose number is connected and
// whose templates (simulator.DefaultTemplates) are synced.
func sendEnv(t testing.TB, cfg servertest.Config) (*servertest.Env, servertest.Tenant) {
	t.Helper()
	if cfg.Simulator == nil {
		cfg.Simulator = quietSim()
	}
	env := servertest.New(t, cfg)
	tn := env.NewTenant("Acme Ltd")
	connectAndSync(t, env, tn)
	return env, tn
}

func connectAndSync(t testing.TB, env *servertest.Env, tn servertest.Tenant) {
	t.Helper()
	env.ConnectNumber(tn)
	if _, err := env.Server.SyncTemplates(context.Background(), tn.Account.ID); err != nil {
		t.Fatal(err)
	}
}

func send(env *servertest.Env, key string, body any, header ...string) *servertest.Response {
	env.T.Helper()
	r := servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Key: key, Body: body}
	if len(header) == 2 {
		r.Header = map[string]string{header[0]: header[1]}
	}
	return env.Do(r)
}

// templateID returns the service's id of the account's template.
func templateID(t testing.TB, env *servertest.Env, accountID int64, name, language string) int64 {
	t.Helper()
	return dbInt(t, env, `SELECT id FROM templates WHERE account_id = $1 AND name = $2 AND language = $3`, accountID, name, language)
}

// events returns the account's events of one type, oldest first.
func events(t testing.TB, env *servertest.Env, accountID int64, typ string) []store.Event {
	t.Helper()
	return env.Events(t, accountID, typ, 1000)
}

// checkEventBodies renders every event of the account as delivered and validates it against
// its event schema.
func checkEventBodies(t testing.TB, env *servertest.Env, accountID int64) {
	t.Helper()
	for _, ev := range events(t, env, accountID, "") {
		body := domain.EventBody(ev)
		// WebhookEvent's discriminator picks the event's own schema.
		if err := servertest.ValidateSchema(env.Spec, "WebhookEvent", body); err != nil {
			t.Errorf("event %s does not match its schema: %v\n%s", ev.Type, err, body)
		}
	}
}

// ---- tests ----

func TestSendByName(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	r := send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "order_confirmation",
		"name": "Ana Souza", "body_variables": []string{"Ana", "ORD-7781"}})
	var d sendData
	e := mustOK(t, r, &d)
	if e.Message != "Message sent" || d.Status != "sent" || !d.ContactCreated || d.MessageID == 0 || d.ContactID == 0 ||
		d.ConversationID == 0 || d.CampaignID == 0 || !strings.HasPrefix(d.ChatMessageID, "wamid.") || d.Mode != "" || d.Delivery != "" {
		t.Fatalf("response: %s", r.Body)
	}
	var keys map[string]json.RawMessage
	json.Unmarshal(e.Data, &keys)
	if len(keys) != 7 {
		t.Fatalf("live data has %d fields, want exactly the spec's 7: %s", len(keys), e.Data)
	}

	// The platform got exactly that send, correlated with our message id.
	sent := env.Sim.Sent()
	if len(sent) != 1 {
		t.Fatalf("%d platform sends, want 1", len(sent))
	}
	s := sent[0]
	if s.To != "+15551234567" || s.TemplateName != "order_confirmation" || s.TemplateLanguage != "en_US" ||
		strings.Join(s.Params("body"), "|") != "Ana|ORD-7781" || s.Wamid != d.ChatMessageID ||
		s.BizOpaqueCallbackData != fmt.Sprint(d.MessageID) {
		t.Fatalf("platform send: %+v", s)
	}

	// The rows: contact with the name, message sent with its wamid, history, campaign "API".
	var row struct {
		Status   string    `db:"status"`
		Wamid    string    `db:"platform_message_id"`
		SentAt   time.Time `db:"sent_at"`
		Campaign string    `db:"campaign"`
		Name     string    `db:"name"`
	}
	if err := env.Store.DB().Get(&row, `SELECT m.status, m.platform_message_id, m.sent_at, p.name AS campaign, c.name
		FROM messages m JOIN campaigns p ON p.id = m.campaign_id JOIN contacts c ON c.id = m.contact_id
		WHERE m.account_id = $1 AND m.id = $2`, a.Account.ID, d.MessageID); err != nil {
		t.Fatal(err)
	}
	if row.Status != "sent" || row.Wamid != d.ChatMessageID || row.Campaign != "API" || row.Name != "Ana Souza" {
		t.Fatalf("row: %+v", row)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM (`+storetest.History+`) h WHERE message_id = $1 AND status = 'sent'`, d.MessageID); n != 1 {
		t.Fatalf("%d sent history rows", n)
	}

	// Events: contact.created then message.sent, each in the spec's body shape.
	cc := events(t, env, a.Account.ID, "contact.created")
	ms := events(t, env, a.Account.ID, "message.sent")
	if len(cc) != 1 || len(ms) != 1 {
		t.Fatalf("%d contact.created, %d message.sent events", len(cc), len(ms))
	}
	var ccData struct {
		ContactID int64  `json:"contact_id"`
		Mobile    string `json:"mobile"`
		Name      string `json:"name"`
	}
	json.Unmarshal(cc[0].Data, &ccData)
	if ccData.ContactID != d.ContactID || ccData.Mobile != "15551234567" || ccData.Name != "Ana Souza" {
		t.Fatalf("contact.created data %s", cc[0].Data)
	}
	var msData struct {
		MessageID      int64  `json:"message_id"`
		ChatMessageID  string `json:"chat_message_id"`
		ConversationID int64  `json:"conversation_id"`
		ContactID      int64  `json:"contact_id"`
		Destination    string `json:"destination"`
		Template       string `json:"template"`
		Source         string `json:"source"`
	}
	json.Unmarshal(ms[0].Data, &msData)
	if msData.MessageID != d.MessageID || msData.ChatMessageID != d.ChatMessageID || msData.ConversationID != d.ConversationID ||
		msData.ContactID != d.ContactID || msData.Destination != "15551234567" || msData.Template != "order_confirmation" ||
		msData.Source != "api" || ms[0].Test {
		t.Fatalf("message.sent data %s", ms[0].Data)
	}
	checkEventBodies(t, env, a.Account.ID)

	// A second send to the same number: same contact, conversation and campaign; the name
	// given now does not rename the contact; no second contact.created.
	r = send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "welcome", "name": "Someone Else"})
	var d2 sendData
	mustOK(t, r, &d2)
	if d2.ContactCreated || d2.ContactID != d.ContactID || d2.ConversationID != d.ConversationID ||
		d2.CampaignID != d.CampaignID || d2.MessageID == d.MessageID || d2.ChatMessageID == d.ChatMessageID {
		t.Fatalf("second send %+v, first %+v", d2, d)
	}
	if name := dbInt(t, env, `SELECT count(*) FROM contacts WHERE account_id = $1 AND name = 'Ana Souza'`, a.Account.ID); name != 1 {
		t.Fatal("the second send renamed the contact")
	}
	if n := len(events(t, env, a.Account.ID, "contact.created")); n != 1 {
		t.Fatalf("%d contact.created events after two sends", n)
	}
	if n := len(events(t, env, a.Account.ID, "message.sent")); n != 2 {
		t.Fatalf("%d message.sent events after two sends", n)
	}
	checkEventBodies(t, env, a.Account.ID)
}

func TestSendNewContactWithoutName(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	var d sendData
	mustOK(t, send(env, a.Live, map[string]any{"destination": "447700900123", "template_name": "welcome"}), &d)
	if !d.ContactCreated {
		t.Fatal("contact not created")
	}
	evs := events(t, env, a.Account.ID, "contact.created")
	if len(evs) != 1 || !strings.Contains(string(evs[0].Data), `"name": ""`) {
		t.Fatalf("contact.created: %+v", evs)
	}
	checkEventBodies(t, env, a.Account.ID)
}

func TestSendCampaigns(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	body := func(dest, campaign string) map[string]any {
		b := map[string]any{"destination": dest, "template_name": "welcome"}
		if campaign != "" {
			b["campaign_name"] = campaign
		}
		return b
	}
	var n1, n2, def, other sendData
	mustOK(t, send(env, a.Live, body("15551230001", "November orders")), &n1)
	mustOK(t, send(env, a.Live, body("15551230002", "November orders")), &n2)
	mustOK(t, send(env, a.Live, body("15551230003", "")), &def)
	mustOK(t, send(env, a.Live, body("15551230004", "API")), &other)
	if n1.CampaignID != n2.CampaignID || n1.CampaignID == def.CampaignID || other.CampaignID != def.CampaignID {
		t.Fatalf("campaigns: named %d %d, default %d, \"API\" %d", n1.CampaignID, n2.CampaignID, def.CampaignID, other.CampaignID)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM campaigns WHERE account_id = $1`, a.Account.ID); n != 2 {
		t.Fatalf("%d campaigns, want 2", n)
	}
	// Campaigns are per account: B's "November orders" is its own.
	b := env.NewTenant("Beta Inc")
	connectAndSync(t, env, b)
	var bn sendData
	mustOK(t, send(env, b.Live, body("15551230001", "November orders")), &bn)
	if bn.CampaignID == n1.CampaignID || bn.ContactID == n1.ContactID || bn.ConversationID == n1.ConversationID {
		t.Fatalf("B shares A's rows: %+v vs %+v", bn, n1)
	}
}

func TestSendByIDAndLanguage(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	oc := templateID(t, env, a.Account.ID, "order_confirmation", "en_US")
	es := templateID(t, env, a.Account.ID, "appointment_reminder", "es_MX")
	vars := []string{"Ana", "ORD-1"}

	// By id alone, by id with the matching name and language.
	var d sendData
	mustOK(t, send(env, a.Live, map[string]any{"destination": "15551234567", "template_id": oc, "body_variables": vars}), &d)
	mustOK(t, send(env, a.Live, map[string]any{"destination": "15551234567", "template_id": oc,
		"template_name": "order_confirmation", "language": "en_US", "body_variables": vars}), &d)

	// A name approved in two languages needs the language...
	r := send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "appointment_reminder", "body_variables": vars})
	e := mustFail(t, r, http.StatusUnprocessableEntity, "validation_failed")
	if len(e.Errors["language"]) != 1 || !strings.Contains(e.Errors["language"][0], "en_US, es_MX") {
		t.Fatalf("ambiguous language: %s", r.Body)
	}
	// ... and with it, that language is sent (by name or by id).
	mustOK(t, send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "appointment_reminder",
		"language": "es_MX", "body_variables": vars}), &d)
	mustOK(t, send(env, a.Live, map[string]any{"destination": "15551234567", "template_id": es, "body_variables": vars}), &d)
	sent := env.Sim.Sent()
	for _, s := range sent[len(sent)-2:] {
		if s.TemplateName != "appointment_reminder" || s.TemplateLanguage != "es_MX" {
			t.Fatalf("sent %s/%s, want appointment_reminder/es_MX", s.TemplateName, s.TemplateLanguage)
		}
	}
	before := len(sent)

	// An id and a name (or language) that disagree: 422 naming the field, nothing sent.
	r = send(env, a.Live, map[string]any{"destination": "15551234567", "template_id": oc, "template_name": "welcome", "body_variables": vars})
	if e := mustFail(t, r, http.StatusUnprocessableEntity, "validation_failed"); len(e.Errors["template_name"]) != 1 {
		t.Fatalf("disagreeing name: %s", r.Body)
	}
	r = send(env, a.Live, map[string]any{"destination": "15551234567", "template_id": es, "language": "en_US", "body_variables": vars})
	if e := mustFail(t, r, http.StatusUnprocessableEntity, "validation_failed"); len(e.Errors["language"]) != 1 {
		t.Fatalf("disagreeing language: %s", r.Body)
	}
	// A language the name is not approved in: 404.
	r = send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "order_confirmation", "language": "pt_BR", "body_variables": vars})
	if e := mustFail(t, r, http.StatusNotFound, "template_not_found"); !strings.Contains(e.Message, "pt_BR") {
		t.Fatalf("unknown language: %s", r.Body)
	}
	if n := len(env.Sim.Sent()); n != before {
		t.Fatalf("%d platform sends for refused requests", n-before)
	}
}

func TestSendHeaderAndNamedTemplates(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	var d sendData
	mustOK(t, send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "shipping_update",
		"header_variables": []string{"ORD-7781"}, "body_variables": []string{"Friday"}}), &d)
	mustOK(t, send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "reservation_confirmation",
		"body_variables": []string{"Ana", "4"}}), &d)
	sent := env.Sim.Sent()
	if len(sent) != 2 || strings.Join(sent[0].Params("header"), "") != "ORD-7781" || strings.Join(sent[0].Params("body"), "") != "Friday" {
		t.Fatalf("header send: %+v", sent)
	}
	var names []string
	for _, p := range sent[1].Parameters {
		names = append(names, p.Name+"="+p.Value)
	}
	if strings.Join(names, ",") != "first_name=Ana,guests=4" {
		t.Fatalf("named send parameters %v", names)
	}
}

// Every refusal before the platform call: exact status, envelope and code, and no platform send.
func TestSendRefusals(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	b := env.NewTenant("Beta Inc") // no number connected
	bTpl := env.NewTenant("Gamma Co")
	connectAndSync(t, env, bTpl)
	otherAccountsTemplate := templateID(t, env, bTpl.Account.ID, "welcome", "en_US")
	pending := templateID(t, env, a.Account.ID, "payment_reminder", "en_US")
	if _, _, err := env.Store.UpsertContact(context.Background(), a.Account.ID, store.ContactInput{Mobile: "15559990000"}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.SetContactBlocked(context.Background(), a.Account.ID, "15559990000", true); err != nil {
		t.Fatal(err)
	}
	messagesBefore := dbInt(t, env, `SELECT count(*) FROM messages WHERE account_id = $1`, a.Account.ID)

	vars := []string{"Ana", "ORD-1"}
	cases := []struct {
		name   string
		key    string
		body   map[string]any
		status int
		code   string
		field  string // a field named in errors (422)
		text   string // a fragment of the message
	}{
		{"no template", a.Live, map[string]any{"destination": "15551234567"}, 422, "validation_failed", "template_name", "template_name"},
		{"no destination", a.Live, map[string]any{"template_name": "welcome"}, 422, "validation_failed", "destination", ""},
		{"destination not digits", a.Live, map[string]any{"destination": "+1 555 123 4567", "template_name": "welcome"}, 422, "validation_failed", "destination", ""},
		{"destination too short", a.Live, map[string]any{"destination": "1234567", "template_name": "welcome"}, 422, "validation_failed", "destination", ""},
		{"destination with leading 0", a.Live, map[string]any{"destination": "0155512345", "template_name": "welcome"}, 422, "validation_failed", "destination", ""},
		{"name too long", a.Live, map[string]any{"destination": "15551234567", "template_name": "welcome", "name": strings.Repeat("n", 81)}, 422, "validation_failed", "name", ""},
		{"campaign too long", a.Live, map[string]any{"destination": "15551234567", "template_name": "welcome", "campaign_name": strings.Repeat("c", 121)}, 422, "validation_failed", "campaign_name", ""},
		{"template name too long", a.Live, map[string]any{"destination": "15551234567", "template_name": strings.Repeat("t", 121)}, 422, "validation_failed", "template_name", ""},
		{"unknown field", a.Live, map[string]any{"destination": "15551234567", "template_name": "welcome", "to": "x"}, 422, "validation_failed", "to", ""},
		{"empty variable", a.Live, map[string]any{"destination": "15551234567", "template_name": "order_confirmation", "body_variables": []string{"Ana", ""}}, 422, "validation_failed", "body_variables.1", ""},
		{"not connected", b.Live, map[string]any{"destination": "15551234567", "template_name": "welcome"}, 409, "number_not_connected", "", "No number is connected"},
		{"unknown name", a.Live, map[string]any{"destination": "15551234567", "template_name": "no_such_template"}, 404, "template_not_found", "", `"no_such_template"`},
		{"pending template by name", a.Live, map[string]any{"destination": "15551234567", "template_name": "payment_reminder", "body_variables": []string{"INV-1"}}, 404, "template_not_found", "", "payment_reminder"},
		{"rejected template by name", a.Live, map[string]any{"destination": "15551234567", "template_name": "flash_sale", "body_variables": []string{"50%"}}, 404, "template_not_found", "", "flash_sale"},
		{"pending template by id", a.Live, map[string]any{"destination": "15551234567", "template_id": pending, "body_variables": []string{"INV-1"}}, 404, "template_not_found", "", fmt.Sprint(pending)},
		{"unknown id", a.Live, map[string]any{"destination": "15551234567", "template_id": 999999999}, 404, "template_not_found", "", "999999999"},
		{"another account's template id", a.Live, map[string]any{"destination": "15551234567", "template_id": otherAccountsTemplate}, 404, "template_not_found", "", ""},
		{"too few body variables", a.Live, map[string]any{"destination": "15551234567", "template_name": "order_confirmation", "body_variables": []string{"Ana"}}, 422, "validation_failed", "body_variables", "body_variables"},
		{"too many body variables", a.Live, map[string]any{"destination": "15551234567", "template_name": "welcome", "body_variables": []string{"x"}}, 422, "validation_failed", "body_variables", ""},
		{"missing header variable", a.Live, map[string]any{"destination": "15551234567", "template_name": "shipping_update", "body_variables": []string{"Friday"}}, 422, "validation_failed", "header_variables", ""},
		{"unexpected header variable", a.Live, map[string]any{"destination": "15551234567", "template_name": "order_confirmation", "header_variables": []string{"x"}, "body_variables": vars}, 422, "validation_failed", "header_variables", ""},
		{"blocked contact", a.Live, map[string]any{"destination": "15559990000", "template_name": "order_confirmation", "body_variables": vars}, 409, "contact_blocked", "", "opted out"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := send(env, tc.key, tc.body)
			e := mustFail(t, r, tc.status, tc.code)
			if tc.field != "" && len(e.Errors[tc.field]) == 0 {
				t.Fatalf("errors lack %q: %s", tc.field, r.Body)
			}
			if tc.status != 422 && e.Errors != nil {
				t.Fatalf("errors on a %d: %s", tc.status, r.Body)
			}
			if tc.text != "" && !strings.Contains(e.Message, tc.text) {
				t.Fatalf("message %q lacks %q", e.Message, tc.text)
			}
		})
	}
	if n := len(env.Sim.Sent()); n != 0 {
		t.Fatalf("%d platform sends for refused requests", n)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM messages WHERE account_id = $1`, a.Account.ID); n != messagesBefore {
		t.Fatalf("refused requests wrote %d messages", n-messagesBefore)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'message.sent'`, a.Account.ID); n != 0 {
		t.Fatalf("refused requests wrote %d message.sent events", n)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM contacts WHERE account_id = $1`, a.Account.ID); n != 1 {
		t.Fatalf("refused requests created contacts: %d", n)
	}
}

// A template the platform rejects, or a send it refuses: 502 repeating the platform's reason;
// the message is kept as failed with the platform's error and no message.sent is written.
func TestSendPlatformRejects(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	env.Sim.Script("15551234567", simulator.Outcome{FailSync: 131026})
	r := send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "welcome", "name": "Ana"})
	e := mustFail(t, r, http.StatusBadGateway, "platform_rejected")
	if !strings.HasPrefix(e.Message, "The platform rejected the send: ") || !strings.Contains(e.Message, "(code 131026)") ||
		!strings.Contains(strings.ToLower(e.Message), "undeliverable") {
		t.Fatalf("502 message %q does not repeat the platform's reason", e.Message)
	}
	var row struct {
		ID      int64   `db:"id"`
		Status  string  `db:"status"`
		Code    *int    `db:"error_code"`
		Title   *string `db:"error_title"`
		Details *string `db:"error_details"`
		Wamid   *string `db:"platform_message_id"`
	}
	if err := env.Store.DB().Get(&row, `SELECT id, status, error_code, error_title, error_details, platform_message_id
		FROM messages WHERE account_id = $1`, a.Account.ID); err != nil {
		t.Fatal(err)
	}
	if row.Status != "failed" || row.Code == nil || *row.Code != 131026 || row.Title == nil || *row.Title == "" || row.Wamid != nil {
		t.Fatalf("failed row: %+v", row)
	}
	if n := len(events(t, env, a.Account.ID, "message.sent")); n != 0 {
		t.Fatalf("%d message.sent events for a rejected send", n)
	}
	// The contact was created by the attempt (its event stands); the failure is readable.
	if n := len(events(t, env, a.Account.ID, "contact.created")); n != 1 {
		t.Fatalf("%d contact.created events", n)
	}
	checkEventBodies(t, env, a.Account.ID)
	g := env.Do(servertest.Request{Method: http.MethodGet, Path: fmt.Sprintf("/v1/messages/%d", row.ID), Key: a.Live})
	var m messageData
	mustOK(t, g, &m)
	if m.Status != "failed" || m.Error == nil || m.Error.Code != 131026 || m.Error.Title == "" || m.ChatMessageID != "" {
		t.Fatalf("GET failed message: %s", g.Body)
	}

	// The platform's template check (our copy is stale: the template was paused there and
	// its status webhook has not reached us).
	setSimWebhookURL(t, env, "")
	if err := env.Sim.SetTemplateStatus("waba-"+fmt.Sprint(a.Account.ID), "1094411223344001", "PAUSED", ""); err != nil {
		t.Fatal(err)
	}
	r = send(env, a.Live, map[string]any{"destination": "15557654321", "template_name": "order_confirmation", "body_variables": []string{"Ana", "1"}})
	e = mustFail(t, r, http.StatusBadGateway, "platform_rejected")
	if !strings.Contains(e.Message, "(code 132015)") {
		t.Fatalf("paused template: %q", e.Message)
	}
}

// A platform that does not answer in time: 502 platform_unavailable with a clear message that
// says the outcome is unknown (outcome_unknown, message_id), and the row records the unknown
// outcome: still pending, not failed (TestSendTimeoutOutcomeUnknownIsAdopted goes on).
func TestSendPlatformTimeout(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{Options: server.Options{SendTimeout: 300 * time.Millisecond}})
	env.Sim.Script("15551234567", simulator.Outcome{Hang: 5 * time.Second})
	start := time.Now()
	r := send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "welcome"})
	e := mustFail(t, r, http.StatusBadGateway, "platform_unavailable")
	if e.Message != "The messaging platform did not answer within 300ms; the message may or may not have been sent" {
		t.Fatalf("timeout message %q", e.Message)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the send took %v with a 300ms platform timeout", d)
	}
	var row struct {
		Status         string `db:"status"`
		OutcomeUnknown bool   `db:"outcome_unknown"`
	}
	if err := env.Store.DB().Get(&row, `SELECT status, outcome_unknown FROM messages WHERE account_id = $1`, a.Account.ID); err != nil {
		t.Fatal(err)
	}
	if row.Status != "pending" || !row.OutcomeUnknown {
		t.Fatalf("unanswered send recorded as %+v, want pending with its outcome unknown", row)
	}
	if !strings.Contains(string(r.Body), `"outcome_unknown":true`) {
		t.Fatalf("the 502 does not say the outcome is unknown: %s", r.Body)
	}
	if n := len(events(t, env, a.Account.ID, "message.sent")); n != 0 {
		t.Fatalf("%d message.sent events for an unanswered send", n)
	}
}

// A platform that cannot be reached at all: 502 platform_unavailable.
func TestSendPlatformUnreachable(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	env.Sim.Close()
	r := send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "welcome"})
	e := mustFail(t, r, http.StatusBadGateway, "platform_unavailable")
	if !strings.Contains(e.Message, "may or may not have been sent") || strings.Contains(e.Message, "127.0.0.1") {
		t.Fatalf("unreachable message %q", e.Message)
	}
}

// A client that gives up mid-request does not lose the platform's message id: once the
// platform accepted the send, recording it runs to the end.
func TestSendClientDisconnectKeepsPlatformID(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	env.Sim.Script("15551234567", simulator.Outcome{Hang: 800 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.URL+"/v1/messages/template",
		strings.NewReader(`{"destination":"15551234567","template_name":"welcome"}`))
	req.Header.Set("Authorization", "Bearer "+a.Live)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the client got an answer (%d) before giving up", resp.StatusCode)
	}
	// The platform accepted the message; the row gets its id once the platform answers.
	var wamid string
	wait.For(t, func() bool {
		var rows []struct {
			Status string  `db:"status"`
			Wamid  *string `db:"platform_message_id"`
		}
		if err := env.Store.DB().Select(&rows, `SELECT status, platform_message_id FROM messages WHERE account_id = $1`, a.Account.ID); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].Wamid == nil {
			return false
		}
		if rows[0].Status != "sent" {
			t.Fatalf("status %s", rows[0].Status)
		}
		wamid = *rows[0].Wamid
		return true
	}, 10*time.Second, "the message to get its platform id")
	sent := env.Sim.Sent()
	if len(sent) != 1 || sent[0].Wamid != wamid {
		t.Fatalf("recorded %q, platform accepted %+v", wamid, sent)
	}
	if n := len(events(t, env, a.Account.ID, "message.sent")); n != 1 {
		t.Fatalf("%d message.sent events", n)
	}
}

// The platform's wa_id, when it differs from the destination, is kept as a contact alias.
func TestSendRecordsWaIDAlias(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	// A Mexican mobile without the 1: the platform answers with the 521 form.
	dest := "525512345678"
	var d sendData
	mustOK(t, send(env, a.Live, map[string]any{"destination": dest, "template_name": "welcome"}), &d)
	waID := env.Sim.Sent()[0].WaID
	if waID != "5215512345678" {
		t.Fatalf("the simulator answered wa_id %s", waID)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM contact_aliases WHERE account_id = $1 AND alias = $2 AND contact_id = $3`,
		a.Account.ID, waID, d.ContactID); n != 1 {
		t.Fatalf("no alias %s for contact %d", waID, d.ContactID)
	}
}

// Concurrent first sends to one new number make one contact, one conversation and one
// contact.created.
func TestSendConcurrentSameNewContact(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	const n = 12
	var wg sync.WaitGroup
	res := make([]sendData, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := env.DoConcurrent(servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Key: a.Live,
				Body: map[string]any{"destination": "15551234567", "template_name": "welcome", "campaign_name": "Launch"}})
			if err == nil && r.Status != http.StatusOK {
				err = fmt.Errorf("status %d %s", r.Status, r.Body)
			}
			if err == nil {
				var e msgEnvelope
				if err = json.Unmarshal(r.Body, &e); err == nil {
					err = json.Unmarshal(e.Data, &res[i])
				}
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	created := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if res[i].ContactID != res[0].ContactID || res[i].ConversationID != res[0].ConversationID || res[i].CampaignID != res[0].CampaignID {
			t.Fatalf("send %d: %+v, send 0: %+v", i, res[i], res[0])
		}
		if res[i].ContactCreated {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("%d sends say they created the contact", created)
	}
	for q, want := range map[string]int64{
		`SELECT count(*) FROM contacts WHERE account_id = $1`:                               1,
		`SELECT count(*) FROM conversations WHERE account_id = $1`:                          1,
		`SELECT count(*) FROM campaigns WHERE account_id = $1`:                              1,
		`SELECT count(*) FROM events WHERE account_id = $1 AND type = 'contact.created'`:    1,
		`SELECT count(*) FROM events WHERE account_id = $1 AND type = 'message.sent'`:       n,
		`SELECT count(*) FROM messages WHERE account_id = $1 AND platform_message_id <> ''`: n,
	} {
		if got := dbInt(t, env, q, a.Account.ID); got != want {
			t.Fatalf("%s = %d, want %d", q, got, want)
		}
	}
}
