package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/platform/whatsapp"
	"gateway/server"
	"gateway/server/domain"
	"gateway/server/servertest"
	"gateway/store"
)

// ---- helpers of the answer tests (POST /v1/messages, POST /v1/messages/{id}/read) ----

// answerData is data of a successful POST /messages.
type answerData struct {
	sendData
	Type            string `json:"type"`
	ClientReference string `json:"client_reference"`
}

func answer(env *servertest.Env, key string, body any, header ...string) *servertest.Response {
	env.T.Helper()
	r := servertest.Request{Method: http.MethodPost, Path: "/v1/messages", Key: key, Body: body}
	if len(header) == 2 {
		r.Header = map[string]string{header[0]: header[1]}
	}
	return env.Do(r)
}

// wrote records a message the customer sent at at (directly in the store, as the platform
// webhook does): it opens their service window until at + 24 h. It returns our message id.
func wrote(t testing.TB, env *servertest.Env, tn servertest.Tenant, from, userID string, at time.Time) int64 {
	t.Helper()
	res, err := env.Store.RecordInbound(context.Background(), tn.Account.ID, store.InboundMessage{
		PlatformMessageID: "wamid.in." + strconv.FormatInt(at.UnixNano(), 36) + from + userID, From: from, UserID: userID,
		ProfileName: "Ana", Type: "text", SentAt: at, Content: json.RawMessage(`{"body":"Is it in blue?"}`)})
	if err != nil {
		t.Fatal(err)
	}
	return res.MessageID
}

