package simulator

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestServiceWindow131047(t *testing.T) {
	rc := newReceiver(t)
	clk := newFakeClock()
	cfg := webhookConfig(rc)
	cfg.Clock = clk.Now
	cfg.EnforceServiceWindow = true
	h := newHarness(t, cfg)
	text := map[string]any{"messaging_product": "whatsapp", "to": "+52 55 1234 5678", "type": "text", "text": map[string]any{"body": "hi"}}

	// No inbound yet: accepted, then failed with 131047.
	if code, out := h.send(text); code != 200 {
		t.Fatalf("HTTP %d %v", code, out)
	}
	for _, want := range []string{"sent", "failed"} {
		status, _, _, w := decodeStatus(t, rc.next())
		if status != want {
			t.Fatalf("status %s, want %s", status, want)
		}
		if status == "failed" && w.Entry[0].Changes[0].Value.Statuses[0].Errors[0].Code != 131047 {
			t.Fatal("want 131047")
		}
	}

	// The user writes (from the wa_id form): the window opens for 24 h.
	if _, err := h.sim.InjectInboundMessage(Inbound{PhoneNumberID: testPhoneID, From: "5215512345678", Name: "Ana", Type: "text", Payload: map[string]any{"body": "join"}}); err != nil {
		t.Fatal(err)
	}
	rc.next()
	if code, _ := h.send(text); code != 200 {
		t.Fatal(code)
	}
	for _, want := range []string{"sent", "delivered", "read"} {
		if status, _, _, w := decodeStatus(t, rc.next()); status != want {
			t.Fatalf("status %s, want %s", status, want)
		} else if p := w.Entry[0].Changes[0].Value.Statuses[0].Pricing; p != nil && (!p.Billable || p.Category != "service") {
			t.Fatalf("service message pricing %+v", p)
		}
	}
	// Templates are never subject to the window.
	clk.Advance(25 * time.Hour)
	sendOK(t, h, "+525512345678")
	for _, want := range []string{"sent", "delivered", "read"} {
		if status, _, _, _ := decodeStatus(t, rc.next()); status != want {
			t.Fatalf("template status %s, want %s", status, want)
		}
	}
}

func TestScriptMatchesWaIDForms(t *testing.T) {
	h := newHarness(t, Config{})
	h.sim.Script("+52 55 1234 5678", Outcome{FailSync: 131026})
	code, out := h.send(templateSend("5215512345678", "welcome", "en_US"))
	if c, _, _, _ := graphErr(t, out); code != 400 || c != 131026 {
		t.Fatalf("HTTP %d code %d", code, c)
	}
}

// BenchmarkSendTemplate measures the simulator's own cost per accepted
// template send (handler only, no network, no webhooks).
func BenchmarkSendTemplate(b *testing.B) {
	sim := New(Config{})
	defer sim.Close()
	sim.AddNumber(Number{PhoneNumberID: testPhoneID, WabaID: testWabaID, DisplayPhoneNumber: testDisplay, AccessToken: testToken})
	sim.SeedTemplates(testWabaID, DefaultTemplates())
	body := `{"messaging_product":"whatsapp","to":"+15551234567","type":"template","template":{"name":"order_confirmation","language":{"code":"en_US"},"components":[{"type":"body","parameters":[{"type":"text","text":"Ana"},{"type":"text","text":"ORD-1"}]}]}}`
	h := sim.handler
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest(http.MethodPost, "/v23.0/"+testPhoneID+"/messages", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+testToken)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != 200 {
				b.Fatalf("HTTP %d %s", rec.Code, rec.Body)
			}
		}
	})
}

func TestSentLogIsBounded(t *testing.T) {
	h := newHarness(t, Config{MaxSent: 10})
	for i := range 25 {
		if code, _ := h.send(templateSend("+1555000"+strconv.Itoa(1000+i), "welcome", "en_US")); code != 200 {
			t.Fatal(code)
		}
	}
	sent := h.sim.Sent()
	if len(sent) > 10 || len(sent) < 9 || sent[len(sent)-1].WaID != "15550001024" {
		t.Fatalf("Sent() has %d entries, last %+v", len(sent), sent[len(sent)-1])
	}
}

// A message dated SentSecondsAgo in the past carries that timestamp and opens its window from
// then: 25 hours ago, the window closed an hour ago, and a text to the handset fails with 131047.
func TestInboundSentInThePast(t *testing.T) {
	rc := newReceiver(t)
	clk := newFakeClock()
	cfg := webhookConfig(rc)
	cfg.Clock = clk.Now
	cfg.EnforceServiceWindow = true
	h := newHarness(t, cfg)
	if _, err := h.sim.Inject(Inbound{PhoneNumberID: testPhoneID, From: "15551234567", Type: "text", SentSecondsAgo: -1,
		Payload: map[string]any{"body": "hi"}}); err == nil {
		t.Fatal("a negative sent_seconds_ago was accepted")
	}
	if _, err := h.sim.Inject(Inbound{PhoneNumberID: testPhoneID, From: "15551234567", Type: "text", SentSecondsAgo: 25 * 3600,
		Payload: map[string]any{"body": "hi"}}); err != nil {
		t.Fatal(err)
	}
	sent := clk.Now().Add(-25 * time.Hour)
	if d := rc.next(); !strings.Contains(string(d.body), `"timestamp":"`+strconv.FormatInt(sent.Unix(), 10)+`"`) {
		t.Fatalf("webhook without the past timestamp: %s", d.body)
	}
	w, ok := h.sim.Window(testPhoneID, "15551234567")
	if !ok || w.Open || !w.LastInbound.Equal(sent) || !w.Closes.Equal(clk.Now().Add(-time.Hour)) {
		t.Fatalf("window %+v %v", w, ok)
	}
	text := map[string]any{"messaging_product": "whatsapp", "to": "15551234567", "type": "text", "text": map[string]any{"body": "hi"}}
	if code, out := h.send(text); code != http.StatusOK {
		t.Fatalf("HTTP %d %v", code, out)
	}
	for _, want := range []string{"sent", "failed"} {
		if status, _, _, _ := decodeStatus(t, rc.next()); status != want {
			t.Fatalf("status %s, want %s", status, want)
		}
	}
}
