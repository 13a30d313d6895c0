package simulator

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

// inboundOf decodes an inbound delivery and returns its only contact and message.
func inboundOf(t *testing.T, d delivery) (contact, msg map[string]any) {
	t.Helper()
	var w struct {
		Entry []struct {
			Changes []struct {
				Value struct {
					Contacts []map[string]any `json:"contacts"`
					Messages []map[string]any `json:"messages"`
				} `json:"value"`
			} `json:"changes"`
		} `json:"entry"`
	}
	if err := json.Unmarshal(d.body, &w); err != nil {
		t.Fatal(err)
	}
	v := w.Entry[0].Changes[0].Value
	if len(v.Contacts) != 1 || len(v.Messages) != 1 {
		t.Fatalf("want one contact and one message: %s", d.body)
	}
	return v.Contacts[0], v.Messages[0]
}

// drain waits until the simulator has no webhook left to send and discards what arrived.
func drain(t *testing.T, h *harness, rc *receiver) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := h.sim.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case <-rc.ch:
		default:
			return
		}
	}
}

// systemOf decodes a system message delivery (which has no contacts) and returns its message.
func systemOf(t *testing.T, d delivery) map[string]any {
	t.Helper()
	var w struct {
		Entry []struct {
			Changes []struct {
				Value map[string]json.RawMessage `json:"value"`
			} `json:"changes"`
		} `json:"entry"`
	}
	if err := json.Unmarshal(d.body, &w); err != nil {
		t.Fatal(err)
	}
	v := w.Entry[0].Changes[0].Value
	var msgs []map[string]any
	_ = json.Unmarshal(v["messages"], &msgs)
	if _, has := v["contacts"]; has || len(msgs) != 1 {
		t.Fatalf("want one message and no contacts: %s", d.body)
	}
	return msgs[0]
}

// control POSTs a control request and decodes the answer.
func (h *harness) control(method, path string, body any, want int) map[string]any {
	h.t.Helper()
	code, out, _ := h.do(method, path, "", body)
	if code != want {
		h.t.Fatalf("%s %s: HTTP %d, want %d: %v", method, path, code, want, out)
	}
	return out
}