// simUpload uploads a small file of that MIME type to the tenant's number on the simulator and
// returns its media id (the simulator accepts only media ids of the business's uploads).
func simUpload(t testing.TB, env *servertest.Env, tn servertest.Tenant, name, mime string) string {
	t.Helper()
	conn, _, err := env.Store.SendTarget(context.Background(), tn.Account.ID, 0, "", "")
	if err != nil {
		t.Fatal(err)
	}
	id, err := whatsapp.NewClient(env.SimURL+"/v23.0", nil).UploadMedia(context.Background(), conn.AccessToken, conn.PhoneNumberID,
		name, mime, strings.NewReader("RIFF....WEBPVP8 fixture bytes"))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// lastSent is the last message the simulator accepted.
func lastSent(t testing.TB, env *servertest.Env) simulator.SentMessage {
	t.Helper()
	sent := env.Sim.Sent()
	if len(sent) == 0 {
		t.Fatal("nothing reached the simulator")
	}
	return sent[len(sent)-1]
}

func jsonEqual(t testing.TB, got []byte, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}

// Every kind of answer reaches the platform with the platform's wire body, quoting a message
// when asked; the response, the message row and message.sent carry its type.
func TestAnswerEveryKindReachesThePlatform(t *testing.T) {
	t.Parallel()
	env, tn := sendEnv(t, servertest.Config{})
	in := wrote(t, env, tn, "15551234567", "", time.Now().Add(-time.Hour))
	image, audio, sticker := simUpload(t, env, tn, "blue.jpg", "image/jpeg"), simUpload(t, env, tn, "note.ogg", "audio/ogg"),
		simUpload(t, env, tn, "hi.webp", "image/webp")
	inWamid := ""
	if err := env.Store.DB().Get(&inWamid, `SELECT platform_message_id FROM messages WHERE account_id = $1 AND id = $2`, tn.Account.ID, in); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		body map[string]any
		wire string // the object under the type, as the platform receives it
	}{
		{"text with preview", map[string]any{"type": "text", "text": map[string]any{"body": "Yes: https://example.com/p/42", "preview_url": true}},
			`{"body":"Yes: https://example.com/p/42","preview_url":true}`},
		{"image by id", map[string]any{"type": "image", "image": map[string]any{"id": image, "caption": "The blue one"}},
			`{"id":"` + image + `","caption":"The blue one"}`},
		{"video by link", map[string]any{"type": "video", "video": map[string]any{"link": "https://cdn.example.com/v.mp4"}},
			`{"link":"https://cdn.example.com/v.mp4"}`},
		{"audio", map[string]any{"type": "audio", "audio": map[string]any{"id": audio}}, `{"id":"` + audio + `"}`},
		{"document", map[string]any{"type": "document", "document": map[string]any{"link": "https://cdn.example.com/i.pdf", "caption": "Invoice", "filename": "i-42.pdf"}},
			`{"link":"https://cdn.example.com/i.pdf","caption":"Invoice","filename":"i-42.pdf"}`},
		{"sticker", map[string]any{"type": "sticker", "sticker": map[string]any{"id": sticker}}, `{"id":"` + sticker + `"}`},
		{"location", map[string]any{"type": "location", "location": map[string]any{"latitude": -23.5614, "longitude": -46.6559, "name": "Acme Paulista"}},
			`{"latitude":-23.5614,"longitude":-46.6559,"name":"Acme Paulista"}`},
		{"contacts", map[string]any{"type": "contacts", "contacts": []any{map[string]any{"name": map[string]any{"formatted_name": "Support desk"},
			"phones": []any{map[string]any{"phone": "+1 555 078 3881", "type": "WORK"}}}}},
			`[{"name":{"formatted_name":"Support desk"},"phones":[{"phone":"+1 555 078 3881","type":"WORK"}]}]`},
		{"reaction", map[string]any{"type": "reaction", "reaction": map[string]any{"message_id": in, "emoji": "👍"}},
			`{"message_id":"` + inWamid + `","emoji":"👍"}`},
		{"buttons", map[string]any{"type": "interactive", "interactive": map[string]any{"type": "button", "body": "Tomorrow 9-12?",
			"buttons": []any{map[string]any{"id": "yes", "title": "Yes"}, map[string]any{"id": "no", "title": "No"}}}},
			`{"type":"button","body":{"text":"Tomorrow 9-12?"},"action":{"buttons":[{"type":"reply","reply":{"id":"yes","title":"Yes"}},{"type":"reply","reply":{"id":"no","title":"No"}}]}}`},
		{"list", map[string]any{"type": "interactive", "interactive": map[string]any{"type": "list", "body": "Pick a slot", "button": "Slots", "footer": "Local time",
			"sections": []any{map[string]any{"title": "Tomorrow", "rows": []any{map[string]any{"id": "t-0930", "title": "09:30", "description": "Morning"}}}}}},
			`{"type":"list","body":{"text":"Pick a slot"},"footer":{"text":"Local time"},"action":{"button":"Slots","sections":[{"title":"Tomorrow","rows":[{"id":"t-0930","title":"09:30","description":"Morning"}]}]}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.body
			body["destination"] = "15551234567"
			body["reply_to"] = in
			body["client_reference"] = "ticket-" + tt.name
			var d answerData
			mustOK(t, answer(env, tn.Live, body), &d)
			if d.Type != body["type"] || d.Status != "sent" || d.MessageID == 0 || d.ChatMessageID == "" || d.ContactCreated || d.ClientReference != "ticket-"+tt.name {
				t.Fatalf("result %+v", d)
			}
			sm := lastSent(t, env)
			if sm.Type != body["type"] || sm.To != "+15551234567" || sm.ReplyTo != inWamid || sm.Wamid != d.ChatMessageID ||
				sm.BizOpaqueCallbackData != strconv.FormatInt(d.MessageID, 10) {
				t.Fatalf("simulator got %+v", sm)
			}
			if !jsonEqual(t, sm.Content, tt.wire) {
				t.Fatalf("wire %s, want %s", sm.Content, tt.wire)
			}
			if n := dbInt(t, env, `SELECT count(*) FROM messages WHERE account_id = $1 AND id = $2 AND type = $3 AND status = 'sent' AND direction = 'out'`,
				tn.Account.ID, d.MessageID, body["type"]); n != 1 {
				t.Fatalf("message row: %d", n)
			}
			if n := dbInt(t, env, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'message.sent'
				AND data->>'message_id' = $2 AND data->>'type' = $3 AND data->>'client_reference' = $4`,
				tn.Account.ID, strconv.FormatInt(d.MessageID, 10), body["type"], "ticket-"+tt.name); n != 1 {
				t.Fatalf("message.sent events with the type: %d", n)
			}
		})
	}
}

