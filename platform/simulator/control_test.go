package simulator

import (
	"net/http"
	"testing"
	"time"
)

func TestControlAPI(t *testing.T) {
	rc := newReceiver(t)
	sim := New(Config{AppSecret: testSecret, WebhookRetryBase: time.Millisecond})
	t.Cleanup(func() { _ = sim.Close() })
	base, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, sim: sim, base: base}
	must := func(method, path string, body any, want int) map[string]any {
		t.Helper()
		code, out, _ := h.do(method, path, "", body)
		if code != want {
			t.Fatalf("%s %s: HTTP %d, want %d: %v", method, path, code, want, out)
		}
		return out
	}

	must(http.MethodPost, "/_sim/numbers", Number{PhoneNumberID: testPhoneID, WabaID: testWabaID, DisplayPhoneNumber: testDisplay, AccessToken: testToken}, 200)
	must(http.MethodPost, "/_sim/numbers", map[string]any{"phone_number_id": "x"}, 400)
	out := must(http.MethodGet, "/_sim/numbers", nil, 200)
	if n := len(out["numbers"].([]any)); n != 1 {
		t.Fatalf("numbers: %v", out)
	}
	out = must(http.MethodPost, "/_sim/templates", map[string]any{"waba_id": testWabaID, "defaults": true, "templates": []any{
		map[string]any{"name": "extra", "language": "en_US", "status": "APPROVED", "category": "UTILITY",
			"components": []any{map[string]any{"type": "BODY", "text": "Hi {{1}}"}}},
	}}, 200)
	if n := len(out["data"].([]any)); n != len(DefaultTemplates())+1 {
		t.Fatalf("templates: %d", n)
	}
	must(http.MethodPost, "/_sim/config", map[string]any{"webhook_url": rc.srv.URL, "sent_delay_ms": 0, "delivered_delay_ms": 1, "read_delay_ms": 2, "rate_per_second": 0}, 200)
	out = must(http.MethodGet, "/_sim/config", nil, 200)
	if out["webhook_url"] != rc.srv.URL || out["read_delay_ms"] != float64(2) {
		t.Fatalf("config: %v", out)
	}
	must(http.MethodPost, "/_sim/script", map[string]any{"recipient": "+1 555 123 4567", "fail_async": 131026}, 200)

	if code, out := h.send(templateSend("+15551234567", "extra", "en_US", bodyParams("Ana"))); code != 200 {
		t.Fatalf("send: %d %v", code, out)
	}
	for _, want := range []string{"sent", "failed"} {
		if status, _, _, _ := decodeStatus(t, rc.next()); status != want {
			t.Fatalf("status %s, want %s", status, want)
		}
	}
	out = must(http.MethodGet, "/_sim/sent", nil, 200)
	sent := out["data"].([]any)
	if len(sent) != 1 || sent[0].(map[string]any)["template_name"] != "extra" {
		t.Fatalf("sent: %v", out)
	}

	out = must(http.MethodPost, "/_sim/inbound", map[string]any{"phone_number_id": testPhoneID, "from": "15551234567", "name": "Ana", "type": "text", "payload": map[string]any{"body": "hi"}}, 200)
	if out["wamid"] == "" {
		t.Fatal("no wamid")
	}
	rc.next()
	must(http.MethodPost, "/_sim/inbound", map[string]any{"phone_number_id": "nope", "from": "1555", "type": "text"}, 404)

	must(http.MethodPost, "/_sim/template-status", map[string]any{"waba_id": testWabaID, "template_id": "1094411223344002", "status": "DISABLED", "reason": ""}, 200)
	rc.next()
	must(http.MethodPost, "/_sim/template-status", map[string]any{"waba_id": testWabaID, "template_id": "1", "status": "DISABLED"}, 404)

	out = must(http.MethodPost, "/_sim/wait-idle", map[string]any{"timeout_ms": 5000}, 200)
	if out["pending"] != float64(0) {
		t.Fatalf("wait-idle: %v", out)
	}
	must(http.MethodGet, "/_sim/webhooks", nil, 200)
	must(http.MethodPost, "/_sim/verify-webhook", map[string]any{"verify_token": "verify-me"}, 200)
	must(http.MethodPost, "/_sim/verify-webhook", map[string]any{"verify_token": "nope"}, 502)

	must(http.MethodPost, "/_sim/reset", nil, 200)
	if out := must(http.MethodGet, "/_sim/sent", nil, 200); len(out["data"].([]any)) != 0 {
		t.Fatal("reset kept the sent log")
	}
	if code, _ := h.send(templateSend("+15551234567", "extra", "en_US", bodyParams("Ana"))); code != 200 {
		t.Fatal("reset must keep numbers and templates")
	}
	must(http.MethodPost, "/_sim/reset", map[string]any{"all": true}, 200)
	if code, _ := h.send(templateSend("+15551234567", "extra", "en_US", bodyParams("Ana"))); code != 401 {
		t.Fatal("reset all must remove numbers")
	}
	must(http.MethodGet, "/_sim/reset", nil, 405)
	must(http.MethodGet, "/_sim/nope", nil, 404)
}