// Every inbound kind goes out under its type with the sender's user id; the control API's
// answer names the wamid and the identity.
func TestInboundEveryKind(t *testing.T) {
	rc := newReceiver(t)
	h := newHarness(t, webhookConfig(rc))
	quoted := "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBJDNUE3MkY4QTg2RDk5Q0Y3QTMA"
	kinds := []map[string]any{
		{"type": "text", "payload": map[string]any{"body": "hi"}},
		{"type": "image", "payload": map[string]any{"caption": "look"}},
		{"type": "video", "payload": map[string]any{}},
		{"type": "audio", "payload": map[string]any{"voice": true}},
		{"type": "document", "payload": map[string]any{"filename": "a.pdf", "caption": "Invoice"}},
		{"type": "sticker", "payload": map[string]any{"animated": true}},
		{"type": "location", "payload": map[string]any{"latitude": 37.48, "longitude": -122.14, "name": "HQ", "address": "1 Hacker Way", "url": "https://example.com"}},
		{"type": "contacts", "payload": []any{map[string]any{"name": map[string]any{"formatted_name": "Bo"}, "phones": []any{map[string]any{"phone": "+1 555", "type": "CELL"}}}}},
		{"type": "interactive", "payload": map[string]any{"type": "button_reply", "button_reply": map[string]any{"id": "yes", "title": "Yes"}}, "context_message_id": quoted},
		{"type": "interactive", "payload": map[string]any{"type": "list_reply", "list_reply": map[string]any{"id": "r1", "title": "09:30", "description": "Morning"}}},
		{"type": "interactive", "payload": map[string]any{"type": "nfm_reply", "nfm_reply": map[string]any{"name": "flow", "body": "Sent", "response_json": `{"flow_token":"t1","a":1}`}}},
		{"type": "button", "payload": map[string]any{"payload": "STOP_PROMO", "text": "Stop promotions"}, "context_message_id": quoted},
		{"type": "reaction", "payload": map[string]any{"message_id": quoted, "emoji": "👍"}},
		{"type": "order", "payload": map[string]any{"catalog_id": "1537", "product_items": []any{map[string]any{"product_retailer_id": "sku", "quantity": 2, "item_price": 9.5, "currency": "USD"}}}},
		{"type": "edit", "payload": map[string]any{"original_message_id": quoted, "message": map[string]any{"type": "text", "text": map[string]any{"body": "edited"}}}},
		{"type": "revoke", "payload": map[string]any{"original_message_id": quoted}},
		{"type": "unsupported"},
		{"type": "text", "payload": map[string]any{"body": "from an ad"}, "referral": map[string]any{"source_type": "ad", "source_id": "1202", "ctwa_clid": "ARAk"}},
		{"type": "image", "payload": map[string]any{"caption": "fwd"}, "forwarded": true, "frequently_forwarded": true},
	}
	for _, k := range kinds {
		k["phone_number_id"], k["from"], k["name"] = testPhoneID, "+1 555 123 4567", "Ana"
		out := h.control(http.MethodPost, "/_sim/inbound", k, 200)
		contact, msg := inboundOf(t, rc.next())
		typ := k["type"].(string)
		if msg["id"] != out["wamid"] || msg["type"] != typ || msg["from"] != "15551234567" || msg["from_user_id"] != UserIDFor("15551234567") {
			t.Errorf("%s: message %v, answer %v", typ, msg, out)
		}
		if contact["wa_id"] != "15551234567" || contact["user_id"] != out["user_id"] || out["user_id"] != UserIDFor("15551234567") {
			t.Errorf("%s: contact %v", typ, contact)
		}
		switch {
		case typ == "unsupported":
			errs, _ := msg["errors"].([]any)
			if len(errs) != 1 || errs[0].(map[string]any)["code"] != float64(131051) {
				t.Errorf("unsupported: %v", msg)
			}
		case msg[typ] == nil:
			t.Errorf("%s: no %q object: %v", typ, typ, msg)
		}
		if id, ok := k["context_message_id"]; ok {
			if c, _ := msg["context"].(map[string]any); c["id"] != id || c["from"] != testDisplay {
				t.Errorf("%s: context %v", typ, msg["context"])
			}
		}
		if k["referral"] != nil {
			if r, _ := msg["referral"].(map[string]any); r["ctwa_clid"] != "ARAk" {
				t.Errorf("referral: %v", msg)
			}
		}
		if k["forwarded"] == true {
			if c, _ := msg["context"].(map[string]any); c["forwarded"] != true || c["frequently_forwarded"] != true || c["id"] != nil {
				t.Errorf("forwarded: %v", msg["context"])
			}
		}
		if isMediaType(typ) {
			p := msg[typ].(map[string]any)
			info, ok := h.sim.Media(p["id"].(string))
			sum, _ := hex.DecodeString(info.SHA256)
			if !ok || out["media_id"] != p["id"] || p["sha256"] != base64.StdEncoding.EncodeToString(sum) || out["sha256"] != info.SHA256 ||
				p["mime_type"] != inboundMediaDefaults[typ].mimeType || info.Size != inboundMediaDefaults[typ].size {
				t.Errorf("%s: media payload %v, info %+v", typ, p, info)
			}
		}
	}
}