// Outside the window the answer is a 409 window_closed saying when it closed, and nothing is
// written or sent; for a number that never wrote there is no window_closed_at, and no contact
// is created.
func TestAnswerWindowClosed(t *testing.T) {
	t.Parallel()
	env, tn := sendEnv(t, servertest.Config{})
	at := time.Now().Add(-25 * time.Hour).Truncate(time.Second)
	wrote(t, env, tn, "15551234567", "", at)
	before := len(env.Sim.Sent())
	r := answer(env, tn.Live, map[string]any{"destination": "15551234567", "type": "text", "text": map[string]any{"body": "Still there?"}})
	mustFail(t, r, http.StatusConflict, "window_closed")
	var e struct {
		WindowClosedAt time.Time `json:"window_closed_at"`
		Message        string    `json:"message"`
	}
	r.JSON(t, &e)
	if !e.WindowClosedAt.Equal(at.Add(24*time.Hour)) || !strings.Contains(e.Message, "template") {
		t.Fatalf("closed at %v, want %v: %s", e.WindowClosedAt, at.Add(24*time.Hour), r.Body)
	}

	r = answer(env, tn.Live, map[string]any{"destination": "447700900123", "type": "text", "text": map[string]any{"body": "Hello"}})
	mustFail(t, r, http.StatusConflict, "window_closed")
	if strings.Contains(string(r.Body), "window_closed_at") {
		t.Fatalf("a number that never wrote has a closing time: %s", r.Body)
	}
	if n := len(env.Sim.Sent()) - before; n != 0 {
		t.Fatalf("%d messages reached the platform", n)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM messages WHERE account_id = $1 AND direction = 'out'`, tn.Account.ID); n != 0 {
		t.Fatalf("%d messages recorded", n)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM contacts WHERE account_id = $1 AND mobile = '447700900123'`, tn.Account.ID); n != 0 {
		t.Fatal("a refused answer created a contact")
	}
}

// The window follows the server's clock: open at 23 h 59 min, closed at 24 h.
func TestAnswerWindowFollowsTheClock(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	env, tn := sendEnv(t, servertest.Config{Clock: clock.Now})
	wrote(t, env, tn, "15551234567", "", clock.Now())
	body := map[string]any{"destination": "15551234567", "type": "text", "text": map[string]any{"body": "Your order shipped"}}
	clock.Advance(24*time.Hour - time.Minute)
	mustOK(t, answer(env, tn.Live, body), nil)
	clock.Advance(time.Minute)
	mustFail(t, answer(env, tn.Live, body), http.StatusConflict, "window_closed")
}

// The platform's 131047 (its window is closed though ours is open) is the same 409, never a
// 502; the message is recorded failed with the platform's code.
func TestAnswerPlatformOutsideWindow(t *testing.T) {
	t.Parallel()
	env, tn := sendEnv(t, servertest.Config{Simulator: &simulator.Config{SentDelay: time.Hour, DeliveredDelay: time.Hour,
		ReadDelay: time.Hour, EnforceServiceWindow: true, ServiceWindowSync: true}})
	wrote(t, env, tn, "15551234567", "", time.Now().Add(-time.Hour)) // the simulator never saw it: its window is closed
	r := answer(env, tn.Live, map[string]any{"destination": "15551234567", "type": "text", "text": map[string]any{"body": "Hi"}})
	e := mustFail(t, r, http.StatusConflict, "window_closed")
	if !strings.Contains(e.Message, "template") {
		t.Fatalf("message %q", e.Message)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM messages WHERE account_id = $1 AND direction = 'out' AND status = 'failed' AND error_code = 131047`,
		tn.Account.ID); n != 1 {
		t.Fatalf("%d failed messages with 131047", n)
	}
}

// A customer known only by a user id (a username) is answered by user id: the platform gets
// it as the recipient, never as a number.
func TestAnswerToUserID(t *testing.T) {
	t.Parallel()
	env, tn := sendEnv(t, servertest.Config{})
	wrote(t, env, tn, "", "US.13491208655302741918", time.Now().Add(-time.Hour))
	var d answerData
	mustOK(t, answer(env, tn.Live, map[string]any{"user_id": "US.13491208655302741918", "type": "text", "text": map[string]any{"body": "Hi Ana"}}), &d)
	sm := lastSent(t, env)
	if sm.Recipient != "US.13491208655302741918" || sm.To != "" || sm.TextBody != "Hi Ana" {
		t.Fatalf("simulator got %+v", sm)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'message.sent' AND data->>'user_id' = 'US.13491208655302741918'
		AND data->>'destination' = 'US.13491208655302741918'`, tn.Account.ID); n != 1 {
		t.Fatalf("message.sent with the user id: %d", n)
	}
	// A user id that never wrote is a 409 like a number.
	mustFail(t, answer(env, tn.Live, map[string]any{"user_id": "US.999", "type": "text", "text": map[string]any{"body": "Hi"}}),
		http.StatusConflict, "window_closed")
	// A user id is never read as a number: a malformed one is a 422 on user_id.
	r := answer(env, tn.Live, map[string]any{"user_id": "15551234567", "type": "text", "text": map[string]any{"body": "Hi"}})
	if e := mustFail(t, r, http.StatusUnprocessableEntity, "validation_failed"); e.Errors["user_id"] == nil {
		t.Fatalf("%s", r.Body)
	}
}

