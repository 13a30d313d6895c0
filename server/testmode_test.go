package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/server/domain"
	"gateway/server/servertest"
)

// testModeEnv is a gateway whose clock the test moves, over a quiet simulator on which the
// sandbox number is registered, with one tenant that has a connected number and synced
// templates (which test keys must never see or use).
func testModeEnv(t *testing.T) (*servertest.Env, servertest.Tenant, *fakeClock) {
	t.Helper()
	clock := &fakeClock{t: time.Now().UTC().Truncate(time.Second)}
	env, a := sendEnv(t, servertest.Config{Clock: clock.Now})
	env.Sim.AddNumber(simulator.Number{PhoneNumberID: "sandbox-pnid", WabaID: "sandbox-waba", DisplayPhoneNumber: "15550001111", AccessToken: "sandbox-token"})
	return env, a, clock
}

func TestTestModeTemplates(t *testing.T) {
	t.Parallel()
	env, a, _ := testModeEnv(t)
	ts := listTemplates(t, env, a.Test)
	if got := names(ts); got != "sandbox_welcome/en_US,order_confirmation_update/en_US,otp_login_code/en_US" {
		t.Fatalf("test key lists %s", got)
	}
	for _, tp := range ts {
		if tp.Status != "APPROVED" || tp.Category.Name == "" || tp.Category.Label == "" || tp.ID == 0 {
			t.Fatalf("fixture %+v", tp)
		}
	}
	if ts[2].Category.Name != "AUTHENTICATION" || *ts[1].BodyVariables != 2 || *ts[2].BodyVariables != 1 {
		t.Fatalf("fixtures %+v", ts)
	}
	// The demo key sees the same fixtures.
	demo, _ := env.NewKey(a.Account.ID, domain.ModeDemo)
	if got := names(listTemplates(t, env, demo)); got != names(ts) {
		t.Fatalf("demo key lists %s", got)
	}
}

func TestTestModeSendSimulated(t *testing.T) {
	t.Parallel()
	env, a, clock := testModeEnv(t)
	liveContacts := dbInt(t, env, `SELECT count(*) FROM contacts WHERE account_id = $1`, a.Account.ID)

	r := send(env, a.Test, map[string]any{"destination": "15551234567", "template_name": "order_confirmation_update",
		"body_variables": []string{"Ana", "ORD-7781"}, "name": "Ana", "campaign_name": "Test run"})
	var d sendData
	e := mustOK(t, r, &d)
	if e.Message != "Message sent" || d.Mode != "test" || d.Delivery != "simulated" || d.Status != "sent" || d.ContactCreated ||
		d.CampaignID != 1 || d.ConversationID != 1 || d.ContactID != 1 || d.MessageID == 0 ||
		!strings.HasPrefix(d.ChatMessageID, "wamid.test.") || !strings.Contains(d.Note, "join "+a.Account.JoinCode) ||
		!strings.Contains(d.Note, "15550001111") {
		t.Fatalf("simulated send: %s", r.Body)
	}
	// Nothing reached the platform and nothing live was written.
	if n := len(env.Sim.Sent()); n != 0 {
		t.Fatalf("%d platform sends from a test key", n)
	}
	for q, want := range map[string]int64{
		`SELECT count(*) FROM contacts WHERE account_id = $1`:                                        liveContacts,
		`SELECT count(*) FROM messages WHERE account_id = $1`:                                        0,
		`SELECT count(*) FROM campaigns WHERE account_id = $1`:                                       0,
		`SELECT count(*) FROM conversations WHERE account_id = $1`:                                   0,
		`SELECT count(*) FROM test_messages WHERE account_id = $1`:                                   1,
		`SELECT count(*) FROM events WHERE account_id = $1 AND type = 'message.sent' AND test`:       1,
		`SELECT count(*) FROM events WHERE account_id = $1 AND (NOT test OR type <> 'message.sent')`: 0,
	} {
		if got := dbInt(t, env, q, a.Account.ID); got != want {
			t.Fatalf("%s = %d, want %d", q, got, want)
		}
	}
	evs := events(t, env, a.Account.ID, "message.sent")
	if body := string(domain.EventBody(evs[0])); !strings.Contains(body, `"mode":"test"`) || !strings.Contains(body, `"source":"api"`) ||
		!strings.Contains(body, d.ChatMessageID) {
		t.Fatalf("test event body %s", body)
	}
	checkEventBodies(t, env, a.Account.ID)

	// GET ages the status on the server's clock: sent, delivered after 2 s, read after 5 s.
	for _, step := range []struct {
		advance time.Duration
		status  string
		history int
	}{{0, "sent", 1}, {1900 * time.Millisecond, "sent", 1}, {100 * time.Millisecond, "delivered", 2}, {3 * time.Second, "read", 3}, {time.Hour, "read", 3}} {
		clock.Advance(step.advance)
		var m messageData
		r := getMessage(env, a.Test, d.MessageID)
		mustOK(t, r, &m)
		if m.Status != step.status || len(m.History) != step.history || m.MessageID != d.MessageID || m.ChatMessageID != d.ChatMessageID ||
			!isoWithOffset.MatchString(m.SentAt) {
			t.Fatalf("after %v more: %s, want %s", step.advance, r.Body, step.status)
		}
	}
	// The live key does not see test messages.
	mustFail(t, getMessage(env, a.Live, d.MessageID), http.StatusNotFound, "not_found")
	// Another account's test key neither.
	b := env.NewTenant("Beta Inc")
	mustFail(t, getMessage(env, b.Test, d.MessageID), http.StatusNotFound, "not_found")
}