// A username-only sender has no wa_id or from; answering them by user id works inside the
// window, and the send's answer and statuses name the user id and no number.
func TestUsernameOnlySender(t *testing.T) {
	rc := newReceiver(t)
	cfg := webhookConfig(rc)
	cfg.EnforceServiceWindow = true
	h := newHarness(t, cfg)
	const uid = "BR.13491208655302741918"
	out := h.control(http.MethodPost, "/_sim/inbound", map[string]any{"phone_number_id": testPhoneID, "user_id": uid, "parent_user_id": "BR.ENT.118",
		"username": "ana.makes", "name": "Ana", "type": "text", "payload": map[string]any{"body": "oi"}}, 200)
	contact, msg := inboundOf(t, rc.next())
	if _, has := msg["from"]; has || msg["from_user_id"] != uid || msg["from_parent_user_id"] != "BR.ENT.118" || out["wa_id"] != nil {
		t.Fatalf("message %v, answer %v", msg, out)
	}
	if _, has := contact["wa_id"]; has || contact["user_id"] != uid || contact["parent_user_id"] != "BR.ENT.118" ||
		contact["profile"].(map[string]any)["username"] != "ana.makes" {
		t.Fatalf("contact %v", contact)
	}
	code, resp := h.send(map[string]any{"messaging_product": "whatsapp", "recipient": uid, "type": "text", "text": map[string]any{"body": "Olá"}})
	if code != 200 {
		t.Fatalf("send to user id: %d %v", code, resp)
	}
	c := resp["contacts"].([]any)[0].(map[string]any)
	if c["input"] != uid || c["user_id"] != uid || c["wa_id"] != nil {
		t.Errorf("answer contacts %v", c)
	}
	var st struct {
		Entry []struct {
			Changes []struct {
				Value struct {
					Statuses []map[string]any `json:"statuses"`
				} `json:"value"`
			} `json:"changes"`
		} `json:"entry"`
	}
	for _, want := range []string{"sent", "delivered", "read"} {
		_ = json.Unmarshal(rc.next().body, &st)
		s := st.Entry[0].Changes[0].Value.Statuses[0]
		if _, has := s["recipient_id"]; s["status"] != want || has || s["recipient_user_id"] != uid {
			t.Fatalf("status %v, want %s without recipient_id", s, want)
		}
	}
	if sent := h.sim.Sent(); len(sent) != 1 || sent[0].Recipient != uid || sent[0].UserID != uid || sent[0].WaID != "" || sent[0].To != "" {
		t.Errorf("Sent() = %+v", sent)
	}
	// Scripts apply to a user id too.
	h.sim.Script("BR.555", Outcome{FailSync: 131026})
	if code, resp := h.send(map[string]any{"messaging_product": "whatsapp", "recipient": "BR.555", "type": "text", "text": map[string]any{"body": "x"}}); code != 400 ||
		resp["error"].(map[string]any)["code"] != float64(131026) {
		t.Errorf("scripted user id: %d %v", code, resp)
	}
	// A user id nobody wrote from has no window.
	h.send(map[string]any{"messaging_product": "whatsapp", "recipient": "BR.999", "type": "text", "text": map[string]any{"body": "x"}})
	for _, want := range []string{"sent", "failed"} {
		_ = json.Unmarshal(rc.next().body, &st)
		if s := st.Entry[0].Changes[0].Value.Statuses[0]; s["status"] != want {
			t.Fatalf("status %v, want %s", s, want)
		}
	}
	code, resp = h.send(map[string]any{"messaging_product": "whatsapp", "recipient": "not-an-id", "type": "text", "text": map[string]any{"body": "x"}})
	if c, _, _, _ := graphErr(t, resp); code != 400 || c != 100 {
		t.Errorf("bad recipient: %d %d", code, c)
	}
}

// The window: 24 h after the last message, 72 h after an ad's message (then free); outside it
// 131047, asynchronously or (configured) at once.
func TestServiceWindowLengths(t *testing.T) {
	rc := newReceiver(t)
	clk := newFakeClock()
	cfg := webhookConfig(rc)
	cfg.Clock = clk.Now
	cfg.EnforceServiceWindow = true
	h := newHarness(t, cfg)
	text := func(to string) map[string]any {
		return map[string]any{"messaging_product": "whatsapp", "to": to, "type": "text", "text": map[string]any{"body": "hi"}}
	}
	statuses := func() []string {
		var got []string
		var st statusWebhook
		for {
			d := rc.next()
			_ = json.Unmarshal(d.body, &st)
			s := st.Entry[0].Changes[0].Value.Statuses[0]
			got = append(got, s.Status)
			if s.Status == "failed" || s.Status == "read" {
				return got
			}
		}
	}
	inject := func(in Inbound) {
		t.Helper()
		in.PhoneNumberID, in.Name, in.Type = testPhoneID, "Ana", "text"
		in.Payload = map[string]any{"body": "hi"}
		if _, err := h.sim.Inject(in); err != nil {
			t.Fatal(err)
		}
		rc.next()
	}
	inject(Inbound{From: "15551230001"})
	clk.Advance(24*time.Hour - time.Second)
	h.send(text("15551230001"))
	if got := statuses(); got[len(got)-1] != "read" {
		t.Fatalf("inside 24 h: %v", got)
	}
	clk.Advance(2 * time.Second)
	h.send(text("15551230001"))
	if got := statuses(); got[len(got)-1] != "failed" {
		t.Fatalf("after 24 h: %v", got)
	}
	out := h.control(http.MethodGet, "/_sim/window?phone_number_id="+testPhoneID+"&user=%2B15551230001", nil, 200)
	if out["open"] != false || out["last_inbound_at"] != "2025-01-01T00:00:00Z" || out["closes_at"] != "2025-01-02T00:00:00Z" || out["free_entry_until"] != nil {
		t.Errorf("window: %v", out)
	}

	inject(Inbound{From: "15551230002", Referral: map[string]any{"source_type": "ad", "ctwa_clid": "c"}})
	clk.Advance(71 * time.Hour)
	h.send(text("15551230002"))
	var st statusWebhook
	_ = json.Unmarshal(rc.next().body, &st)
	if p := st.Entry[0].Changes[0].Value.Statuses[0].Pricing; p == nil || p.Billable || p.Category != "service" {
		t.Errorf("entry-point pricing %+v", p)
	}
	if got := statuses(); got[len(got)-1] != "read" {
		t.Fatalf("71 h after an ad: %v", got)
	}
	h.control(http.MethodPost, "/_sim/config", map[string]any{"service_window_sync": true}, 200)
	clk.Advance(2 * time.Hour)
	code, resp := h.send(text("15551230002"))
	if c, _, _, _ := graphErr(t, resp); code != 400 || c != 131047 {
		t.Fatalf("73 h after an ad, sync: HTTP %d code %d", code, c)
	}
	// Templates are never subject to the window.
	if code, _ := h.send(templateSend("15551230002", "welcome", "en_US")); code != 200 {
		t.Fatalf("template: %d", code)
	}
	if cfg := h.control(http.MethodGet, "/_sim/config", nil, 200); cfg["enforce_service_window"] != true || cfg["service_window_sync"] != true {
		t.Errorf("config %v", cfg)
	}
}

