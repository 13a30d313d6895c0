package simulator

import (
	"encoding/json"
	"testing"
)

// Sends of the rich seed templates in Meta's shape are accepted, and the simulator records the
// components exactly as received.
func TestRichTemplatesAccepted(t *testing.T) {
	h := newHarness(t, Config{})
	h.sim.SeedTemplates(testWabaID, RichTemplates())
	btn := func(sub string, idx int, params ...map[string]any) map[string]any {
		ps := make([]any, len(params))
		for i, p := range params {
			ps[i] = p
		}
		return map[string]any{"type": "button", "sub_type": sub, "index": idx, "parameters": ps}
	}
	hdr := func(p map[string]any) map[string]any {
		return map[string]any{"type": "header", "parameters": []any{p}}
	}
	cases := []struct {
		name  string
		tpl   string
		comps []map[string]any
	}{
		{"image by link, url suffix, payload", "spring_sale", []map[string]any{
			hdr(map[string]any{"type": "image", "image": map[string]any{"link": "https://cdn.example.com/a.jpg"}}), bodyParams("Ana"),
			btn("url", 0, map[string]any{"type": "text", "text": "SPRING24"}), btn("quick_reply", 1, map[string]any{"type": "payload", "payload": "STOP"})}},
		{"quick reply payload is optional", "spring_sale", []map[string]any{
			hdr(map[string]any{"type": "image", "image": map[string]any{"id": "1234"}}), bodyParams("Ana"),
			btn("url", 0, map[string]any{"type": "text", "text": "SPRING24"})}},
		{"video, static url button", "product_demo", []map[string]any{
			hdr(map[string]any{"type": "video", "video": map[string]any{"id": "99"}}), bodyParams("Kettle")}},
		{"document with filename", "invoice_ready", []map[string]any{
			hdr(map[string]any{"type": "document", "document": map[string]any{"id": "99", "filename": "INV-1.pdf"}}), bodyParams("INV-1")}},
		{"location", "store_directions", []map[string]any{
			hdr(map[string]any{"type": "location", "location": map[string]any{"latitude": 1.5, "longitude": 2.5}})}},
		{"coupon", "coupon_offer", []map[string]any{bodyParams("Ana"),
			btn("copy_code", 0, map[string]any{"type": "coupon_code", "coupon_code": "SAVE20"})}},
		{"otp", "login_code", []map[string]any{bodyParams("482913"), btn("url", 0, map[string]any{"type": "text", "text": "482913"})}},
	}
	for _, tc := range cases {
		code, out := h.send(templateSend("+15551234567", tc.tpl, "en_US", tc.comps...))
		if code != 200 {
			t.Errorf("%s: HTTP %d %v", tc.name, code, out)
			continue
		}
		sent := h.sim.Sent()
		last := sent[len(sent)-1]
		want, _ := json.Marshal(tc.comps)
		if string(last.Components) != string(want) || last.TemplateName != tc.tpl {
			t.Errorf("%s: recorded %s, want %s", tc.name, last.Components, want)
		}
	}
}
