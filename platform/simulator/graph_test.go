package simulator

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSendWrongTokenIs190(t *testing.T) {
	h := newHarness(t, Config{})
	for _, tok := range []string{"", "not-a-token"} {
		code, out, hdr := h.do(http.MethodPost, "/v23.0/"+testPhoneID+"/messages", tok, templateSend("+15551234567", "welcome", "en_US"))
		if code != http.StatusUnauthorized {
			t.Fatalf("token %q: HTTP %d, want 401", tok, code)
		}
		c, _, msg, _ := graphErr(t, out)
		if c != 190 || !strings.Contains(msg, "access token") {
			t.Fatalf("token %q: code %d message %q", tok, c, msg)
		}
		if hdr.Get("WWW-Authenticate") == "" {
			t.Error("no WWW-Authenticate header on 401")
		}
	}
	// A valid token of another number is refused too.
	h.sim.AddNumber(Number{PhoneNumberID: "222", WabaID: "999", DisplayPhoneNumber: "15550000000", AccessToken: "other"})
	code, out, _ := h.do(http.MethodPost, "/v23.0/"+testPhoneID+"/messages", "other", templateSend("+15551234567", "welcome", "en_US"))
	if c, _, _, _ := graphErr(t, out); code != 401 || c != 190 {
		t.Fatalf("foreign token: HTTP %d code %d", code, c)
	}
}

func TestSendUnknownNumberIs100Subcode33(t *testing.T) {
	h := newHarness(t, Config{})
	code, out, _ := h.do(http.MethodPost, "/v21.0/123456789/messages", testToken, templateSend("+15551234567", "welcome", "en_US"))
	if code != http.StatusBadRequest {
		t.Fatalf("HTTP %d, want 400", code)
	}
	c, sub, msg, _ := graphErr(t, out)
	if c != 100 || sub != 33 {
		t.Fatalf("code %d subcode %d, want 100/33", c, sub)
	}
	if !strings.HasPrefix(msg, "Unsupported post request. Object with ID '123456789' does not exist") {
		t.Fatalf("message %q", msg)
	}
}

func TestSendSuccessShape(t *testing.T) {
	h := newHarness(t, Config{})
	to := "+1 (555) 123-4567"
	body := templateSend(to, "order_confirmation", "en_US", bodyParams("Ana", "ORD-7781"))
	body["biz_opaque_callback_data"] = "tenant-1:msg-9"
	code, out, hdr := h.do(http.MethodPost, "/v99.3/"+testPhoneID+"/messages", testToken, body)
	if code != http.StatusOK {
		t.Fatalf("HTTP %d: %v", code, out)
	}
	if out["messaging_product"] != "whatsapp" || len(out) != 3 {
		t.Fatalf("top level: %v", out)
	}
	contacts := out["contacts"].([]any)
	c0 := contacts[0].(map[string]any)
	if len(contacts) != 1 || c0["input"] != to || c0["wa_id"] != "15551234567" || len(c0) != 2 {
		t.Fatalf("contacts: %v", contacts)
	}
	msgs := out["messages"].([]any)
	m0 := msgs[0].(map[string]any)
	id, _ := m0["id"].(string)
	if len(msgs) != 1 || m0["message_status"] != "accepted" || len(m0) != 2 {
		t.Fatalf("messages: %v", msgs)
	}
	blob, ok := strings.CutPrefix(id, "wamid.")
	if !ok {
		t.Fatalf("id %q lacks wamid. prefix", id)
	}
	raw, err := base64.StdEncoding.DecodeString(blob)
	if err != nil || !strings.Contains(string(raw), "15551234567") {
		t.Fatalf("wamid blob %q: %v", blob, err)
	}
	if hdr.Get("facebook-api-version") != "v99.3" || hdr.Get("x-fb-trace-id") == "" {
		t.Errorf("headers: %v", hdr)
	}
	// The answer has its length: one write, not a chunked body (the handler flushes it).
	if hdr.Get("Content-Length") == "" {
		t.Errorf("no Content-Length: %v", hdr)
	}
	sent := h.sim.Sent()
	if len(sent) != 1 {
		t.Fatalf("Sent() = %d entries", len(sent))
	}
	s := sent[0]
	if s.Wamid != id || s.To != to || s.WaID != "15551234567" || s.PhoneNumberID != testPhoneID || s.Type != "template" ||
		s.TemplateName != "order_confirmation" || s.TemplateLanguage != "en_US" || s.BizOpaqueCallbackData != "tenant-1:msg-9" {
		t.Fatalf("Sent()[0] = %+v", s)
	}
	if got := s.Params("body"); strings.Join(got, "|") != "Ana|ORD-7781" {
		t.Fatalf("body params %v", got)
	}

	// A second send gets another wamid.
	_, out2 := h.send(templateSend(to, "welcome", "en_US"))
	if out2["messages"].([]any)[0].(map[string]any)["id"] == id {
		t.Fatal("wamid reused")
	}
}