// Number and user-id changes arrive as system messages naming the old and new identifiers; the
// handset and its window follow the person.
func TestIdentityChanges(t *testing.T) {
	rc := newReceiver(t)
	cfg := webhookConfig(rc)
	cfg.EnforceServiceWindow, cfg.ServiceWindowSync = true, true
	h := newHarness(t, cfg)
	if _, err := h.sim.InjectInboundMessage(Inbound{PhoneNumberID: testPhoneID, From: "15551234567", Name: "Ana", Type: "text", Payload: map[string]any{"body": "hi"}}); err != nil {
		t.Fatal(err)
	}
	rc.next()
	oldUID := UserIDFor("15551234567")
	out := h.control(http.MethodPost, "/_sim/change-number", map[string]any{"phone_number_id": testPhoneID, "user": "+1 555 123 4567", "new_number": "+1 555 999 0000"}, 200)
	msg := systemOf(t, rc.next())
	sys, _ := msg["system"].(map[string]any)
	newUID := UserIDFor("15559990000")
	if msg["type"] != "system" || msg["from"] != "15551234567" || msg["from_user_id"] != oldUID ||
		sys["type"] != "user_changed_number" || sys["wa_id"] != "15559990000" || sys["user_id"] != newUID || sys["previous_user_id"] != oldUID ||
		!strings.Contains(sys["body"].(string), "15559990000") {
		t.Fatalf("number change: %v", msg)
	}
	if out["wa_id"] != "15559990000" || out["user_id"] != newUID {
		t.Errorf("answer %v", out)
	}
	if code, resp := h.send(map[string]any{"messaging_product": "whatsapp", "to": "15559990000", "type": "text", "text": map[string]any{"body": "welcome back"}}); code != 200 {
		t.Fatalf("the window follows the new number: %d %v", code, resp)
	}
	if code, _ := h.send(map[string]any{"messaging_product": "whatsapp", "to": "15551234567", "type": "text", "text": map[string]any{"body": "x"}}); code != 400 {
		t.Errorf("the old number kept a window: %d", code)
	}
	drain(t, h, rc) // the statuses of the send above

	out = h.control(http.MethodPost, "/_sim/change-user-id", map[string]any{"phone_number_id": testPhoneID, "user": newUID, "new_user_id": "US.77"}, 200)
	msg = systemOf(t, rc.next())
	sys, _ = msg["system"].(map[string]any)
	if sys["type"] != "user_changed_user_id" || sys["user_id"] != "US.77" || sys["previous_user_id"] != newUID || msg["from_user_id"] != newUID || out["user_id"] != "US.77" {
		t.Fatalf("user id change: %v, answer %v", msg, out)
	}
	if code, resp := h.send(map[string]any{"messaging_product": "whatsapp", "recipient": "US.77", "type": "text", "text": map[string]any{"body": "x"}}); code != 200 {
		t.Errorf("send to the new user id: %d %v", code, resp)
	}
	hs := h.control(http.MethodGet, "/_sim/handsets", nil, 200)["data"].([]any)
	if len(hs) != 1 || hs[0].(map[string]any)["user_id"] != "US.77" || hs[0].(map[string]any)["wa_id"] != "15559990000" {
		t.Errorf("handsets %v", hs)
	}
	h.control(http.MethodPost, "/_sim/change-user-id", map[string]any{"phone_number_id": testPhoneID, "user": "US.nobody"}, 404)
	h.control(http.MethodPost, "/_sim/change-number", map[string]any{"phone_number_id": testPhoneID, "user": "US.77", "new_number": "x"}, 400)
}