// The same Idempotency-Key replays the answer; the platform gets it once.
func TestAnswerIdempotentRetry(t *testing.T) {
	t.Parallel()
	env, tn := sendEnv(t, servertest.Config{})
	wrote(t, env, tn, "15551234567", "", time.Now().Add(-time.Hour))
	body := map[string]any{"destination": "15551234567", "type": "text", "text": map[string]any{"body": "Once"}}
	before := len(env.Sim.Sent())
	first := answer(env, tn.Live, body, "Idempotency-Key", "answer-1")
	mustOK(t, first, nil)
	again := answer(env, tn.Live, body, "Idempotency-Key", "answer-1")
	mustOK(t, again, nil)
	if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
		t.Fatalf("retry: %s %s", again.Header, again.Body)
	}
	if n := len(env.Sim.Sent()) - before; n != 1 {
		t.Fatalf("%d sends reached the platform", n)
	}
	// The key with another body is a 422.
	other := answer(env, tn.Live, map[string]any{"destination": "15551234567", "type": "text", "text": map[string]any{"body": "Twice"}},
		"Idempotency-Key", "answer-1")
	mustFail(t, other, http.StatusUnprocessableEntity, "idempotency_conflict")
}

// A contact who opted out is refused as for templates, even inside the window.
func TestAnswerBlockedContact(t *testing.T) {
	t.Parallel()
	env, tn := sendEnv(t, servertest.Config{})
	wrote(t, env, tn, "15551234567", "", time.Now().Add(-time.Hour))
	if _, err := env.Store.SetContactBlocked(context.Background(), tn.Account.ID, "15551234567", true); err != nil {
		t.Fatal(err)
	}
	mustFail(t, answer(env, tn.Live, map[string]any{"destination": "15551234567", "type": "text", "text": map[string]any{"body": "Hi"}}),
		http.StatusConflict, "contact_blocked")
}