func TestSendText(t *testing.T) {
	h := newHarness(t, Config{})
	code, out := h.send(map[string]any{"messaging_product": "whatsapp", "to": "15551234567", "type": "text", "text": map[string]any{"body": "hello"}})
	if code != 200 {
		t.Fatalf("HTTP %d %v", code, out)
	}
	if _, has := out["messages"].([]any)[0].(map[string]any)["message_status"]; has {
		t.Error("message_status is only for template sends")
	}
	if s := h.sim.Sent(); len(s) != 1 || s[0].TextBody != "hello" || s[0].Type != "text" {
		t.Fatalf("Sent() = %+v", s)
	}
	code, out = h.send(map[string]any{"messaging_product": "whatsapp", "to": "15551234567", "type": "text", "text": map[string]any{}})
	if c, _, _, _ := graphErr(t, out); code != 400 || c != 100 {
		t.Fatalf("missing text.body: HTTP %d code %d", code, c)
	}
}

func TestSendRequestValidation(t *testing.T) {
	h := newHarness(t, Config{})
	cases := []struct {
		name string
		body map[string]any
		code int
	}{
		{"no messaging_product", map[string]any{"to": "15551234567", "type": "template"}, 100},
		{"wrong messaging_product", map[string]any{"messaging_product": "sms", "to": "15551234567"}, 100},
		{"no to", map[string]any{"messaging_product": "whatsapp", "type": "template"}, 100},
		{"letters in to", templateSend("+1555abc4567", "welcome", "en_US"), 131009},
		{"no template", map[string]any{"messaging_product": "whatsapp", "to": "15551234567", "type": "template"}, 100},
		{"no language", map[string]any{"messaging_product": "whatsapp", "to": "15551234567", "type": "template", "template": map[string]any{"name": "welcome"}}, 100},
		{"unsupported type", map[string]any{"messaging_product": "whatsapp", "to": "15551234567", "type": "hologram"}, 131051},
		{"sticker without its object", map[string]any{"messaging_product": "whatsapp", "to": "15551234567", "type": "sticker"}, 100},
	}
	for _, tc := range cases {
		code, out := h.send(tc.body)
		if c, _, _, _ := graphErr(t, out); code != 400 || c != tc.code {
			t.Errorf("%s: HTTP %d code %d, want 400/%d", tc.name, code, c, tc.code)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	h := newHarness(t, Config{})
	h.sim.SeedTemplates(testWabaID, []Template{
		{ID: "5001", Name: "paused_one", Language: "en_US", Status: "PAUSED", Category: "MARKETING",
			Components: []map[string]any{{"type": "BODY", "text": "Hi"}}},
		{ID: "5002", Name: "disabled_one", Language: "en_US", Status: "DISABLED", Category: "MARKETING",
			Components: []map[string]any{{"type": "BODY", "text": "Hi"}}},
		{ID: "5003", Name: "promo_image", Language: "en_US", Category: "MARKETING",
			Components: []map[string]any{
				{"type": "HEADER", "format": "IMAGE"},
				{"type": "BODY", "text": "Look {{1}}"},
				{"type": "BUTTONS", "buttons": []any{map[string]any{"type": "URL", "text": "Go", "url": "https://x.example/{{1}}"}}},
			}},
		{ID: "5004", Name: "repeat_var", Language: "en_US",
			Components: []map[string]any{{"type": "BODY", "text": "{{1}} and {{1}} and {{2}}"}}},
		{ID: "5005", Name: "coupon", Language: "en_US", Category: "MARKETING",
			Components: []map[string]any{
				{"type": "BODY", "text": "Save"},
				{"type": "BUTTONS", "buttons": []any{map[string]any{"type": "COPY_CODE", "example": "SAVE20"},
					map[string]any{"type": "QUICK_REPLY", "text": "Stop"}, map[string]any{"type": "PHONE_NUMBER", "text": "Call", "phone_number": "+15550001111"}}},
			}},
		{ID: "5006", Name: "otp", Language: "en_US", Category: "AUTHENTICATION",
			Components: []map[string]any{
				{"type": "BODY", "text": "*{{1}}* is your verification code."},
				{"type": "BUTTONS", "buttons": []any{map[string]any{"type": "URL", "text": "Copy code", "url": "https://www.whatsapp.com/otp/code/?otp_type=COPY_CODE&code=otp{{1}}"}}},
			}},
	})
	to := "+15551234567"
	long := strings.Repeat("x", 1100)
	header := func(ps ...map[string]any) map[string]any {
		l := make([]any, len(ps))
		for i, p := range ps {
			l[i] = p
		}
		return map[string]any{"type": "header", "parameters": l}
	}
	image := map[string]any{"type": "image", "image": map[string]any{"link": "https://cdn.example/a.jpg"}}
	urlButton := map[string]any{"type": "button", "sub_type": "url", "index": "0", "parameters": []any{map[string]any{"type": "text", "text": "ORD-1"}}}
	coupon := func(code string) map[string]any {
		return map[string]any{"type": "button", "sub_type": "copy_code", "index": 0, "parameters": []any{map[string]any{"type": "coupon_code", "coupon_code": code}}}
	}
	named := func(pairs ...string) map[string]any {
		var ps []any
		for i := 0; i < len(pairs); i += 2 {
			ps = append(ps, map[string]any{"type": "text", "parameter_name": pairs[i], "text": pairs[i+1]})
		}
		return map[string]any{"type": "body", "parameters": ps}
	}
	cases := []struct {
		name    string
		body    map[string]any
		http    int
		code    int
		details string // exact when set
	}{
		{"unknown name", templateSend(to, "nope", "en_US"), 404, 132001, "template name (nope) does not exist in en_US"},
		{"wrong language", templateSend(to, "order_confirmation", "pt_BR", bodyParams("a", "b")), 404, 132001, "template name (order_confirmation) does not exist in pt_BR"},
		{"language is exact", templateSend(to, "welcome", "en"), 404, 132001, "template name (welcome) does not exist in en"},
		{"pending", templateSend(to, "payment_reminder", "en_US", bodyParams("INV-1")), 404, 132001, "template name (payment_reminder) does not exist in en_US"},
		{"rejected", templateSend(to, "flash_sale", "en_US", bodyParams("50%")), 404, 132001, ""},
		{"paused", templateSend(to, "paused_one", "en_US"), 400, 132015, ""},
		{"disabled", templateSend(to, "disabled_one", "en_US"), 400, 132016, ""},
		{"too many body params", templateSend(to, "shipping_update", "en_US", header(map[string]any{"type": "text", "text": "ORD-1"}), bodyParams("a", "b")), 400, 132000,
			"body: number of localizable_params (2) does not match the expected number of params (1)"},
		{"missing body", templateSend(to, "order_confirmation", "en_US"), 400, 132000,
			"body: number of localizable_params (0) does not match the expected number of params (2)"},
		{"distinct placeholders", templateSend(to, "repeat_var", "en_US", bodyParams("a", "b", "c")), 400, 132000,
			"body: number of localizable_params (3) does not match the expected number of params (2)"},
		{"missing text header", templateSend(to, "shipping_update", "en_US", bodyParams("Friday")), 400, 132000,
			"header: number of localizable_params (0) does not match the expected number of params (1)"},
		{"header on template without one", templateSend(to, "welcome", "en_US", header(map[string]any{"type": "text", "text": "x"})), 400, 132000,
			"header: number of localizable_params (1) does not match the expected number of params (0)"},
		{"missing media header", templateSend(to, "promo_image", "en_US", bodyParams("x"), urlButton), 400, 132012,
			"header: Format mismatch, expected IMAGE, received UNKNOWN"},
		{"video for an image header", templateSend(to, "promo_image", "en_US", header(map[string]any{"type": "video", "video": map[string]any{"id": "1"}}), bodyParams("x"), urlButton), 400, 132012,
			"header: Format mismatch, expected IMAGE, received VIDEO"},
		{"coupon missing", templateSend(to, "coupon", "en_US"), 400, 131008,
			"buttons: Button at index 0 of type Copy_code requires a parameter"},
		{"otp button missing", templateSend(to, "otp", "en_US", bodyParams("482913")), 400, 131008,
			"buttons: Button at index 0 of type Url requires a parameter"},
		{"parameter for a phone button", templateSend(to, "coupon", "en_US", coupon("SAVE20"),
			map[string]any{"type": "button", "sub_type": "url", "index": "2", "parameters": []any{map[string]any{"type": "text", "text": "x"}}}), 400, 132000,
			"buttons: Button at index 2 of type Phone_number does not take parameters"},
		{"quick reply as url", templateSend(to, "coupon", "en_US", coupon("SAVE20"),
			map[string]any{"type": "button", "sub_type": "url", "index": "1", "parameters": []any{map[string]any{"type": "text", "text": "x"}}}), 400, 132000,
			"buttons: Button at index 1 of type Quick_reply does not match sub_type url"},
		{"coupon too long", templateSend(to, "coupon", "en_US", coupon("SAVE20SAVE20SAVE20")), 400, 131009, ""},
		{"media header wrong type", templateSend(to, "promo_image", "en_US", header(map[string]any{"type": "text", "text": "x"}), bodyParams("x"), urlButton), 400, 132012,
			"header: Format mismatch, expected IMAGE, received TEXT"},
		{"url button missing", templateSend(to, "promo_image", "en_US", header(image), bodyParams("x")), 400, 131008,
			"buttons: Button at index 0 of type Url requires a parameter"},
		{"newline", templateSend(to, "order_confirmation", "en_US", bodyParams("Ana\nB", "x")), 400, 132012,
			"body: Param text cannot have new-line/tab characters or more than 4 consecutive spaces"},
		{"tab", templateSend(to, "order_confirmation", "en_US", bodyParams("Ana", "x\ty")), 400, 132012, ""},
		{"five spaces", templateSend(to, "order_confirmation", "en_US", bodyParams("Ana", "x     y")), 400, 132012, ""},
		{"empty text", templateSend(to, "order_confirmation", "en_US", bodyParams("", "x")), 400, 132012, "body: Param text cannot be empty"},
		{"too long", templateSend(to, "order_confirmation", "en_US", bodyParams(long, "x")), 400, 132005, ""},
		{"named: positional given", templateSend(to, "reservation_confirmation", "en_US", bodyParams("Ana", "4")), 400, 132000, ""},
		{"named: unknown name", templateSend(to, "reservation_confirmation", "en_US", named("first_name", "Ana", "seats", "4")), 400, 132000,
			"body: parameter name (seats) does not match any expected param names"},
		{"positional: named given", templateSend(to, "order_confirmation", "en_US", named("1", "Ana", "2", "x")), 400, 132000, ""},
	}
	for _, tc := range cases {
		code, out := h.send(tc.body)
		c, _, msg, details := graphErr(t, out)
		if code != tc.http || c != tc.code {
			t.Errorf("%s: HTTP %d code %d (%s), want %d/%d", tc.name, code, c, details, tc.http, tc.code)
			continue
		}
		if want := "(#" + strconv.Itoa(tc.code) + ") "; !strings.HasPrefix(msg, want) {
			t.Errorf("%s: message %q does not start with %q", tc.name, msg, want)
		}
		if tc.details != "" && details != tc.details {
			t.Errorf("%s: details %q, want %q", tc.name, details, tc.details)
		}
	}
	if msg := func() string {
		_, out := h.send(templateSend(to, "nope", "en_US"))
		_, _, m, _ := graphErr(t, out)
		return m
	}(); msg != "(#132001) Template name does not exist in the translation" {
		t.Errorf("132001 message %q", msg)
	}

	// The valid forms pass.
	ok := []map[string]any{
		templateSend(to, "welcome", "en_US"),
		templateSend(to, "order_confirmation", "en_US", bodyParams("Ana", "x    y")),
		templateSend(to, "shipping_update", "en_US", header(map[string]any{"type": "text", "text": "ORD-1"}), bodyParams("Friday")),
		templateSend(to, "promo_image", "en_US", header(image), bodyParams("x"), urlButton),
		templateSend(to, "reservation_confirmation", "en_US", named("guests", "4", "first_name", "Ana")),
		templateSend(to, "appointment_reminder", "es_MX", map[string]any{"type": "body", "parameters": []any{
			map[string]any{"type": "date_time", "date_time": map[string]any{"fallback_value": "12 de marzo"}},
			map[string]any{"type": "text", "text": "10:30"},
		}}),
	}
	for i, b := range ok {
		if code, out := h.send(b); code != 200 {
			t.Errorf("valid send %d: HTTP %d %v", i, code, out)
		}
	}
	if n := len(h.sim.Sent()); n != len(ok) {
		t.Fatalf("Sent() has %d, want %d (rejected sends must not be recorded)", n, len(ok))
	}
	if got := h.sim.Sent()[3].Params("header"); len(got) != 1 || got[0] != "https://cdn.example/a.jpg" {
		t.Errorf("media header param %v", got)
	}
}

func TestWaIDRewriting(t *testing.T) {
	cases := []struct{ to, waID string }{
		{"+52 55 1234 5678", "5215512345678"}, // MX: 52 + 10 → 521 + 10
		{"+5215512345678", "5215512345678"},   // already in wa_id form
		{"+55 31 98765-4321", "553187654321"}, // BR, DDD 31: drop the 9
		{"+5511987654321", "5511987654321"},   // BR, DDD 11: keep
		{"+54 11 1234-5678", "5491112345678"}, // AR: 54 → 549
		{"+5491112345678", "5491112345678"},   // AR already 549
		{"+1 555 123 4567", "15551234567"},
	}
	h := newHarness(t, Config{})
	for _, tc := range cases {
		code, out := h.send(templateSend(tc.to, "welcome", "en_US"))
		if code != 200 {
			t.Fatalf("%s: HTTP %d %v", tc.to, code, out)
		}
		c := out["contacts"].([]any)[0].(map[string]any)
		if c["input"] != tc.to || c["wa_id"] != tc.waID {
			t.Errorf("%s: contacts %v, want wa_id %s", tc.to, c, tc.waID)
		}
	}
}

func TestRateLimit130429(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, Config{RatePerSecond: 3, Clock: clk.Now})
	send := func() (int, map[string]any) { return h.send(templateSend("+15551234567", "welcome", "en_US")) }
	for i := range 3 {
		if code, out := send(); code != 200 {
			t.Fatalf("send %d: HTTP %d %v", i, code, out)
		}
	}
	code, out := send()
	c, _, msg, _ := graphErr(t, out)
	if code != 400 || c != 130429 || msg != "(#130429) Rate limit hit" {
		t.Fatalf("4th send: HTTP %d code %d %q", code, c, msg)
	}
	// Another number has its own budget.
	h.sim.AddNumber(Number{PhoneNumberID: "777", WabaID: testWabaID, DisplayPhoneNumber: "15550000001", AccessToken: "tok-777"})
	if code, _, _ := h.do(http.MethodPost, "/v23.0/777/messages", "tok-777", templateSend("+15551234567", "welcome", "en_US")); code != 200 {
		t.Fatalf("other number: HTTP %d", code)
	}
	// The limit is per clock second: the rest of this second stays full, the next is fresh.
	clk.Advance(time.Second / 2)
	if code, _ := send(); code != 400 {
		t.Fatalf("same second: HTTP %d", code)
	}
	clk.Advance(time.Second / 2)
	for i := range 3 {
		if code, out := send(); code != 200 {
			t.Fatalf("next second, send %d: HTTP %d %v", i, code, out)
		}
	}
	if code, _ := send(); code != 400 {
		t.Fatalf("next second full again: HTTP %d", code)
	}
}

func TestPairRateLimit131056(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, Config{PairInterval: 6 * time.Second, Clock: clk.Now})
	if code, _ := h.send(templateSend("+15551234567", "welcome", "en_US")); code != 200 {
		t.Fatal(code)
	}
	code, out := h.send(templateSend("+1 555 123 4567", "welcome", "en_US"))
	if c, _, _, _ := graphErr(t, out); code != 400 || c != 131056 {
		t.Fatalf("HTTP %d code %d", code, c)
	}
	if code, _ := h.send(templateSend("+15557654321", "welcome", "en_US")); code != 200 {
		t.Fatal("other recipients are unaffected")
	}
	clk.Advance(6 * time.Second)
	if code, _ := h.send(templateSend("+15551234567", "welcome", "en_US")); code != 200 {
		t.Fatal("after the interval the pair may send again")
	}
}