// uploadBody builds a multipart upload.
func uploadBody(t *testing.T, fields map[string]string, filename, partType string, data []byte) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	if data != nil {
		h := make(map[string][]string)
		h["Content-Disposition"] = []string{`form-data; name="file"; filename="` + filename + `"`}
		h["Content-Type"] = []string{partType}
		p, _ := mw.CreatePart(h)
		_, _ = p.Write(data)
	}
	_ = mw.Close()
	return mw.FormDataContentType(), &buf
}

func (h *harness) raw(method, path, token, contentType string, body io.Reader) (int, []byte, http.Header) {
	h.t.Helper()
	req, _ := http.NewRequest(method, path, body)
	if !strings.HasPrefix(path, "http") {
		req, _ = http.NewRequest(method, h.base+path, body)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header
}

// Uploads are checked as the platform checks them; an uploaded id can be sent, looked up and
// downloaded with the token, and deleted.
func TestMediaUploadLookupDownload(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, Config{Clock: clk.Now})
	h.sim.AddNumber(Number{PhoneNumberID: "other-pnid", WabaID: "other-waba", DisplayPhoneNumber: "15550000000", AccessToken: "other-token"})
	png := bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 1000)
	upload := func(token string, fields map[string]string, partType string, data []byte) (int, map[string]any) {
		ct, body := uploadBody(t, fields, "pic.png", partType, data)
		code, b, _ := h.raw(http.MethodPost, "/v23.0/"+testPhoneID+"/media", token, ct, body)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return code, out
	}
	good := map[string]string{"messaging_product": "whatsapp", "type": "image/png"}
	code, out := upload(testToken, good, "image/png", png)
	id, _ := out["id"].(string)
	if code != 200 || id == "" {
		t.Fatalf("upload: %d %v", code, out)
	}
	for _, tc := range []struct {
		name   string
		token  string
		fields map[string]string
		data   []byte
		status int
		code   int
	}{
		{"no token", "", good, png, 401, 190},
		{"no messaging_product", testToken, map[string]string{"type": "image/png"}, png, 400, 100},
		{"no file", testToken, good, nil, 400, 100},
		{"gif", testToken, map[string]string{"messaging_product": "whatsapp", "type": "image/gif"}, png, 400, 131053},
		{"image over 5 MB", testToken, good, make([]byte, 5<<20+1), 400, 131053},
		{"sticker over 500 KB", testToken, map[string]string{"messaging_product": "whatsapp", "type": "image/webp"}, make([]byte, 500<<10+1), 400, 131053},
	} {
		code, out := upload(tc.token, tc.fields, "image/png", tc.data)
		if c, _, _, _ := graphErr(t, out); code != tc.status || c != tc.code {
			t.Errorf("%s: HTTP %d code %d, want %d/%d", tc.name, code, c, tc.status, tc.code)
		}
	}

	// Lookup: the token of the media's WABA only.
	if code, out, _ := h.do(http.MethodGet, "/v23.0/"+id, "other-token", nil); code != 400 || out["error"].(map[string]any)["error_subcode"] != float64(33) {
		t.Errorf("other WABA's token: %d %v", code, out)
	}
	if code, _, _ := h.do(http.MethodGet, "/v23.0/"+id, "", nil); code != 401 {
		t.Errorf("no token: %d", code)
	}
	code, info, _ := h.do(http.MethodGet, "/v23.0/"+id, testToken, nil)
	sum := sha256.Sum256(png)
	if code != 200 || info["sha256"] != hex.EncodeToString(sum[:]) || info["file_size"] != float64(len(png)) || info["mime_type"] != "image/png" || info["id"] != id {
		t.Fatalf("lookup: %d %v", code, info)
	}
	u := info["url"].(string)
	if code, _, _ := h.raw(http.MethodGet, u, "", "", nil); code != 401 {
		t.Errorf("download without token: %d", code)
	}
	if code, _, _ := h.raw(http.MethodGet, u, "other-token", "", nil); code != 401 {
		t.Errorf("download with another WABA's token: %d", code)
	}
	code, b, hdr := h.raw(http.MethodGet, u, testToken, "", nil)
	if code != 200 || !bytes.Equal(b, png) || hdr.Get("Content-Type") != "image/png" || hdr.Get("Content-Length") != "4000" {
		t.Fatalf("download: %d %q %v", code, hdr.Get("Content-Type"), len(b))
	}
	clk.Advance(MediaURLTTL)
	if code, _, _ := h.raw(http.MethodGet, u, testToken, "", nil); code != 404 {
		t.Errorf("download after 5 minutes: %d", code)
	}

	// Sending by id: known ids only.
	img := map[string]any{"messaging_product": "whatsapp", "to": "15551234567", "type": "image", "image": map[string]any{"id": id, "caption": "see"}}
	if code, out := h.send(img); code != 200 {
		t.Fatalf("send uploaded image: %d %v", code, out)
	}
	img["image"] = map[string]any{"id": "404404"}
	if code, out := h.send(img); code != 400 || out["error"].(map[string]any)["code"] != float64(131053) {
		t.Errorf("unknown media id: %d %v", code, out)
	}
	if code, out, _ := h.do(http.MethodDelete, "/v23.0/"+id, testToken, nil); code != 200 || out["success"] != true {
		t.Errorf("delete: %d %v", code, out)
	}
	if code, _, _ := h.do(http.MethodGet, "/v23.0/"+id, testToken, nil); code != 400 {
		t.Errorf("lookup after delete: %d", code)
	}
}