// What the schema cannot say is refused with the field's path, before anything is written.
func TestAnswerRefusals(t *testing.T) {
	t.Parallel()
	env, tn := sendEnv(t, servertest.Config{})
	wrote(t, env, tn, "15551234567", "", time.Now().Add(-time.Hour))
	other := env.NewTenant("Other Ltd")
	env.ConnectNumber(other)
	theirs := wrote(t, env, other, "15551234567", "", time.Now().Add(-time.Hour))
	text := map[string]any{"body": "Hi"}
	for _, tt := range []struct {
		name string
		body map[string]any
		path string
	}{
		{"no recipient", map[string]any{"type": "text", "text": text}, "destination"},
		{"two recipients", map[string]any{"destination": "15551234567", "user_id": "US.1", "type": "text", "text": text}, "user_id"},
		{"no object of the type", map[string]any{"destination": "15551234567", "type": "image"}, "image"},
		{"another kind's object", map[string]any{"destination": "15551234567", "type": "text", "text": text, "location": map[string]any{"latitude": 1, "longitude": 2}}, "location"},
		{"media with id and link", map[string]any{"destination": "15551234567", "type": "image", "image": map[string]any{"id": "1", "link": "https://x.example/a.jpg"}}, "image.link"},
		{"caption on audio", map[string]any{"destination": "15551234567", "type": "audio", "audio": map[string]any{"id": "1", "caption": "x"}}, "audio.caption"},
		{"four buttons", map[string]any{"destination": "15551234567", "type": "interactive", "interactive": map[string]any{"type": "button", "body": "b",
			"buttons": []any{map[string]any{"id": "a", "title": "A"}, map[string]any{"id": "b", "title": "B"}, map[string]any{"id": "c", "title": "C"}, map[string]any{"id": "d", "title": "D"}}}}, "interactive.buttons"},
		{"quoting another account's message", map[string]any{"destination": "15551234567", "type": "text", "text": text, "reply_to": theirs}, "reply_to"},
		{"reacting to no message", map[string]any{"destination": "15551234567", "type": "reaction", "reaction": map[string]any{"message_id": 999999999}}, "reaction.message_id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := answer(env, tn.Live, tt.body)
			e := mustFail(t, r, http.StatusUnprocessableEntity, "validation_failed")
			if e.Errors[tt.path] == nil {
				t.Fatalf("no reason at %s: %s", tt.path, r.Body)
			}
		})
	}
	if n := dbInt(t, env, `SELECT count(*) FROM messages WHERE account_id = $1 AND direction = 'out'`, tn.Account.ID); n != 0 {
		t.Fatalf("%d messages recorded", n)
	}
}

// Without a connected number an answer is a 409; an answer the platform refuses for another
// reason is a 502 platform_rejected.
func TestAnswerNotConnectedAndPlatformRefusal(t *testing.T) {
	t.Parallel()
	env, tn := sendEnv(t, servertest.Config{})
	lone := env.NewTenant("Lone Ltd")
	body := map[string]any{"destination": "15551234567", "type": "text", "text": map[string]any{"body": "Hi"}}
	mustFail(t, answer(env, lone.Live, body), http.StatusConflict, "number_not_connected")

	wrote(t, env, tn, "15551234567", "", time.Now().Add(-time.Hour))
	env.Sim.Script("15551234567", simulator.Outcome{FailSync: 131026})
	e := mustFail(t, answer(env, tn.Live, body), http.StatusBadGateway, "platform_rejected")
	if !strings.Contains(e.Message, "131026") {
		t.Fatalf("message %q", e.Message)
	}
}

