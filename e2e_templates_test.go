package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"gateway/server/servertest"
	"gateway/store/storetest"
)

// richE2E is the built binary serving one live account over the simulator, seeded with
// `platform-sim --seed` (the default and the rich templates) and synced.
type richE2E struct {
	t       *testing.T
	simBase string
	api     *servertest.Contract
	key     string
}

func newRichE2E(t *testing.T) *richE2E {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	simAddr, gwAddr := freeAddr(t), freeAddr(t)
	env := []string{
		"DATABASE_URL=" + storetest.DSN(t),
		"GATEWAY_ADDR=" + gwAddr,
		"GATEWAY_SECRET_KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
		"PLATFORM_BASE_URL=http://" + simAddr + "/v23.0",
		"PLATFORM_APP_SECRET=e2e-app-secret",
		"PLATFORM_SIM_ADDR=" + simAddr,
		"PLATFORM_SIM_WEBHOOK_URL=http://" + gwAddr + "/platform/webhook",
		"LOG_LEVEL=warn",
	}
	startProcess(t, env, "platform-sim", "--seed")
	startProcess(t, env, "serve")
	waitHTTP(t, "http://"+gwAddr+"/readyz", 30*time.Second)
	waitHTTP(t, "http://"+simAddr+"/_sim/config", 10*time.Second)
	acct := adminJSON(t, env, "account", "create", "--name", "Rich Ltd", "--email", "rich@example.com")
	id := fmt.Sprint(int64(acct["id"].(float64)))
	key := adminJSON(t, env, "key", "create", "--account", id, "--mode", "live")["key"].(string)
	adminJSON(t, append(env[:len(env):len(env)], "GATEWAY_ADMIN_ACCESS_TOKEN="+devNumber.AccessToken), "number", "connect", "--account", id, "--waba-id", devNumber.WabaID,
		"--phone-number-id", devNumber.PhoneNumberID, "--phone-number", devNumber.DisplayPhoneNumber,
		"--display-name", "Rich")
	adminJSON(t, env, "templates", "sync", "--account", id)
	return &richE2E{t: t, simBase: "http://" + simAddr, api: servertest.NewContract(t, "http://"+gwAddr), key: key}
}

func (e *richE2E) do(method, path string, body any) *servertest.Response {
	e.t.Helper()
	resp, err := e.api.Do(servertest.Request{Method: method, Path: path, Key: e.key, Body: body})
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// sim calls the simulator's control API and decodes its answer into out (when not nil).
func (e *richE2E) sim(method, path string, body, out any) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.simBase+path, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			e.t.Fatal(err)
		}
	}
}

type simSent struct {
	TemplateName string          `json:"template_name"`
	Components   json.RawMessage `json:"components"`
}

func (e *richE2E) sent() []simSent {
	e.t.Helper()
	var out struct{ Data []simSent }
	e.sim(http.MethodGet, "/_sim/sent", nil, &out)
	return out.Data
}

// compactJSON is s without insignificant whitespace, for comparing JSON bytes.
func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return b.String()
}

