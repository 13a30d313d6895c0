package server_test

import (
	"net/http"
	"strings"
	"testing"

	"gateway/server/servertest"
)

// A template sent to a user id reaches the platform with the user id as its recipient (no "to"),
// creates the contact known by that id, and message.sent names it.
func TestSendTemplateToUserID(t *testing.T) {
	t.Parallel()
	env, tn := sendEnv(t, servertest.Config{})
	const uid = "US.13491208655302741918"
	var d sendData
	mustOK(t, send(env, tn.Live, map[string]any{"user_id": uid, "template_name": "order_confirmation",
		"body_variables": []string{"Ana", "ORD-7781"}}), &d)
	if d.Status != "sent" || !d.ContactCreated || d.MessageID == 0 || !strings.HasPrefix(d.ChatMessageID, "wamid.") {
		t.Fatalf("%+v", d)
	}
	sm := lastSent(t, env)
	if sm.Recipient != uid || sm.To != "" || sm.TemplateName != "order_confirmation" || strings.Join(sm.Params("body"), "|") != "Ana|ORD-7781" {
		t.Fatalf("simulator got %+v", sm)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM contacts WHERE account_id = $1 AND id = $2 AND user_id = $3`,
		tn.Account.ID, d.ContactID, uid); n != 1 {
		t.Fatalf("contacts with the user id: %d", n)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'message.sent' AND data->>'user_id' = $2`,
		tn.Account.ID, uid); n != 1 {
		t.Fatalf("message.sent with the user id: %d", n)
	}
	// The next send to the same id is the same person.
	var again sendData
	mustOK(t, send(env, tn.Live, map[string]any{"user_id": uid, "template_name": "order_confirmation",
		"body_variables": []string{"Ana", "ORD-7782"}}), &again)
	if again.ContactCreated || again.ContactID != d.ContactID {
		t.Fatalf("second send %+v, first %+v", again, d)
	}
}

// The recipient is exactly one of destination and user_id; a user id is never read as a number;
// an authentication template with a code button goes only to a number. None reaches the platform.
func TestSendTemplateUserIDRefusals(t *testing.T) {
	t.Parallel()
	env, tn := richEnv(t)
	body := []string{"Ana", "ORD-7781"}
	cases := []struct {
		name  string
		body  map[string]any
		field string
		says  string
	}{
		{"no recipient", map[string]any{"template_name": "order_confirmation", "body_variables": body}, "destination", "required unless user_id"},
		{"two recipients", map[string]any{"destination": "15551234567", "user_id": "US.1", "template_name": "order_confirmation",
			"body_variables": body}, "user_id", "not both"},
		{"a number as user id", map[string]any{"user_id": "15551234567", "template_name": "order_confirmation", "body_variables": body},
			"user_id", "business-scoped user id"},
		{"a number with a plus as user id", map[string]any{"user_id": "+15551234567", "template_name": "order_confirmation",
			"body_variables": body}, "user_id", "business-scoped user id"},
		{"authentication template", map[string]any{"user_id": "US.13491208655302741918", "template_name": "login_code",
			"body_variables": []string{"482913"}}, "user_id", "only to a phone number"},
	}
	before := len(env.Sim.Sent())
	for _, c := range cases {
		r := send(env, tn.Live, c.body)
		e := mustFail(t, r, http.StatusUnprocessableEntity, "validation_failed")
		if got := strings.Join(e.Errors[c.field], " "); !strings.Contains(got, c.says) {
			t.Errorf("%s: errors[%s] = %q, want it to say %q: %s", c.name, c.field, got, c.says, r.Body)
		}
	}
	// The authentication template itself goes to a number.
	mustOK(t, send(env, tn.Live, map[string]any{"destination": "15551234567", "template_name": "login_code",
		"body_variables": []string{"482913"}}), nil)
	if n := len(env.Sim.Sent()) - before; n != 1 {
		t.Fatalf("%d sends reached the platform, want only the one to a number", n)
	}
}

// A test key's template to a user id is simulated (the sandbox delivers only to a joined phone)
// and follows the live rules: the fixture authentication template refuses a user id.
func TestSendTemplateToUserIDTestMode(t *testing.T) {
	t.Parallel()
	env, tn := sendEnv(t, servertest.Config{})
	before := len(env.Sim.Sent())
	var d sendData
	mustOK(t, send(env, tn.Test, map[string]any{"user_id": "US.13491208655302741918", "template_name": "sandbox_welcome"}), &d)
	if d.Mode != "test" || d.Delivery != "simulated" || !strings.Contains(d.Note, "not to a user id") {
		t.Fatalf("%+v", d)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM test_messages WHERE account_id = $1 AND destination = 'US.13491208655302741918'`,
		tn.Account.ID); n != 1 {
		t.Fatalf("test messages to the user id: %d", n)
	}
	r := send(env, tn.Test, map[string]any{"user_id": "US.13491208655302741918", "template_name": "otp_login_code",
		"body_variables": []string{"482913"}})
	if e := mustFail(t, r, http.StatusUnprocessableEntity, "validation_failed"); !strings.Contains(strings.Join(e.Errors["user_id"], " "), "only to a phone number") {
		t.Fatalf("%s", r.Body)
	}
	if n := len(env.Sim.Sent()) - before; n != 0 {
		t.Fatalf("%d messages reached the platform", n)
	}
}