func TestTestModeRefusals(t *testing.T) {
	t.Parallel()
	env, a, _ := testModeEnv(t)
	b := env.NewTenant("Beta Inc") // no number connected: test mode does not need one
	cases := []struct {
		name   string
		key    string
		body   map[string]any
		status int
		code   string
		field  string
	}{
		{"a live template", a.Test, map[string]any{"destination": "15551234567", "template_name": "welcome"}, 404, "template_not_found", ""},
		{"unknown id", a.Test, map[string]any{"destination": "15551234567", "template_id": 99}, 404, "template_not_found", ""},
		{"other language", a.Test, map[string]any{"destination": "15551234567", "template_name": "sandbox_welcome", "language": "pt_BR"}, 404, "template_not_found", ""},
		{"variable count", a.Test, map[string]any{"destination": "15551234567", "template_name": "otp_login_code"}, 422, "validation_failed", "body_variables"},
		{"header variable", a.Test, map[string]any{"destination": "15551234567", "template_name": "sandbox_welcome", "header_variables": []string{"x"}}, 422, "validation_failed", "header_variables"},
		{"no template", a.Test, map[string]any{"destination": "15551234567"}, 422, "validation_failed", "template_name"},
		{"id and name disagree", a.Test, map[string]any{"destination": "15551234567", "template_id": 1, "template_name": "sandbox_welcome"}, 422, "validation_failed", "template_name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := mustFail(t, send(env, tc.key, tc.body), tc.status, tc.code)
			if tc.field != "" && len(e.Errors[tc.field]) == 0 {
				t.Fatalf("errors lack %s: %+v", tc.field, e)
			}
		})
	}
	// Without a connected number a test key still sends (simulated), by name or by id.
	var d sendData
	mustOK(t, send(env, b.Test, map[string]any{"destination": "15551234567", "template_id": 1, "body_variables": []string{"123456"}}), &d)
	if d.Delivery != "simulated" {
		t.Fatalf("%+v", d)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM test_messages WHERE account_id = $1`, a.Account.ID); n != 0 {
		t.Fatalf("refused test sends wrote %d rows", n)
	}
}

// A phone that joined the sandbox in the last 24 hours gets test sends for real, as text
// through the sandbox number, 20 times at most.
func TestTestModeSandboxRealDelivery(t *testing.T) {
	t.Parallel()
	env, a, clock := testModeEnv(t)
	db := env.Store.DB()
	joined := "447700900123"
	if _, err := db.Exec(`INSERT INTO sandbox_participants (account_id, phone, joined_at) VALUES ($1, $2, $3), ($1, '447700900999', $4)`,
		a.Account.ID, joined, clock.Now().Add(-time.Hour), clock.Now().Add(-25*time.Hour)); err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"destination": joined, "template_name": "order_confirmation_update", "body_variables": []string{"Ana", "ORD-7781"}}
	var d sendData
	mustOK(t, send(env, a.Test, body), &d)
	sent := env.Sim.Sent()
	if d.Delivery != "real" || d.Mode != "test" || len(sent) != 1 || d.ChatMessageID != sent[0].Wamid || !strings.Contains(d.Note, "1 of 20") {
		t.Fatalf("real sandbox send: %+v; platform got %+v", d, sent)
	}
	if s := sent[0]; s.PhoneNumberID != "sandbox-pnid" || s.Type != "text" || s.To != "+"+joined ||
		s.TextBody != "Hi Ana, your order ORD-7781 has been updated. We'll keep you posted." {
		t.Fatalf("sandbox text %+v", s)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM test_messages WHERE account_id = $1 AND delivery = 'real'`, a.Account.ID); n != 1 {
		t.Fatalf("%d real test messages", n)
	}
	checkEventBodies(t, env, a.Account.ID)

	// 20 real deliveries per phone, then simulated.
	for i := 2; i <= 20; i++ {
		mustOK(t, send(env, a.Test, body), &d)
		if d.Delivery != "real" {
			t.Fatalf("send %d: %+v", i, d)
		}
	}
	mustOK(t, send(env, a.Test, body), &d)
	if d.Delivery != "simulated" || !strings.Contains(d.Note, "used its 20") || len(env.Sim.Sent()) != 20 {
		t.Fatalf("21st send: %+v", d)
	}
	// A join older than 24 hours: simulated, and the note says to join again.
	mustOK(t, send(env, a.Test, map[string]any{"destination": "447700900999", "template_name": "sandbox_welcome"}), &d)
	if d.Delivery != "simulated" || !strings.Contains(d.Note, "window has ended") {
		t.Fatalf("expired join: %+v", d)
	}
	// Another account's sandbox participant is not this account's.
	b := env.NewTenant("Beta Inc")
	mustOK(t, send(env, b.Test, map[string]any{"destination": joined, "template_name": "sandbox_welcome"}), &d)
	if d.Delivery != "simulated" || !strings.Contains(d.Note, b.Account.JoinCode) {
		t.Fatalf("B's send to A's participant: %+v", d)
	}
}

// A sandbox send the platform refuses is a 502 like a live one.
func TestTestModeSandboxRejected(t *testing.T) {
	t.Parallel()
	env, a, clock := testModeEnv(t)
	if _, err := env.Store.DB().Exec(`INSERT INTO sandbox_participants (account_id, phone, joined_at) VALUES ($1, '447700900123', $2)`,
		a.Account.ID, clock.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	env.Sim.Script("447700900123", simulator.Outcome{FailSync: 131026})
	e := mustFail(t, send(env, a.Test, map[string]any{"destination": "447700900123", "template_name": "sandbox_welcome"}),
		http.StatusBadGateway, "platform_rejected")
	if !strings.Contains(e.Message, "(code 131026)") {
		t.Fatalf("message %q", e.Message)
	}
}