// TestE2ERichTemplates sends every kind of rich template through the built binary and checks
// the exact components the simulator received; every rule a send can break is a 422 with no
// platform call; a template changed on the platform after the last sync comes back as the
// platform's 502; GET /templates lists header_format and buttons.
func TestE2ERichTemplates(t *testing.T) {
	e := newRichE2E(t)
	const to = "15551234567"

	t.Run("listing", func(t *testing.T) {
		var list struct {
			Data struct {
				Templates []struct {
					Name         string `json:"name"`
					HeaderFormat string `json:"header_format"`
					Buttons      []struct {
						Index      int    `json:"index"`
						Type       string `json:"type"`
						Text       string `json:"text"`
						TakesValue bool   `json:"takes_value"`
					} `json:"buttons"`
					Unsupported []string `json:"unsupported"`
				} `json:"templates"`
			} `json:"data"`
		}
		r := e.do(http.MethodGet, "/v1/templates", nil)
		r.JSON(t, &list)
		if len(list.Data.Templates) != 14 {
			t.Fatalf("%d templates listed, want the 14 approved seeds", len(list.Data.Templates))
		}
		// Every listed template says its header format and its buttons ([] when none).
		var raw struct {
			Data struct {
				Templates []map[string]any `json:"templates"`
			} `json:"data"`
		}
		r.JSON(t, &raw)
		for _, tp := range raw.Data.Templates {
			if _, ok := tp["buttons"].([]any); !ok || tp["header_format"] == nil {
				t.Errorf("listed without header_format or buttons: %v", tp)
			}
		}
		got := map[string]string{}
		for _, tp := range list.Data.Templates {
			var bs []string
			for _, b := range tp.Buttons {
				bs = append(bs, fmt.Sprintf("%d:%s:%s:%v", b.Index, b.Type, b.Text, b.TakesValue))
			}
			got[tp.Name] = tp.HeaderFormat + " [" + strings.Join(bs, " ") + "] " + strings.Join(tp.Unsupported, ",")
		}
		want := map[string]string{
			"spring_sale":      "IMAGE [0:URL:Shop now:true 1:QUICK_REPLY:Stop promotions:true] ",
			"product_demo":     "VIDEO [0:URL:Visit us:false] ",
			"invoice_ready":    "DOCUMENT [] ",
			"store_directions": "LOCATION [] ",
			"coupon_offer":     "NONE [0:COPY_CODE::true 1:QUICK_REPLY:Not interested:true] ",
			"login_code":       "NONE [0:OTP:Copy code:true] ",
			"holiday_carousel": "NONE [] CAROUSEL",
			"booking_flow":     "NONE [0:FLOW:Book now:false] FLOW button",
			"welcome":          "NONE [0:QUICK_REPLY:Stop promotions:true] ",
			"shipping_update":  "TEXT [] ",
		}
		for name, w := range want {
			if got[name] != w {
				t.Errorf("%s: listed %q, want %q", name, got[name], w)
			}
		}
	})

	t.Run("each kind has Meta's component shape", func(t *testing.T) {
		cases := []struct {
			name string
			body map[string]any
			want string // the components the simulator received
		}{
			{"image by link, URL suffix, quick-reply payload", map[string]any{"template_name": "spring_sale", "body_variables": []string{"Ana"},
				"header_media":     map[string]any{"type": "image", "link": "https://cdn.example.com/spring.jpg"},
				"button_variables": []map[string]any{{"index": 1, "value": "STOP_PROMO"}, {"index": 0, "value": "SPRING24"}}},
				`[{"type":"header","parameters":[{"type":"image","image":{"link":"https://cdn.example.com/spring.jpg"}}]},
				  {"type":"body","parameters":[{"type":"text","text":"Ana"}]},
				  {"type":"button","sub_type":"url","index":"0","parameters":[{"type":"text","text":"SPRING24"}]},
				  {"type":"button","sub_type":"quick_reply","index":"1","parameters":[{"type":"payload","payload":"STOP_PROMO"}]}]`},
			{"image by id, payload left out", map[string]any{"template_name": "spring_sale", "body_variables": []string{"Ana"},
				"header_media":     map[string]any{"type": "image", "id": "1029384756"},
				"button_variables": []map[string]any{{"index": 0, "value": "SPRING24"}}},
				`[{"type":"header","parameters":[{"type":"image","image":{"id":"1029384756"}}]},
				  {"type":"body","parameters":[{"type":"text","text":"Ana"}]},
				  {"type":"button","sub_type":"url","index":"0","parameters":[{"type":"text","text":"SPRING24"}]}]`},
			{"video", map[string]any{"template_name": "product_demo", "body_variables": []string{"Kettle"},
				"header_media": map[string]any{"type": "video", "link": "https://cdn.example.com/demo.mp4"}},
				`[{"type":"header","parameters":[{"type":"video","video":{"link":"https://cdn.example.com/demo.mp4"}}]},
				  {"type":"body","parameters":[{"type":"text","text":"Kettle"}]}]`},
			{"document with filename", map[string]any{"template_name": "invoice_ready", "body_variables": []string{"INV-1001"},
				"header_media": map[string]any{"type": "document", "id": "55", "filename": "INV-1001.pdf"}},
				`[{"type":"header","parameters":[{"type":"document","document":{"id":"55","filename":"INV-1001.pdf"}}]},
				  {"type":"body","parameters":[{"type":"text","text":"INV-1001"}]}]`},
			{"location", map[string]any{"template_name": "store_directions",
				"header_location": map[string]any{"latitude": -23.5614, "longitude": -46.6559, "name": "Acme Paulista", "address": "Av. Paulista 1000"}},
				`[{"type":"header","parameters":[{"type":"location","location":{"latitude":-23.5614,"longitude":-46.6559,"name":"Acme Paulista","address":"Av. Paulista 1000"}}]}]`},
			{"coupon code", map[string]any{"template_name": "coupon_offer", "body_variables": []string{"Ana"},
				"button_variables": []map[string]any{{"index": 0, "value": "SAVE20"}}},
				`[{"type":"body","parameters":[{"type":"text","text":"Ana"}]},
				  {"type":"button","sub_type":"copy_code","index":"0","parameters":[{"type":"coupon_code","coupon_code":"SAVE20"}]}]`},
			{"OTP auto-fill", map[string]any{"template_name": "login_code", "body_variables": []string{"482913"}},
				`[{"type":"body","parameters":[{"type":"text","text":"482913"}]},
				  {"type":"button","sub_type":"url","index":"0","parameters":[{"type":"text","text":"482913"}]}]`},
		}
		for _, tc := range cases {
			tc.body["destination"] = to
			r := e.do(http.MethodPost, "/v1/messages/template", tc.body)
			if r.Status != http.StatusOK {
				t.Errorf("%s: %d %s", tc.name, r.Status, r.Body)
				continue
			}
			sent := e.sent()
			last := sent[len(sent)-1]
			if last.TemplateName != tc.body["template_name"] || string(last.Components) != compactJSON(t, tc.want) {
				t.Errorf("%s: simulator received %s %s\nwant %s", tc.name, last.TemplateName, last.Components, compactJSON(t, tc.want))
			}
		}
	})

	t.Run("422 before any platform call", func(t *testing.T) {
		media := map[string]any{"type": "image", "link": "https://cdn.example.com/a.jpg"}
		spring := func(extra map[string]any) map[string]any {
			b := map[string]any{"destination": to, "template_name": "spring_sale", "body_variables": []string{"Ana"},
				"header_media": media, "button_variables": []map[string]any{{"index": 0, "value": "X"}}}
			for k, v := range extra {
				if v == nil {
					delete(b, k)
				} else {
					b[k] = v
				}
			}
			return b
		}
		cases := []struct {
			name  string
			body  map[string]any
			field string
			says  string // part of the message for field
		}{
			{"media header without header_media", spring(map[string]any{"header_media": nil}), "header_media",
				"the template's header is an IMAGE: give header_media with type image"},
			{"wrong media type", spring(map[string]any{"header_media": map[string]any{"type": "video", "id": "1"}}), "header_media.type",
				"give header_media with type image, not video"},
			{"header_media on a template without a media header", map[string]any{"destination": to, "template_name": "order_confirmation",
				"body_variables": []string{"Ana", "X"}, "header_media": media}, "header_media", "the template has no header"},
			{"header_location on an image template", spring(map[string]any{"header_location": map[string]any{"latitude": 1, "longitude": 2}}),
				"header_location", "give header_media with type image"},
			{"latitude out of range", map[string]any{"destination": to, "template_name": "store_directions",
				"header_location": map[string]any{"latitude": 91, "longitude": 0}}, "header_location.latitude", ""},
			{"LOCATION without header_location", map[string]any{"destination": to, "template_name": "store_directions"}, "header_location",
				"the template's header is a LOCATION: give header_location"},
			{"URL button without its value", spring(map[string]any{"button_variables": nil}), "button_variables",
				`button 0 (URL "Shop now") needs a value in button_variables: the URL suffix for {{1}}`},
			{"COPY_CODE without its value", map[string]any{"destination": to, "template_name": "coupon_offer", "body_variables": []string{"Ana"}},
				"button_variables", `button 0 (COPY_CODE "") needs a value in button_variables: the coupon code`},
			{"value for a button that takes none", map[string]any{"destination": to, "template_name": "product_demo", "body_variables": []string{"K"},
				"header_media": map[string]any{"type": "video", "id": "1"}, "button_variables": []map[string]any{{"index": 0, "value": "x"}}},
				"button_variables.0", `button 0 (URL "Visit us") takes no value`},
			{"index the template does not have", spring(map[string]any{"button_variables": []map[string]any{{"index": 0, "value": "X"}, {"index": 2, "value": "Y"}}}),
				"button_variables.1.index", "the template has 2 buttons (indexes 0 to 1); there is no button 2"},
			{"non-https link", spring(map[string]any{"header_media": map[string]any{"type": "image", "link": "http://cdn.example.com/a.jpg"}}),
				"header_media.link", ""},
			{"link and id", spring(map[string]any{"header_media": map[string]any{"type": "image", "link": "https://cdn.example.com/a.jpg", "id": "1"}}),
				"header_media", "give exactly one of link and id"},
			{"filename on an image", spring(map[string]any{"header_media": map[string]any{"type": "image", "id": "1", "filename": "a.jpg"}}),
				"header_media.filename", "document header only"},
			{"coupon code over 15 characters", map[string]any{"destination": to, "template_name": "coupon_offer", "body_variables": []string{"Ana"},
				"button_variables": []map[string]any{{"index": 0, "value": "SAVE20SAVE20SAVE20"}}}, "button_variables.0.value",
				"a coupon code of at most 15 characters, got 18"},
			{"unsupported CAROUSEL", map[string]any{"destination": to, "template_name": "holiday_carousel"}, "template_name",
				`the template "holiday_carousel" has CAROUSEL, which the API cannot send yet`},
			{"unsupported FLOW button", map[string]any{"destination": to, "template_name": "booking_flow"}, "template_name",
				"has FLOW button, which the API cannot send yet"},
			{"client_reference over 256", map[string]any{"destination": to, "template_name": "login_code", "body_variables": []string{"1"},
				"client_reference": strings.Repeat("r", 257)}, "client_reference", ""},
		}
		before := len(e.sent())
		for _, tc := range cases {
			r := e.do(http.MethodPost, "/v1/messages/template", tc.body)
			var env struct {
				Code   string              `json:"code"`
				Errors map[string][]string `json:"errors"`
			}
			r.JSON(t, &env)
			if r.Status != http.StatusUnprocessableEntity || env.Code != "validation_failed" {
				t.Errorf("%s: %d %s", tc.name, r.Status, r.Body)
				continue
			}
			msgs, ok := env.Errors[tc.field]
			if !ok || (tc.says != "" && !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, tc.says) })) {
				t.Errorf("%s: errors %v, want %s saying %q", tc.name, env.Errors, tc.field, tc.says)
			}
		}
		if after := len(e.sent()); after != before {
			t.Fatalf("the platform got %d sends from invalid requests", after-before)
		}
	})

	t.Run("a template changed on the platform after the sync: the platform's reason as a 502", func(t *testing.T) {
		// order_confirmation gains an IMAGE header, shipping_update a URL button with {{1}}; the
		// gateway, not re-synced, sends them as before.
		change := []map[string]any{
			{"id": "1094411223344001", "name": "order_confirmation", "language": "en_US", "status": "APPROVED", "category": "UTILITY",
				"components": []any{map[string]any{"type": "HEADER", "format": "IMAGE"},
					map[string]any{"type": "BODY", "text": "Hi {{1}}, your order {{2}} is confirmed."}}},
			{"id": "1094411223344003", "name": "shipping_update", "language": "en_US", "status": "APPROVED", "category": "UTILITY",
				"components": []any{map[string]any{"type": "HEADER", "format": "TEXT", "text": "Order {{1}} shipped"},
					map[string]any{"type": "BODY", "text": "Your package is on its way and should arrive by {{1}}."},
					map[string]any{"type": "BUTTONS", "buttons": []any{map[string]any{"type": "URL", "text": "Track", "url": "https://t.example/{{1}}"}}}}},
		}
		e.sim(http.MethodPost, "/_sim/templates", map[string]any{"waba_id": devNumber.WabaID, "templates": change}, nil)
		for _, tc := range []struct {
			body map[string]any
			says string
		}{
			{map[string]any{"destination": to, "template_name": "order_confirmation", "body_variables": []string{"Ana", "ORD-1"}},
				"The platform rejected the send: header: Format mismatch, expected IMAGE, received UNKNOWN (code 132012)"},
			{map[string]any{"destination": to, "template_name": "shipping_update", "header_variables": []string{"ORD-1"}, "body_variables": []string{"Friday"}},
				"The platform rejected the send: buttons: Button at index 0 of type Url requires a parameter (code 131008)"},
		} {
			r := e.do(http.MethodPost, "/v1/messages/template", tc.body)
			var env struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			}
			r.JSON(t, &env)
			if r.Status != http.StatusBadGateway || env.Code != "platform_rejected" || env.Message != tc.says {
				t.Errorf("%v: %d %s, want 502 %q", tc.body["template_name"], r.Status, r.Body, tc.says)
			}
		}
	})
}