// A test key's answer is simulated (test mode keeps no window) and reaches nothing.
func TestAnswerTestMode(t *testing.T) {
	t.Parallel()
	env, tn := sendEnv(t, servertest.Config{})
	before := len(env.Sim.Sent())
	var d answerData
	mustOK(t, answer(env, tn.Test, map[string]any{"destination": "15551234567", "type": "image", "image": map[string]any{"link": "https://cdn.example.com/a.jpg"},
		"client_reference": "t-1"}), &d)
	if d.Mode != "test" || d.Delivery != "simulated" || d.Type != "image" || d.ClientReference != "t-1" || !strings.Contains(d.Note, "Simulated") {
		t.Fatalf("%+v", d)
	}
	if n := len(env.Sim.Sent()) - before; n != 0 {
		t.Fatalf("%d messages reached the platform", n)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'message.sent' AND test AND data->>'type' = 'image'`,
		tn.Account.ID); n != 1 {
		t.Fatalf("test message.sent: %d", n)
	}
}

// A demo key's answers share the demo's send limit.
func TestAnswerDemoLimit(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Demo Co")
	demo, _ := env.NewKey(a.Account.ID, domain.ModeDemo)
	body := map[string]any{"destination": "15551234567", "type": "text", "text": map[string]any{"body": "Hi"}}
	var last *servertest.Response
	for range 11 {
		last = answer(env, demo, body)
	}
	mustFail(t, last, http.StatusTooManyRequests, "rate_limited")
}

// No key is a 401 on both operations, and a body over 1 MiB a 413.
func TestAnswerUnauthorizedAndTooLarge(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	mustFail(t, answer(env, "", map[string]any{"destination": "15551234567", "type": "text", "text": map[string]any{"body": "Hi"}}),
		http.StatusUnauthorized, "unauthorized")
	mustFail(t, env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/messages/1/read"}), http.StatusUnauthorized, "unauthorized")
	big := `{"destination":"15551234567","type":"text","text":{"body":"` + strings.Repeat("x", 1<<20) + `"}}`
	mustFail(t, answer(env, a.Live, big), http.StatusRequestEntityTooLarge, "payload_too_large")
}

// failingReads makes MarkRead fail as the platform would.
type failingReads struct {
	server.Platform
	err atomic.Pointer[error]
}

func (f *failingReads) MarkRead(ctx context.Context, token, phoneNumberID, messageID string, typing bool) error {
	if e := f.err.Load(); e != nil {
		return *e
	}
	return f.Platform.MarkRead(ctx, token, phoneNumberID, messageID, typing)
}

// A received message is marked read on the platform; a sent one is a 422, another account's a
// 404, and a platform refusal a 502.
func TestMarkMessageRead(t *testing.T) {
	t.Parallel()
	fr := &failingReads{}
	env, tn := sendEnv(t, servertest.Config{WrapPlatform: func(p server.Platform) server.Platform { fr.Platform = p; return fr }})
	in := wrote(t, env, tn, "15551234567", "", time.Now().Add(-time.Hour))
	read := func(key string, id int64) *servertest.Response {
		return env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/messages/" + strconv.FormatInt(id, 10) + "/read", Key: key})
	}
	var d struct {
		MessageID     int64  `json:"message_id"`
		ChatMessageID string `json:"chat_message_id"`
	}
	mustOK(t, read(tn.Live, in), &d)
	if d.MessageID != in || !strings.HasPrefix(d.ChatMessageID, "wamid.in.") {
		t.Fatalf("%+v", d)
	}
	if marked := env.Sim.MarkedRead(); len(marked) != 1 || marked[0] != d.ChatMessageID {
		t.Fatalf("the platform marked %v read", marked)
	}
	var sentAnswer answerData
	mustOK(t, answer(env, tn.Live, map[string]any{"destination": "15551234567", "type": "text", "text": map[string]any{"body": "Hi"}}), &sentAnswer)
	r := read(tn.Live, sentAnswer.MessageID)
	if e := mustFail(t, r, http.StatusUnprocessableEntity, "validation_failed"); e.Errors["path.id"] == nil {
		t.Fatalf("%s", r.Body)
	}
	other := env.NewTenant("Other Ltd")
	mustFail(t, read(other.Live, in), http.StatusNotFound, "not_found")
	mustFail(t, read(tn.Test, in), http.StatusNotFound, "not_found")

	// A message of an account without a number: nothing to mark it read with.
	lone := wrote(t, env, other, "15551234567", "", time.Now().Add(-time.Hour))
	mustFail(t, read(other.Live, lone), http.StatusConflict, "number_not_connected")

	refused := error(&whatsapp.Error{HTTPStatus: 400, Code: 100, Message: "(#100) Invalid parameter"})
	fr.err.Store(&refused)
	mustFail(t, read(tn.Live, in), http.StatusBadGateway, "platform_rejected")
	down := errors.New("connection refused")
	fr.err.Store(&down)
	mustFail(t, read(tn.Live, in), http.StatusBadGateway, "platform_unavailable")
}

// Concurrent answers to different customers share the send statement (group commit) and each
// gets its own message.
func TestAnswersAtOnce(t *testing.T) {
	t.Parallel()
	env, tn := sendEnv(t, servertest.Config{})
	var reqs []servertest.Request
	for i := range 24 {
		to := "1666000" + strconv.Itoa(1000+i)
		wrote(t, env, tn, to, "", time.Now().Add(-time.Hour))
		reqs = append(reqs, servertest.Request{Method: http.MethodPost, Path: "/v1/messages", Key: tn.Live,
			Body: map[string]any{"destination": to, "type": "text", "text": map[string]any{"body": "Hi " + to}}})
	}
	seen := map[int64]bool{}
	for i, r := range env.DoAtOnce(reqs) {
		var d answerData
		mustOK(t, r, &d)
		if seen[d.MessageID] {
			t.Fatalf("answer %d shares message %d", i, d.MessageID)
		}
		seen[d.MessageID] = true
	}
}