// Inbound media of 100 MB is generated as it is read: never stored, streamed with its length,
// and its bytes hash to the sha256 of the webhook.
func TestInboundMedia100MB(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 100 MB")
	}
	rc := newReceiver(t)
	h := newHarness(t, webhookConfig(rc))
	res, err := h.sim.Inject(Inbound{PhoneNumberID: testPhoneID, From: "15551234567", Type: "document", Payload: map[string]any{"filename": "big.pdf"}, MediaSize: 100 << 20})
	if err != nil {
		t.Fatal(err)
	}
	_, msg := inboundOf(t, rc.next())
	doc := msg["document"].(map[string]any)
	h.sim.mu.Lock()
	stored := h.sim.media[res.MediaID].data
	h.sim.mu.Unlock()
	if stored != nil || doc["id"] != res.MediaID || doc["filename"] != "big.pdf" {
		t.Fatalf("media stored (%d bytes) or payload %v", len(stored), doc)
	}
	_, info, _ := h.do(http.MethodGet, "/v23.0/"+res.MediaID, testToken, nil)
	req, _ := http.NewRequest(http.MethodGet, info["url"].(string), nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	hash := sha256.New()
	n, err := io.Copy(hash, resp.Body)
	want, _ := base64.StdEncoding.DecodeString(doc["sha256"].(string))
	if err != nil || n != 100<<20 || resp.ContentLength != 100<<20 || !bytes.Equal(hash.Sum(nil), want) || hex.EncodeToString(want) != res.SHA256 {
		t.Errorf("downloaded %d bytes (%v), Content-Length %d, sha256 match %v", n, err, resp.ContentLength, bytes.Equal(hash.Sum(nil), want))
	}
}

