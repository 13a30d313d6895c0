package simulator

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestSignupControlAndGraphEndpoints(t *testing.T) {
	rc := newReceiver(t)
	h := newHarness(t, Config{AppID: "42", WebhookURL: rc.srv.URL})

	code, su, _ := h.do(http.MethodPost, "/_sim/signup", "", map[string]any{"business_name": "Acme"})
	if code != 200 || su["code"] == "" || su["waba_id"] == "" || su["phone_number_id"] == "" {
		t.Fatalf("signup: %d %v", code, su)
	}
	wabaID, pnid, tok := su["waba_id"].(string), su["phone_number_id"].(string), su["access_token"].(string)

	// Meta's account_update follows a completed sign-up.
	d := rc.next()
	var env struct {
		Entry []struct {
			ID      string `json:"id"`
			Changes []struct {
				Field string         `json:"field"`
				Value map[string]any `json:"value"`
			} `json:"changes"`
		} `json:"entry"`
	}
	if err := json.Unmarshal(d.body, &env); err != nil || len(env.Entry) != 1 || env.Entry[0].ID != wabaID ||
		env.Entry[0].Changes[0].Field != "account_update" || env.Entry[0].Changes[0].Value["event"] != "PARTNER_ADDED" {
		t.Fatalf("account_update webhook: %s", d.body)
	}

	q := url.Values{"client_id": {"42"}, "client_secret": {testSecret}, "code": {su["code"].(string)}}
	code, out, _ := h.do(http.MethodGet, "/v23.0/oauth/access_token?"+q.Encode(), "", nil)
	if code != 200 || out["access_token"] != tok || out["token_type"] != "bearer" {
		t.Fatalf("exchange: %d %v", code, out)
	}
	code, out, _ = h.do(http.MethodGet, "/v23.0/oauth/access_token?"+q.Encode(), "", nil)
	if c, sub, msg, _ := graphErr(t, out); code != 400 || c != 100 || sub != 36009 || !strings.Contains(msg, "used") {
		t.Fatalf("reused code: %d %v", code, out)
	}

	// fields restricts the answer (id always included).
	code, out, _ = h.do(http.MethodGet, "/v23.0/"+pnid+"?fields=display_phone_number,quality_rating", tok, nil)
	if code != 200 || len(out) != 3 || out["id"] != pnid || out["quality_rating"] != "GREEN" ||
		!strings.HasPrefix(out["display_phone_number"].(string), "+1 555-") {
		t.Fatalf("number fields: %d %v", code, out)
	}

	code, out, _ = h.do(http.MethodGet, "/v23.0/"+wabaID+"/subscribed_apps", tok, nil)
	if code != 200 || len(out["data"].([]any)) != 0 {
		t.Fatalf("subscribed apps before: %d %v", code, out)
	}
	// No webhook for the new WABA before an app subscribes.
	if _, err := h.sim.InjectInboundMessage(Inbound{PhoneNumberID: pnid, From: "15551234567", Name: "Ana", Type: "text", Payload: map[string]any{"body": "hi"}}); !errors.Is(err, ErrNotSubscribed) {
		t.Fatalf("inbound before subscription: %v", err)
	}
	rc.none()
	if code, out, _ = h.do(http.MethodPost, "/v23.0/"+wabaID+"/subscribed_apps", tok, nil); code != 200 || out["success"] != true {
		t.Fatalf("subscribe: %d %v", code, out)
	}
	code, out, _ = h.do(http.MethodGet, "/v23.0/"+wabaID+"/subscribed_apps", tok, nil)
	if data := out["data"].([]any); code != 200 || len(data) != 1 ||
		data[0].(map[string]any)["whatsapp_business_api_data"].(map[string]any)["id"] != "42" {
		t.Fatalf("subscribed apps after: %d %v", code, out)
	}
	if _, err := h.sim.InjectInboundMessage(Inbound{PhoneNumberID: pnid, From: "15551234567", Name: "Ana", Type: "text", Payload: map[string]any{"body": "hi"}}); err != nil {
		t.Fatalf("inbound after subscription: %v", err)
	}
	if d := rc.next(); !strings.Contains(string(d.body), `"phone_number_id":"`+pnid+`"`) {
		t.Fatalf("inbound webhook %s", d.body)
	}

	code, out, _ = h.do(http.MethodPost, "/v23.0/"+pnid+"/register", tok, map[string]any{"messaging_product": "whatsapp"})
	if c, _, _, _ := graphErr(t, out); code != 400 || c != 100 {
		t.Fatalf("register without pin: %d %v", code, out)
	}
	body := map[string]any{"messaging_product": "whatsapp", "pin": "246810"}
	if code, out, _ = h.do(http.MethodPost, "/v23.0/"+pnid+"/register", tok, body); code != 200 || out["success"] != true {
		t.Fatalf("register: %d %v", code, out)
	}
	body["pin"] = "000000"
	code, out, _ = h.do(http.MethodPost, "/v23.0/"+pnid+"/register", tok, body)
	if c, _, msg, _ := graphErr(t, out); code != 400 || c != 133005 || !strings.HasPrefix(msg, "(#133005)") {
		t.Fatalf("wrong pin: %d %v", code, out)
	}
	code, out, _ = h.do(http.MethodPost, "/v23.0/"+pnid+"/register", testToken, body)
	if c, _, _, _ := graphErr(t, out); code != 401 || c != 190 {
		t.Fatalf("another business's token: %d %v", code, out)
	}

	// A quality change is reported to the subscribed app and read back from the number.
	if code, _, _ = h.do(http.MethodPost, "/_sim/quality", "", map[string]any{"phone_number_id": pnid, "quality_rating": "red",
		"messaging_limit_tier": "TIER_250", "event": "DOWNGRADE"}); code != 200 {
		t.Fatalf("quality: %d", code)
	}
	if d := rc.next(); !strings.Contains(string(d.body), `"field":"phone_number_quality_update"`) ||
		!strings.Contains(string(d.body), `"current_limit":"TIER_250"`) || !strings.Contains(string(d.body), `"event":"DOWNGRADE"`) {
		t.Fatalf("quality webhook %s", d.body)
	}
	code, out, _ = h.do(http.MethodGet, "/v23.0/"+pnid+"?fields=quality_rating,messaging_limit_tier", tok, nil)
	if code != 200 || out["quality_rating"] != "RED" || out["messaging_limit_tier"] != "TIER_250" {
		t.Fatalf("number after the quality change: %d %v", code, out)
	}
	if code, _, _ = h.do(http.MethodPost, "/_sim/quality", "", map[string]any{"phone_number_id": "nope"}); code != 404 {
		t.Fatalf("quality of an unknown number: %d", code)
	}

	code, out, _ = h.do(http.MethodPost, "/_sim/codes", "", map[string]any{"access_token": testToken})
	if code != 200 || out["code"] == "" {
		t.Fatalf("code for an existing number: %d %v", code, out)
	}
	if code, _, _ = h.do(http.MethodPost, "/_sim/codes", "", map[string]any{"access_token": "nope"}); code != 404 {
		t.Fatalf("code for an unknown token: %d", code)
	}
}
