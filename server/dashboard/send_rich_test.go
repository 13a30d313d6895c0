package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"gateway/platform/simulator"
	"gateway/server/servertest"
	"gateway/store"
)

// richPanel is a signed-in owner whose number has the simulator's rich templates synced, and
// the template ids by name.
func richPanel(t *testing.T) (*servertest.Env, *user, map[string]int64) {
	t.Helper()
	env := reportsEnv(t)
	a := signUp(t, env, "Acme", "owner@acme.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	conn := env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Acme"}})
	env.Sim.SeedTemplates(conn.WabaID, simulator.RichTemplates())
	if _, err := env.Server.SyncTemplates(context.Background(), acc); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	rows, err := env.Store.DB().Query(`SELECT name, id FROM templates WHERE account_id = $1 AND language = 'en_US'`, acc)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		var id int64
		rows.Scan(&n, &id)
		ids[n] = id
	}
	return env, a, ids
}

// fieldError is the text of the form's error paragraph with the id, "" when there is none.
func fieldError(body, id string) string {
	m := regexp.MustCompile(`<p class="field-error" id="` + regexp.QuoteMeta(id) + `">([^<]*)</p>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return b.String()
}

// The panel sends rich templates through the API's send path: the form shows only the inputs
// the chosen template takes (media link or id, a document's file name, a location, each
// button's value; the OTP button filled from body variable 1), the preview renders them, and
// the platform receives exactly the components an API send of the same values produces.
func TestPanelSendRichTemplates(t *testing.T) {
	env, a, ids := richPanel(t)
	inputs := regexp.MustCompile(`<input id="[^"]+" name="([^"]+)"`)
	formOf := func(name string) (string, []string) {
		t.Helper()
		p := a.get(fmt.Sprintf("/dashboard/send?template=%d", ids[name]))
		if p.Status != http.StatusOK {
			t.Fatalf("%s form: %d", name, p.Status)
		}
		var names []string
		for _, m := range inputs.FindAllStringSubmatch(p.Body, -1) {
			names = append(names, m[1])
		}
		return p.Body, names
	}
	cases := []struct {
		template string
		inputs   string // the form's visible inputs after destination, name and campaign
		form     url.Values
		want     string // the components the simulator received
	}{
		{"spring_sale", "media_link media_id body button_0 button_1",
			url.Values{"media_link": {"https://cdn.example.com/spring.jpg"}, "body": {"Ana"}, "button_0": {"SPRING24"}, "button_1": {"STOP_PROMO"}},
			`[{"type":"header","parameters":[{"type":"image","image":{"link":"https://cdn.example.com/spring.jpg"}}]},
			  {"type":"body","parameters":[{"type":"text","text":"Ana"}]},
			  {"type":"button","sub_type":"url","index":"0","parameters":[{"type":"text","text":"SPRING24"}]},
			  {"type":"button","sub_type":"quick_reply","index":"1","parameters":[{"type":"payload","payload":"STOP_PROMO"}]}]`},
		{"invoice_ready", "media_link media_id media_filename body",
			url.Values{"media_id": {"55"}, "media_filename": {"INV-1001.pdf"}, "body": {"INV-1001"}},
			`[{"type":"header","parameters":[{"type":"document","document":{"id":"55","filename":"INV-1001.pdf"}}]},
			  {"type":"body","parameters":[{"type":"text","text":"INV-1001"}]}]`},
		{"store_directions", "latitude longitude location_name location_address",
			url.Values{"latitude": {"-23.5614"}, "longitude": {"-46.6559"}, "location_name": {"Acme Paulista"}, "location_address": {"Av. Paulista 1000"}},
			`[{"type":"header","parameters":[{"type":"location","location":{"latitude":-23.5614,"longitude":-46.6559,"name":"Acme Paulista","address":"Av. Paulista 1000"}}]}]`},
		{"coupon_offer", "body button_0 button_1",
			url.Values{"body": {"Ana"}, "button_0": {"SAVE20"}},
			`[{"type":"body","parameters":[{"type":"text","text":"Ana"}]},
			  {"type":"button","sub_type":"copy_code","index":"0","parameters":[{"type":"coupon_code","coupon_code":"SAVE20"}]}]`},
		{"login_code", "body",
			url.Values{"body": {"482913"}},
			`[{"type":"body","parameters":[{"type":"text","text":"482913"}]},
			  {"type":"button","sub_type":"url","index":"0","parameters":[{"type":"text","text":"482913"}]}]`},
	}
	for i, tc := range cases {
		body, names := formOf(tc.template)
		if got := strings.Join(names[3:], " "); got != tc.inputs {
			t.Errorf("%s form inputs %q, want %q", tc.template, got, tc.inputs)
		}
		if tc.template == "login_code" && !strings.Contains(body, "The one-time password button carries body variable 1.") {
			t.Errorf("login_code form does not say the code fills the button")
		}
		form := url.Values{"template": {fmt.Sprint(ids[tc.template])}, "key": {find(t, reFormKey, body)},
			"destination": {fmt.Sprintf("551198765432%d", i)}}
		if strings.Contains(tc.inputs, "media") {
			form.Set("media_type", find(t, regexp.MustCompile(`name="media_type" value="([a-z]+)"`), body))
		}
		for k, v := range tc.form {
			form[k] = v
		}
		p := a.post("/dashboard/send", form)
		if p.Status != http.StatusSeeOther {
			t.Errorf("%s: %d\n%s", tc.template, p.Status, p.Body)
			continue
		}
		sent := env.Sim.Sent()
		if len(sent) != i+1 {
			t.Fatalf("%s: %d sends at the simulator, want %d", tc.template, len(sent), i+1)
		}
		last := sent[i]
		if last.TemplateName != tc.template || string(last.Components) != compact(t, tc.want) {
			t.Errorf("%s: the simulator received %s %s\nwant %s", tc.template, last.TemplateName, last.Components, compact(t, tc.want))
		}
	}
	var panel int
	env.Store.DB().Get(&panel, `SELECT count(*) FROM messages WHERE source = 'panel'`)
	if panel != len(cases) {
		t.Fatalf("%d panel messages recorded, want %d", panel, len(cases))
	}

	// The preview renders the header, the body and each button with its value.
	q := url.Values{"template": {fmt.Sprint(ids["spring_sale"])}, "media_link": {"https://cdn.example.com/spring.jpg"},
		"body": {"Ana"}, "button_0": {"SPRING24"}, "button_1": {"STOP_PROMO"}}
	p := a.get("/dashboard/send?" + q.Encode())
	for _, want := range []string{`<p class="preview-header" id="preview-header">Image: https://cdn.example.com/spring.jpg</p>`,
		"Hi Ana, our spring sale is on", "<li>Button 1 “Shop now” → https://shop.example.com/sale/SPRING24</li>",
		"<li>Button 2 “Stop promotions” (payload STOP_PROMO)</li>", `value="https://cdn.example.com/spring.jpg"`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("spring_sale preview lacks %s", want)
		}
	}
	q = url.Values{"template": {fmt.Sprint(ids["store_directions"])}, "latitude": {"-23.5614"}, "longitude": {"-46.6559"},
		"location_name": {"Acme Paulista"}, "location_address": {"Av. Paulista 1000"}}
	if p := a.get("/dashboard/send?" + q.Encode()); !strings.Contains(p.Body, "Location: Acme Paulista, Av. Paulista 1000 (-23.5614, -46.6559)") {
		t.Errorf("store_directions preview:\n%s", p.Body)
	}
	q = url.Values{"template": {fmt.Sprint(ids["login_code"])}, "body": {"482913"}}
	if p := a.get("/dashboard/send?" + q.Encode()); !strings.Contains(p.Body, "<li>Button 1 “Copy code”: 482913</li>") {
		t.Errorf("login_code preview:\n%s", p.Body)
	}
}