// Every non-template kind is accepted inside the window and recorded with its kind, content
// and quoted message; malformed ones are refused as the platform refuses them.
func TestSessionSends(t *testing.T) {
	h := newHarness(t, Config{})
	quoted := "wamid.Q"
	ct, body := uploadBody(t, map[string]string{"messaging_product": "whatsapp", "type": "image/webp"}, "s.webp", "image/webp", []byte("RIFF....WEBP"))
	_, b, _ := h.raw(http.MethodPost, "/v23.0/"+testPhoneID+"/media", testToken, ct, body)
	var up map[string]any
	_ = json.Unmarshal(b, &up)
	sticker := up["id"].(string)
	msg := func(kind string, content any) map[string]any {
		return map[string]any{"messaging_product": "whatsapp", "recipient_type": "individual", "to": "+15551234567", "context": map[string]any{"message_id": quoted}, "type": kind, kind: content}
	}
	good := []map[string]any{
		msg("text", map[string]any{"body": "hi", "preview_url": true}),
		msg("image", map[string]any{"link": "https://cdn.example.com/a.jpg", "caption": "c"}),
		msg("video", map[string]any{"link": "https://cdn.example.com/a.mp4"}),
		msg("audio", map[string]any{"link": "https://cdn.example.com/a.ogg"}),
		msg("document", map[string]any{"link": "https://cdn.example.com/a.pdf", "filename": "a.pdf", "caption": "c"}),
		msg("sticker", map[string]any{"id": sticker}),
		msg("location", map[string]any{"latitude": 1.5, "longitude": -2.5, "name": "n"}),
		msg("contacts", []any{map[string]any{"name": map[string]any{"formatted_name": "Bo"}}}),
		msg("reaction", map[string]any{"message_id": quoted, "emoji": ""}),
		msg("interactive", map[string]any{"type": "button", "body": map[string]any{"text": "Pick"}, "action": map[string]any{"buttons": []any{
			map[string]any{"type": "reply", "reply": map[string]any{"id": "a", "title": "A"}}, map[string]any{"type": "reply", "reply": map[string]any{"id": "b", "title": "B"}}}}}),
		msg("interactive", map[string]any{"type": "list", "body": map[string]any{"text": "Pick"}, "action": map[string]any{"button": "Slots", "sections": []any{
			map[string]any{"title": "S", "rows": []any{map[string]any{"id": "r1", "title": "R1", "description": "d"}}}}}}),
	}
	for _, m := range good {
		if code, out := h.send(m); code != 200 {
			t.Errorf("%s: %d %v", m["type"], code, out)
		}
	}
	sent := h.sim.Sent()
	if len(sent) != len(good) {
		t.Fatalf("%d sends recorded", len(sent))
	}
	for i, s := range sent {
		want, _ := json.Marshal(good[i][good[i]["type"].(string)])
		if s.Type != good[i]["type"] || s.ReplyTo != quoted || string(s.Content) != string(want) || s.WaID != "15551234567" {
			t.Errorf("sent %d = %+v", i, s)
		}
	}
	three := []any{}
	for _, id := range []string{"a", "b", "c", "d"} {
		three = append(three, map[string]any{"type": "reply", "reply": map[string]any{"id": id, "title": id}})
	}
	for _, tc := range []struct {
		name string
		m    map[string]any
		code int
	}{
		{"image with id and link", msg("image", map[string]any{"id": sticker, "link": "https://x/y"}), 100},
		{"audio caption", msg("audio", map[string]any{"link": "https://x/y.ogg", "caption": "c"}), 100},
		{"ftp link", msg("video", map[string]any{"link": "ftp://x/y.mp4"}), 131009},
		{"location without longitude", msg("location", map[string]any{"latitude": 1}), 100},
		{"latitude 91", msg("location", map[string]any{"latitude": 91, "longitude": 0}), 131009},
		{"card without name", msg("contacts", []any{map[string]any{}}), 100},
		{"reaction without message", msg("reaction", map[string]any{"emoji": "x"}), 100},
		{"four buttons", msg("interactive", map[string]any{"type": "button", "body": map[string]any{"text": "b"}, "action": map[string]any{"buttons": three}}), 131009},
		{"button title of 21", msg("interactive", map[string]any{"type": "button", "body": map[string]any{"text": "b"}, "action": map[string]any{"buttons": []any{
			map[string]any{"type": "reply", "reply": map[string]any{"id": "a", "title": strings.Repeat("t", 21)}}}}}), 131009},
		{"list without label", msg("interactive", map[string]any{"type": "list", "body": map[string]any{"text": "b"}, "action": map[string]any{"sections": []any{}}}), 100},
		{"interactive without body", msg("interactive", map[string]any{"type": "button", "action": map[string]any{}}), 100},
	} {
		code, out := h.send(tc.m)
		if c, _, _, _ := graphErr(t, out); code != 400 || c != tc.code {
			t.Errorf("%s: HTTP %d code %d, want 400/%d", tc.name, code, c, tc.code)
		}
	}
}

