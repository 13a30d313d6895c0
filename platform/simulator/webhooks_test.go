package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// tiny delays keep the status sequences fast but ordered.
func webhookConfig(rc *receiver) Config {
	return Config{
		WebhookURL:       rc.srv.URL,
		SentDelay:        time.Millisecond,
		DeliveredDelay:   2 * time.Millisecond,
		ReadDelay:        3 * time.Millisecond,
		WebhookRetryBase: time.Millisecond,
	}
}

func sendOK(t *testing.T, h *harness, to string) (wamid, waID string) {
	t.Helper()
	code, out := h.send(templateSend(to, "order_confirmation", "en_US", bodyParams("Ana", "ORD-1")))
	if code != 200 {
		t.Fatalf("HTTP %d %v", code, out)
	}
	return out["messages"].([]any)[0].(map[string]any)["id"].(string), out["contacts"].([]any)[0].(map[string]any)["wa_id"].(string)
}

func TestStatusWebhookSequences(t *testing.T) {
	cases := []struct {
		name    string
		to      string
		outcome Outcome
		want    []string
	}{
		{"normal", "+52 55 1234 5678", Outcome{}, []string{"sent", "delivered", "read"}},
		{"skip delivered", "+15550000001", Outcome{SkipDelivered: true}, []string{"sent", "read"}},
		{"fail async 131026", "+15550000002", Outcome{FailAsync: 131026}, []string{"sent", "failed"}},
		{"fail async 131047", "+15550000003", Outcome{FailAsync: 131047}, []string{"sent", "failed"}},
		{"fail async 131049", "+15550000004", Outcome{FailAsync: 131049}, []string{"sent", "failed"}},
		{"duplicate", "+15550000005", Outcome{Duplicate: true}, []string{"sent", "sent", "delivered", "delivered", "read", "read"}},
		{"reorder", "+15550000006", Outcome{Reorder: true}, []string{"read", "delivered", "sent"}},
		{"reorder skip delivered", "+15550000007", Outcome{Reorder: true, SkipDelivered: true}, []string{"read", "sent"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := newReceiver(t)
			h := newHarness(t, webhookConfig(rc))
			h.sim.Script(tc.to, tc.outcome)
			wamid, waID := sendOK(t, h, tc.to)
			var got []string
			for range tc.want {
				status, id, recipient, w := decodeStatus(t, rc.next())
				if id != wamid || recipient != waID {
					t.Fatalf("status for %s/%s, want %s/%s", id, recipient, wamid, waID)
				}
				st := w.Entry[0].Changes[0].Value.Statuses[0]
				switch status {
				case "failed":
					if len(st.Errors) != 1 || st.Errors[0].Code != tc.outcome.FailAsync || st.Errors[0].Title == "" ||
						st.Errors[0].Message == "" || st.Errors[0].ErrorData.Details == "" || st.Errors[0].Href == "" {
						t.Fatalf("failed status errors: %+v", st.Errors)
					}
				case "sent", "delivered":
					if st.Pricing == nil || st.Pricing.PricingModel != "PMP" || st.Pricing.Category != "utility" || st.Conversation == nil {
						t.Fatalf("%s without pricing/conversation", status)
					}
				}
				got = append(got, status)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("statuses %v, want %v", got, tc.want)
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			if err := h.sim.WaitIdle(ctx); err != nil {
				t.Fatal(err)
			}
			rc.none()
		})
	}
}

func TestStatusTimestampsFollowClock(t *testing.T) {
	rc := newReceiver(t)
	clk := newFakeClock()
	cfg := webhookConfig(rc)
	cfg.Clock = clk.Now
	h := newHarness(t, cfg)
	sendOK(t, h, "+15551234567")
	_, _, _, w := decodeStatus(t, rc.next())
	if ts := w.Entry[0].Changes[0].Value.Statuses[0].Timestamp; ts != "1735689600" {
		t.Fatalf("timestamp %s, want the injected clock", ts)
	}
}

func TestEarlyStatusArrivesBeforeResponse(t *testing.T) {
	rc := newReceiver(t)
	cfg := webhookConfig(rc)
	cfg.SentDelay = time.Hour // without EarlyStatus, sent would come much later
	cfg.DeliveredDelay = time.Hour
	cfg.ReadDelay = time.Hour
	h := newHarness(t, cfg)
	h.sim.Script("15551230000", Outcome{EarlyStatus: true})
	wamid, _ := sendOK(t, h, "+15551230000")
	// The receiver reported the POST before answering it, and the send
	// response was written only after that answer: it must be there already.
	select {
	case d := <-rc.ch:
		if !d.sigOK {
			t.Fatal("bad signature")
		}
		status, id, _, _ := decodeStatus(t, d)
		if status != "sent" || id != wamid {
			t.Fatalf("early status %s for %s", status, id)
		}
	default:
		t.Fatal("the early status was not delivered before the send response")
	}
}

func TestWebhookRetryAfter500(t *testing.T) {
	rc := newReceiver(t)
	cfg := webhookConfig(rc)
	h := newHarness(t, cfg)
	rc.failFor(2)
	wamid, _ := sendOK(t, h, "+15551234567")
	var seq []string
	for range 5 { // sent (500), sent (500), sent, delivered, read
		d := rc.next()
		status, id, _, _ := decodeStatus(t, d)
		if id != wamid {
			t.Fatal("wrong wamid")
		}
		seq = append(seq, status+"/"+http.StatusText(d.status))
	}
	want := []string{"sent/Internal Server Error", "sent/Internal Server Error", "sent/OK", "delivered/OK", "read/OK"}
	if !slices.Equal(seq, want) {
		t.Fatalf("got %v, want %v", seq, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := h.sim.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if st := h.sim.WebhookStats(); st.Attempts != 5 || st.Delivered != 3 || st.Failed != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestWebhookGivesUpAfterLastAttempt(t *testing.T) {
	rc := newReceiver(t)
	cfg := webhookConfig(rc)
	cfg.WebhookAttempts = 3
	h := newHarness(t, cfg)
	h.sim.Script("15551234567", Outcome{SkipDelivered: true})
	rc.failFor(1000)
	sendOK(t, h, "+15551234567")
	for range 6 { // 3 attempts of sent, then 3 of read
		rc.next()
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := h.sim.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	rc.none()
	if st := h.sim.WebhookStats(); st.Attempts != 6 || st.Failed != 2 || st.Delivered != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestRetryDelay(t *testing.T) {
	base := 50 * time.Millisecond
	want := []time.Duration{50, 100, 200, 400, 800}
	for i, w := range want {
		if got := RetryDelay(i+1, base); got != w*time.Millisecond {
			t.Errorf("attempt %d: %v", i+1, got)
		}
	}
	if RetryDelay(0, base) != base {
		t.Error("attempt 0")
	}
}

func TestInboundWebhook(t *testing.T) {
	rc := newReceiver(t)
	clk := newFakeClock()
	cfg := webhookConfig(rc)
	cfg.Clock = clk.Now
	h := newHarness(t, cfg)
	wamid, err := h.sim.InjectInboundMessage(Inbound{PhoneNumberID: testPhoneID, From: "+52 55 1234 5678", Name: "Ana", Type: "text", Payload: map[string]any{"body": "STOP"}})
	if err != nil {
		t.Fatal(err)
	}
	d := rc.next()
	var w struct {
		Object string `json:"object"`
		Entry  []struct {
			ID      string `json:"id"`
			Changes []struct {
				Field string `json:"field"`
				Value struct {
					MessagingProduct string `json:"messaging_product"`
					Metadata         struct {
						DisplayPhoneNumber string `json:"display_phone_number"`
						PhoneNumberID      string `json:"phone_number_id"`
					} `json:"metadata"`
					Contacts []struct {
						Profile struct {
							Name string `json:"name"`
						} `json:"profile"`
						WaID string `json:"wa_id"`
					} `json:"contacts"`
					Messages []map[string]any `json:"messages"`
				} `json:"value"`
			} `json:"changes"`
		} `json:"entry"`
	}
	if err := json.Unmarshal(d.body, &w); err != nil {
		t.Fatal(err)
	}
	ch := w.Entry[0].Changes[0]
	v := ch.Value
	if w.Object != "whatsapp_business_account" || w.Entry[0].ID != testWabaID || ch.Field != "messages" ||
		v.MessagingProduct != "whatsapp" || v.Metadata.PhoneNumberID != testPhoneID || v.Metadata.DisplayPhoneNumber != testDisplay {
		t.Fatalf("envelope: %s", d.body)
	}
	if len(v.Contacts) != 1 || v.Contacts[0].Profile.Name != "Ana" || v.Contacts[0].WaID != "5215512345678" {
		t.Fatalf("contacts: %s", d.body)
	}
	m := v.Messages[0]
	if len(v.Messages) != 1 || m["from"] != "5215512345678" || m["id"] != wamid || m["timestamp"] != "1735689600" || m["type"] != "text" ||
		m["text"].(map[string]any)["body"] != "STOP" || !strings.HasPrefix(wamid, "wamid.") {
		t.Fatalf("message: %s", d.body)
	}

	// Meta escapes non-ASCII and '/', and signs those exact bytes.
	text := "Olá / 👋"
	if _, err := h.sim.InjectInboundMessage(Inbound{PhoneNumberID: testPhoneID, From: "15551234567", Name: "Zoë", Type: "text", Payload: map[string]any{"body": text}}); err != nil {
		t.Fatal(err)
	}
	d = rc.next()
	for _, frag := range []string{`Ol\u00e1 \/ \ud83d\udc4b`, `Zo\u00eb`} {
		if !bytes.Contains(d.body, []byte(frag)) {
			t.Fatalf("body lacks %s: %s", frag, d.body)
		}
	}
	var back struct {
		Entry []struct {
			Changes []struct {
				Value struct {
					Messages []struct {
						Text struct {
							Body string `json:"body"`
						} `json:"text"`
					} `json:"messages"`
				} `json:"value"`
			} `json:"changes"`
		} `json:"entry"`
	}
	if err := json.Unmarshal(d.body, &back); err != nil || back.Entry[0].Changes[0].Value.Messages[0].Text.Body != text {
		t.Fatalf("round trip: %v %+v", err, back)
	}

	// Errors.
	if _, err := h.sim.InjectInboundMessage(Inbound{PhoneNumberID: "nope", From: "15551234567", Name: "x", Type: "text"}); err == nil {
		t.Error("unknown number accepted")
	}
	if code, out, _ := h.do(http.MethodPost, "/_sim/config", "", map[string]any{"webhook_url": ""}); code != http.StatusOK {
		t.Fatalf("config: %d %v", code, out)
	}
	if _, err := h.sim.InjectInboundMessage(Inbound{PhoneNumberID: testPhoneID, From: "15551234567", Name: "x", Type: "text"}); err != ErrNoWebhookURL {
		t.Errorf("no URL: %v", err)
	}
}

func TestTemplateStatusWebhook(t *testing.T) {
	rc := newReceiver(t)
	clk := newFakeClock()
	cfg := webhookConfig(rc)
	cfg.Clock = clk.Now
	h := newHarness(t, cfg)
	if err := h.sim.SetTemplateStatus(testWabaID, "1094411223344001", "PAUSED", ""); err != nil {
		t.Fatal(err)
	}
	d := rc.next()
	dec := json.NewDecoder(bytes.NewReader(d.body))
	dec.UseNumber()
	var w struct {
		Object string `json:"object"`
		Entry  []struct {
			ID      string      `json:"id"`
			Time    json.Number `json:"time"`
			Changes []struct {
				Field string         `json:"field"`
				Value map[string]any `json:"value"`
			} `json:"changes"`
		} `json:"entry"`
	}
	if err := dec.Decode(&w); err != nil {
		t.Fatal(err)
	}
	e := w.Entry[0]
	v := e.Changes[0].Value
	if w.Object != "whatsapp_business_account" || e.ID != testWabaID || e.Time != "1735689600" || e.Changes[0].Field != "message_template_status_update" {
		t.Fatalf("envelope: %s", d.body)
	}
	id, isNumber := v["message_template_id"].(json.Number)
	if !isNumber || id != "1094411223344001" {
		t.Fatalf("message_template_id must be a JSON number: %s", d.body)
	}
	if v["event"] != "PAUSED" || v["message_template_name"] != "order_confirmation" || v["message_template_language"] != "en_US" || v["reason"] != "NONE" {
		t.Fatalf("value: %s", d.body)
	}

	// The stored status changed: sends now fail with 132015, and listing shows it.
	code, out := h.send(templateSend("+15551234567", "order_confirmation", "en_US", bodyParams("a", "b")))
	if c, _, _, _ := graphErr(t, out); code != 400 || c != 132015 {
		t.Fatalf("paused send: HTTP %d code %d", code, c)
	}
	if err := h.sim.SetTemplateStatus(testWabaID, "1094411223344001", "REINSTATED", ""); err != nil {
		t.Fatal(err)
	}
	rc.next()
	if err := h.sim.SetTemplateStatus(testWabaID, "1094411223344008", "REJECTED", "INVALID_FORMAT"); err != nil {
		t.Fatal(err)
	}
	if d := rc.next(); !bytes.Contains(d.body, []byte(`"reason":"INVALID_FORMAT"`)) {
		t.Fatalf("reason: %s", d.body)
	}
	if code, _ := h.send(templateSend("+15551234567", "order_confirmation", "en_US", bodyParams("a", "b"))); code != 200 {
		t.Fatalf("reinstated send: HTTP %d", code)
	}

	if err := h.sim.SetTemplateStatus(testWabaID, "404", "APPROVED", ""); err == nil {
		t.Error("unknown template accepted")
	}
	if err := h.sim.SetTemplateStatus(testWabaID, "1094411223344001", "SLEEPING", ""); err == nil {
		t.Error("unknown status accepted")
	}
}

// TestTemplateStatusGolden pins the exact bytes and signature of a template
// status webhook (run with -update to rewrite).
func TestTemplateStatusGolden(t *testing.T) {
	tpl := DefaultTemplates()[0]
	tpl.Name = "pedido_confirmação/v2" // exercises Meta's escaping
	env, err := templateStatusEnvelope(testWabaID, 1751247548, tpl, "APPROVED", "")
	if err != nil {
		t.Fatal(err)
	}
	body, err := metaJSON(env)
	if err != nil {
		t.Fatal(err)
	}
	sig := Sign(testSecret, body)
	golden := filepath.Join("testdata", "template_status_update.json")
	goldenSig := filepath.Join("testdata", "template_status_update.sig")
	if *update {
		if err := os.WriteFile(golden, append(body, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenSig, []byte(sig+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(body) + "\n"; got != string(want) {
		t.Fatalf("payload changed:\n got %s\nwant %s", got, want)
	}
	wantSig, err := os.ReadFile(goldenSig)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(wantSig)) != sig {
		t.Fatalf("signature %s, want %s", sig, wantSig)
	}
}

func TestVerifyWebhook(t *testing.T) {
	rc := newReceiver(t)
	h := newHarness(t, webhookConfig(rc))
	if c, err := h.sim.VerifyWebhook(context.Background(), "verify-me"); err != nil || c == "" {
		t.Fatalf("good token: %q %v", c, err)
	}
	if _, err := h.sim.VerifyWebhook(context.Background(), "wrong"); err == nil {
		t.Fatal("wrong token passed")
	}
}

func TestCloseIsIdempotentAndStopsSender(t *testing.T) {
	rc := newReceiver(t)
	cfg := webhookConfig(rc)
	cfg.SentDelay, cfg.DeliveredDelay, cfg.ReadDelay = time.Hour, time.Hour, time.Hour
	h := newHarness(t, cfg)
	sendOK(t, h, "+15551234567")
	if err := h.sim.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.sim.Start("127.0.0.1:0"); err == nil {
		t.Fatal("Start after Close")
	}
	if err := h.sim.WaitIdle(context.Background()); err == nil {
		t.Fatal("WaitIdle after Close must fail, not block")
	}
	rc.none()
}

// A send's callback data comes back in its status webhooks, unless the recipient's script
// says NoCallbackData.
func TestNoCallbackDataLeavesItOut(t *testing.T) {
	rc := newReceiver(t)
	h := newHarness(t, webhookConfig(rc))
	h.sim.Script("15551230001", Outcome{NoCallbackData: true})
	for _, c := range []struct {
		to, want string
	}{{"+15551230000", "msg-9"}, {"+15551230001", ""}} {
		body := templateSend(c.to, "order_confirmation", "en_US", bodyParams("Ana", "ORD-7781"))
		body["biz_opaque_callback_data"] = "msg-9"
		if code, out, _ := h.do(http.MethodPost, "/v99.3/"+testPhoneID+"/messages", testToken, body); code != http.StatusOK {
			t.Fatalf("HTTP %d: %v", code, out)
		}
		for range 3 { // sent, delivered, read
			_, _, _, w := decodeStatus(t, rc.next())
			if got := w.Entry[0].Changes[0].Value.Statuses[0].BizOpaqueCallbackData; got != c.want {
				t.Fatalf("%s: callback data %q, want %q", c.to, got, c.want)
			}
		}
	}
}