func TestScriptedFailSync(t *testing.T) {
	h := newHarness(t, Config{})
	cases := []struct {
		code, http int
		title      string
	}{
		{131026, 400, "Message undeliverable"},
		{130429, 400, "Rate limit hit"},
		{131056, 400, "(Business Account, Consumer Account) pair rate limit hit"},
		{131047, 400, "Re-engagement message"},
		{131049, 400, "This message was not delivered to maintain healthy ecosystem engagement."},
		{131000, 500, "Something went wrong"},
		{133004, 503, "Server temporarily unavailable"},
		{368, 403, "Temporarily blocked for policies violations"},
	}
	for _, tc := range cases {
		h.sim.Script("+1 555 000 1111", Outcome{FailSync: tc.code})
		code, out := h.send(templateSend("+15550001111", "welcome", "en_US"))
		c, _, msg, details := graphErr(t, out)
		if code != tc.http || c != tc.code || msg != "(#"+strconv.Itoa(tc.code)+") "+tc.title || details == "" {
			t.Errorf("FailSync %d: HTTP %d code %d %q %q", tc.code, code, c, msg, details)
		}
	}
	h.sim.Script("15550001111", Outcome{})
	if code, _ := h.send(templateSend("+15550001111", "welcome", "en_US")); code != 200 {
		t.Fatal("zero Outcome must remove the script")
	}
	if n := len(h.sim.Sent()); n != 1 {
		t.Fatalf("Sent() = %d, want 1", n)
	}
}