// The API's refusals of a rich send show on the panel's form next to the input they are about
// (the schema's rules and the template's, as POST /v1/messages/template answers them), the
// values stay in the form, and nothing reaches the platform.
func TestPanelSendRichRefusals(t *testing.T) {
	env, a, ids := richPanel(t)
	send := func(template string, vals url.Values) page {
		t.Helper()
		form := url.Values{"template": {fmt.Sprint(ids[template])}, "key": {"k-" + template + vals.Encode()}, "destination": {"5511987654321"}}
		for k, v := range vals {
			form[k] = v
		}
		p := a.post("/dashboard/send", form)
		if p.Status != http.StatusUnprocessableEntity {
			t.Fatalf("%s %v: %d, want 422\n%s", template, vals, p.Status, p.Body)
		}
		return p
	}
	type want struct{ id, says string }
	cases := []struct {
		template string
		form     url.Values
		wants    []want
	}{
		{"spring_sale", url.Values{"media_type": {"image"}, "body": {"Ana"}},
			[]want{{"s-button-0-error", `the template's button 0 (URL "Shop now") needs a value in button_variables: the URL suffix for {{1}}`}}},
		{"spring_sale", url.Values{"media_type": {"image"}, "media_link": {"http://cdn.example.com/a.jpg"}, "body": {"Ana"}, "button_0": {"X"}},
			[]want{{"s-media-link-error", "a public https:// link"}}},
		{"spring_sale", url.Values{"media_type": {"image"}, "media_link": {"https://cdn.example.com/a.jpg"}, "media_id": {"77"},
			"body": {"Ana"}, "button_0": {"X"}}, nil}, // header error checked below
		{"coupon_offer", url.Values{"body": {"Ana"}, "button_0": {"SIXTEEN-CHARS-XX"}},
			[]want{{"s-button-0-error", "takes a coupon code of at most 15 characters, got 16"}}},
		{"store_directions", url.Values{"latitude": {"north"}, "longitude": {"-46.6559"}},
			[]want{{"s-latitude-error", "must be a number"}}},
		{"store_directions", url.Values{"latitude": {"91"}, "longitude": {"-46.6559"}, "location_name": {"Acme"}},
			[]want{{"s-latitude-error", "number must be at most 90"}}},
		{"invoice_ready", url.Values{"media_type": {"document"}, "media_id": {"55"}, "body": {"INV-1", "extra"}},
			[]want{{"", "the template's body takes 1 variable, got 2"}}},
	}
	for _, tc := range cases {
		p := send(tc.template, tc.form)
		for _, w := range tc.wants {
			got := fieldError(p.Body, w.id)
			if w.id == "" {
				got = html.UnescapeString(p.Body)
			}
			if !strings.Contains(got, w.says) {
				t.Errorf("%s %v: %s = %q, want it to say %q", tc.template, tc.form, w.id, got, w.says)
			}
		}
		// The values typed stay in the form.
		for k, vs := range tc.form {
			if k != "media_type" && !strings.Contains(p.Body, `value="`+html.EscapeString(vs[0])+`"`) {
				t.Errorf("%s: the form lost %s=%q", tc.template, k, vs[0])
			}
		}
	}
	// Both a link and an id: the header's part of the form says so, marked as an alert.
	p := send("spring_sale", cases[2].form)
	if !strings.Contains(p.Body, `<p class="field-error" role="alert">give exactly one of link and id</p>`) {
		t.Errorf("link and id:\n%s", p.Body)
	}
	// The form's fields carry aria-invalid and point at their error.
	p = send("coupon_offer", cases[3].form)
	if !strings.Contains(p.Body, `aria-describedby="s-button-0-error" aria-invalid="true"`) {
		t.Errorf("coupon field not marked invalid:\n%s", p.Body)
	}
	if n := len(env.Sim.Sent()); n != 0 {
		t.Fatalf("refused sends reached the platform: %d", n)
	}
}
