package server_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gateway/platform/whatsapp"
	"gateway/server/domain"
	"gateway/server/servertest"
	"gateway/store"
)

// The fuzz targets send arbitrary bodies through the whole stack (the validation middleware,
// the handlers, PostgreSQL) and require that nothing answers 5xx or panics (a recovered panic
// is a 500), and that every answer matches openapi.yaml. Their seed corpora are under
// testdata/fuzz/; `make fuzz` runs each for a bounded time.

// fuzzLogger discards the server's logs: the default test logger writes through the F, which
// the fuzzing engine forbids inside the target.
var fuzzLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// fuzzPost sends body and fails on a transport error, a 5xx or a contract violation.
func fuzzPost(t *testing.T, env *servertest.Env, r servertest.Request) *servertest.Response {
	resp, err := env.DoConcurrent(r)
	if resp == nil {
		t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	if resp.Status >= 500 {
		t.Fatalf("%s %s %q → %d %s", r.Method, r.Path, r.Body, resp.Status, resp.Body)
	}
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func FuzzContactsBody(f *testing.F) {
	for _, s := range []string{
		`{"mobile":"+55 (11) 98765-4321","firstname":"Ana","lastname":"Souza","note":"VIP"}`,
		`{"mobile":"15551234567","lastname":"\u0000"}`,
		`{"mobile":"15551234567","mobile":"15551234568"}`,
	} {
		f.Add([]byte(s))
	}
	env := servertest.New(f, servertest.Config{Logger: fuzzLogger})
	a := env.NewTenant("Fuzz Ltd")
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzPost(t, env, servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: a.Live, Body: body})
	})
}

func FuzzSendTemplateBody(f *testing.F) {
	for _, s := range []string{
		`{"destination":"15551234567","template_name":"order_confirmation","body_variables":["Ana","ORD-7781"]}`,
		`{"destination":"15551234567","template_name":"order_confirmation","body_variables":["Ana","\u0000"],"campaign_name":"x"}`,
		`{"destination":"15551234567","template_id":1,"name":"Ana","header_variables":[]}`,
	} {
		f.Add([]byte(s))
	}
	env, tn := sendEnv(f, servertest.Config{Logger: fuzzLogger})
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzPost(t, env, servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Key: tn.Live, Body: body})
	})
}

// FuzzPlatformWebhookBody signs whatever it is given: the body is stored and applied item by
// item, and a poison item is a dead letter, so the answer is never a 5xx (the raw body can
// always be stored here).
func FuzzPlatformWebhookBody(f *testing.F) {
	env := servertest.New(f, servertest.Config{Logger: fuzzLogger})
	tn := pwNewTenant(f, env, "Fuzz Ltd")
	pwSeedMessage(f, env, tn, "wamid.F1", "sent")
	f.Add(pwStatuses(f, tn.Conn, pwStatus("wamid.F1", "delivered", 1767268800)))
	f.Add(pwStatuses(f, tn.Conn, pwStatus("wamid.F1", "read", 99999999999999)))
	f.Add(pwInbound(f, tn.Conn.PhoneNumberID, "15550000001", "Bad\x00Name", "wamid.I1", "text", map[string]any{"body": "hi\x00"}))
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzPost(t, env, servertest.Request{Method: http.MethodPost, Path: "/platform/webhook", Body: body,
			Header: map[string]string{whatsapp.SignatureHeaderName: pwSign(body)}})
	})
}