func TestHangDelaysResponse(t *testing.T) {
	rc := newReceiver(t)
	h := newHarness(t, Config{WebhookURL: rc.srv.URL, SentDelay: time.Hour, DeliveredDelay: time.Hour, ReadDelay: time.Hour})
	// EarlyStatus tells the test (through the receiver) that the message was
	// accepted; the response then hangs until the client gives up.
	h.sim.Script("15550002222", Outcome{Hang: time.Minute, EarlyStatus: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.base+"/v23.0/"+testPhoneID+"/messages?access_token="+testToken,
			strings.NewReader(`{"messaging_product":"whatsapp","to":"15550002222","type":"template","template":{"name":"welcome","language":{"code":"en_US"}}}`))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	rc.next() // accepted and hanging
	select {
	case err := <-errc:
		t.Fatalf("response arrived during the hang: %v", err)
	default:
	}
	cancel() // the client times out
	if err := <-errc; err == nil {
		t.Fatal("expected the client to give up")
	}
	// The send was accepted before the hang: the outcome is unknown to the client.
	if n := len(h.sim.Sent()); n != 1 {
		t.Fatalf("Sent() = %d, want 1", n)
	}
}

func TestTemplateListPaging(t *testing.T) {
	h := newHarness(t, Config{})
	path := "/v23.0/" + testWabaID + "/message_templates"

	// Token checks.
	if code, out, _ := h.do(http.MethodGet, path, "bad", nil); code != 401 {
		t.Fatalf("bad token: HTTP %d %v", code, out)
	}
	h.sim.AddNumber(Number{PhoneNumberID: "888", WabaID: "other-waba", DisplayPhoneNumber: "15550000002", AccessToken: "tok-888"})
	if code, out, _ := h.do(http.MethodGet, path, "tok-888", nil); code != 401 {
		t.Fatalf("token of another WABA: HTTP %d %v", code, out)
	}
	if code, out, _ := h.do(http.MethodGet, "/v23.0/nope/message_templates", testToken, nil); code != 400 {
		t.Fatalf("unknown WABA: HTTP %d %v", code, out)
	}

	// Default page holds every status.
	code, out, _ := h.do(http.MethodGet, path, testToken, nil)
	if code != 200 {
		t.Fatalf("HTTP %d %v", code, out)
	}
	data := out["data"].([]any)
	if len(data) != len(DefaultTemplates()) {
		t.Fatalf("got %d templates", len(data))
	}
	statuses := map[string]bool{}
	for _, d := range data {
		m := d.(map[string]any)
		if _, isString := m["id"].(string); !isString {
			t.Fatalf("id must be a string: %v", m["id"])
		}
		statuses[m["status"].(string)] = true
		comps := m["components"].([]any)
		if typ := comps[0].(map[string]any)["type"].(string); typ != strings.ToUpper(typ) {
			t.Fatalf("component type %q is not upper-case", typ)
		}
	}
	if !statuses["PENDING"] || !statuses["REJECTED"] || !statuses["APPROVED"] {
		t.Fatalf("statuses %v", statuses)
	}
	if p := out["paging"].(map[string]any); p["next"] != nil {
		t.Fatalf("single page must not have next: %v", p)
	}

	// Follow paging.next with limit=3.
	var ids []string
	next := h.base + path + "?limit=3&fields=id,name,status"
	pages := 0
	for next != "" {
		u, err := url.Parse(next)
		if err != nil {
			t.Fatal(err)
		}
		if u.Host != strings.TrimPrefix(h.base, "http://") || u.Scheme != "http" {
			t.Fatalf("next %q is not built from the request host", next)
		}
		code, out, _ := h.do(http.MethodGet, u.RequestURI(), testToken, nil)
		if code != 200 {
			t.Fatalf("page %d: HTTP %d %v", pages, code, out)
		}
		pages++
		page := out["data"].([]any)
		for _, d := range page {
			m := d.(map[string]any)
			if _, has := m["components"]; has {
				t.Fatal("fields= must restrict the output")
			}
			ids = append(ids, m["id"].(string))
		}
		p := out["paging"].(map[string]any)
		cur := p["cursors"].(map[string]any)
		if cur["after"] == "" || cur["before"] == "" {
			t.Fatalf("cursors %v", cur)
		}
		next, _ = p["next"].(string)
		if next != "" && len(page) != 3 {
			t.Fatalf("a page before the last has %d items", len(page))
		}
	}
	if pages != 3 || len(ids) != len(DefaultTemplates()) {
		t.Fatalf("pages %d ids %v", pages, ids)
	}
	for i, tpl := range DefaultTemplates() {
		if ids[i] != tpl.ID {
			t.Fatalf("order: %v", ids)
		}
	}

	// Filters.
	code, out, _ = h.do(http.MethodGet, path+"?status=APPROVED&name=appointment", testToken, nil)
	if data := out["data"].([]any); code != 200 || len(data) != 2 {
		t.Fatalf("filters: HTTP %d %v", code, out)
	}
	// The default page size is 25.
	var many []Template
	for i := range 30 {
		many = append(many, Template{Name: "bulk_" + strconv.Itoa(i), Language: "en_US", Components: []map[string]any{{"type": "BODY", "text": "Hi"}}})
	}
	h.sim.SeedTemplates(testWabaID, many)
	code, out, _ = h.do(http.MethodGet, path, testToken, nil)
	if data := out["data"].([]any); code != 200 || len(data) != 25 || out["paging"].(map[string]any)["next"] == nil {
		t.Fatalf("default limit: HTTP %d, %d items, paging %v", code, len(data), out["paging"])
	}
	// A bad cursor is refused.
	if code, _, _ := h.do(http.MethodGet, path+"?after=garbage", testToken, nil); code != 400 {
		t.Fatalf("bad cursor: HTTP %d", code)
	}
}

func TestNumberLookupAndUnknownPaths(t *testing.T) {
	h := newHarness(t, Config{})
	code, out, _ := h.do(http.MethodGet, "/v23.0/"+testPhoneID, testToken, nil)
	if code != 200 || out["id"] != testPhoneID || out["display_phone_number"] != testDisplay {
		t.Fatalf("HTTP %d %v", code, out)
	}
	if code, out, _ := h.do(http.MethodGet, "/v23.0/"+testPhoneID+"/messages", testToken, nil); code != 400 {
		t.Fatalf("GET messages: HTTP %d %v", code, out)
	}
	if code, _, _ := h.do(http.MethodPost, "/graph/"+testPhoneID+"/messages", testToken, map[string]any{}); code != 400 {
		t.Fatalf("no version: HTTP %d", code)
	}
}