func TestMarkRead(t *testing.T) {
	h := newHarness(t, Config{})
	code, out := h.send(map[string]any{"messaging_product": "whatsapp", "status": "read", "message_id": "wamid.IN", "typing_indicator": map[string]any{"type": "text"}})
	if code != 200 || out["success"] != true {
		t.Fatalf("mark read: %d %v", code, out)
	}
	if code, _ := h.send(map[string]any{"messaging_product": "whatsapp", "status": "read"}); code != 400 {
		t.Errorf("without message_id: %d", code)
	}
	if got := h.control(http.MethodGet, "/_sim/read", nil, 200)["data"].([]any); len(got) != 1 || got[0] != "wamid.IN" {
		t.Errorf("read log %v", got)
	}
	if len(h.sim.Sent()) != 0 {
		t.Error("a read receipt was recorded as a send")
	}
}

func TestControlMediaAndInboundErrors(t *testing.T) {
	rc := newReceiver(t)
	h := newHarness(t, webhookConfig(rc))
	out := h.control(http.MethodPost, "/_sim/inbound", map[string]any{"phone_number_id": testPhoneID, "from": "15551234567", "type": "image", "media_size": 1234}, 200)
	rc.next()
	info := h.control(http.MethodGet, "/_sim/media?id="+out["media_id"].(string), nil, 200)
	if info["file_size"] != float64(1234) || info["sha256"] != out["sha256"] || info["uploaded"] != false {
		t.Errorf("media %v", info)
	}
	h.control(http.MethodGet, "/_sim/media?id=nope", nil, 404)
	h.control(http.MethodPost, "/_sim/inbound", map[string]any{"phone_number_id": testPhoneID, "type": "text"}, 400)
	h.control(http.MethodPost, "/_sim/inbound", map[string]any{"phone_number_id": testPhoneID, "user_id": "lowercase.1", "type": "text"}, 400)
	h.control(http.MethodPost, "/_sim/inbound", map[string]any{"phone_number_id": testPhoneID, "from": "1555", "type": "image", "payload": "x"}, 400)
	h.control(http.MethodGet, "/_sim/window?phone_number_id="+testPhoneID+"&user=1999", nil, 404)
}

// A username-only user who later writes with their number (and the same user id) is one
// handset: the number is linked, and the window opened by the first message is kept.
func TestUsernameOnlyThenNumberLinks(t *testing.T) {
	rc := newReceiver(t)
	clk := newFakeClock()
	cfg := webhookConfig(rc)
	cfg.Clock = clk.Now
	h := newHarness(t, cfg)
	const uid = "US.424242"
	if _, err := h.sim.Inject(Inbound{PhoneNumberID: testPhoneID, UserID: uid, Username: "bo.b", Type: "text", Payload: map[string]any{"body": "a"},
		Referral: map[string]any{"source_type": "ad"}}); err != nil {
		t.Fatal(err)
	}
	rc.next()
	clk.Advance(time.Hour)
	res, err := h.sim.Inject(Inbound{PhoneNumberID: testPhoneID, From: "15557654321", UserID: uid, Type: "text", Payload: map[string]any{"body": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	_, msg := inboundOf(t, rc.next())
	if msg["from"] != "15557654321" || msg["from_user_id"] != uid || res.UserID != uid {
		t.Fatalf("message %v", msg)
	}
	hs := h.sim.Handsets()
	if len(hs) != 1 || hs[0].UserID != uid || hs[0].WaID != "15557654321" || hs[0].Username != "bo.b" {
		t.Fatalf("handsets %+v", hs)
	}
	st, ok := h.sim.Window(testPhoneID, "+1 555 765 4321")
	start := newFakeClock().Now()
	if !ok || !st.Closes.Equal(start.Add(EntryPointWindow)) || !st.FreeEntryUntil.Equal(start.Add(EntryPointWindow)) || !st.LastInbound.Equal(start.Add(time.Hour)) || !st.Open {
		t.Errorf("window %+v, want the ad's 72 h and the last message an hour in", st)
	}
}