// FuzzInboundMessage sends one inbound message of any shape (seeded with every kind of the
// platform package's fixtures) from a sender given as a contacts entry, in a well-formed,
// signed delivery to a connected number: the answer is never a 5xx, and every event the
// message produces is valid against its schema in openapi.yaml (what cannot be recorded is a
// dead letter, never an event a receiver could not parse).
func FuzzInboundMessage(f *testing.F) {
	env := servertest.New(f, servertest.Config{Logger: fuzzLogger})
	tn := pwNewTenant(f, env, "Fuzz Inbound")
	pwSeedMessage(f, env, tn, "wamid.F1", "delivered")
	files, err := filepath.Glob(filepath.Join("..", "platform", "whatsapp", "testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		var p struct {
			Entry []struct {
				Changes []struct {
					Value struct {
						Contacts []json.RawMessage `json:"contacts"`
						Messages []json.RawMessage `json:"messages"`
					} `json:"value"`
				} `json:"changes"`
			} `json:"entry"`
		}
		if json.Unmarshal(b, &p) != nil {
			continue
		}
		for _, e := range p.Entry {
			for _, ch := range e.Changes {
				for i, m := range ch.Value.Messages {
					contact := []byte(`{}`)
					if i < len(ch.Value.Contacts) {
						contact = ch.Value.Contacts[i]
					}
					f.Add([]byte(m), []byte(contact))
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, message, contact []byte) {
		if !json.Valid(message) || !json.Valid(contact) {
			return // the envelope's own parsing is FuzzPlatformWebhookBody's
		}
		body := []byte(`{"object":"whatsapp_business_account","entry":[{"id":"waba","changes":[{"field":"messages","value":` +
			`{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"` +
			tn.Conn.PhoneNumberID + `"},"contacts":[` + string(contact) + `],"messages":[` + string(message) + `]}}]}]}`)
		since := time.Now().Add(-time.Second)
		fuzzPost(t, env, servertest.Request{Method: http.MethodPost, Path: "/platform/webhook", Body: body,
			Header: map[string]string{whatsapp.SignatureHeaderName: pwSign(body)}})
		var evs []store.Event
		if err := env.Store.DB().Select(&evs, `SELECT id, account_id, type, test, data, created_at FROM events
			WHERE account_id = $1 AND created_at >= $2`, tn.Account.ID, since); err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if err := servertest.ValidateSchema(env.Spec, "WebhookEvent", domain.EventBody(e)); err != nil {
				t.Fatalf("event %s does not match its schema: %v\n%s", e.Type, err, e.Data)
			}
		}
	})
}

// FuzzSendMessageBody sends arbitrary answers (POST /v1/messages) to a customer whose service
// window is open, so that what passes our checks reaches the platform (the simulator). A 502
// platform_rejected is the platform refusing what it was sent (a media id it does not know, its
// pair rate limit) and is allowed; any other 5xx is not: a rule of the platform that our checks
// miss makes our own client refuse the call, which answers 500.
func FuzzSendMessageBody(f *testing.F) {
	for _, s := range []string{
		`{"destination":"15551234567","type":"text","text":{"body":"Yes, in blue","preview_url":true},"reply_to":1}`,
		`{"destination":"15551234567","type":"image","image":{"link":"https://cdn.example.com/a.jpg","caption":"A"}}`,
		`{"user_id":"US.1349120865","type":"location","location":{"latitude":-23.5,"longitude":-46.6,"name":"Shop"}}`,
		`{"destination":"15551234567","type":"contacts","contacts":[{"name":{"formatted_name":" "},"phones":[{"phone":"+1"}]}]}`,
		`{"destination":"15551234567","type":"reaction","reaction":{"message_id":1,"emoji":""}}`,
		`{"destination":"15551234567","type":"interactive","interactive":{"type":"button","body":"b","header":" ","buttons":[{"id":" ","title":"A"}]}}`,
		`{"destination":"15551234567","type":"interactive","interactive":{"type":"list","body":"b","button":"L","sections":[{"title":" ","rows":[{"id":"a","title":"A"}]}]}}`,
		`{"destination":"15551234567","type":"document","document":{"id":"1","filename":"a.pdf","caption":"\u0000"}}`,
	} {
		f.Add([]byte(s))
	}
	env, tn := sendEnv(f, servertest.Config{Logger: fuzzLogger})
	wrote(f, env, tn, "15551234567", "US.1349120865", time.Now())
	f.Fuzz(func(t *testing.T, body []byte) {
		r := servertest.Request{Method: http.MethodPost, Path: "/v1/messages", Key: tn.Live, Body: body}
		resp, err := env.DoConcurrent(r)
		if resp == nil {
			t.Fatalf("%s %s: %v", r.Method, r.Path, err)
		}
		if resp.Status >= 500 && !(resp.Status == http.StatusBadGateway && resp.Code(t) == "platform_rejected") {
			t.Fatalf("%s %s %q → %d %s", r.Method, r.Path, r.Body, resp.Status, resp.Body)
		}
		if err != nil {
			t.Fatal(err)
		}
	})
}
