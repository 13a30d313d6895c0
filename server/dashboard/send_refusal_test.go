package dashboard_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// groupError is the text of the alert of the form's fieldset with the id (the error about the
// header, the body or the buttons as a whole), "" when there is none.
func groupError(body, id string) string {
	m := regexp.MustCompile(`(?s)<fieldset class="stack" id="` + regexp.QuoteMeta(id) + `">(.*?)</fieldset>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	a := regexp.MustCompile(`<p class="field-error" role="alert">([^<]*)</p>`).FindStringSubmatch(m[1])
	if a == nil {
		return ""
	}
	return html.UnescapeString(a[1])
}

// Each rule of a send, broken on the panel's form, shows its reason next to the input (or in
// the part of the form) it is about, and nowhere else: the dashboard places the API's refusals
// by their field paths, whichever check refused (the form's own reading of a number, the
// request schema, the send request's rules, the template's rules).
func TestPanelSendRefusalsByRule(t *testing.T) {
	env, a, ids := richPanel(t)
	long := strings.Repeat("x", 2001)
	cases := []struct {
		rule     string
		template string
		form     url.Values
		input    string // the id of the error's paragraph; "group:<fieldset id>" for a part of the form
		says     string
	}{
		{"destination not a number", "order_confirmation", url.Values{"destination": {"call me"}, "body": {"Ana", "ORD-1"}},
			"s-destination-error", "enter the number in international format"},
		{"name too long (schema)", "order_confirmation", url.Values{"name": {strings.Repeat("n", 81)}, "body": {"Ana", "ORD-1"}},
			"s-name-error", "maximum string length is 80"},
		{"campaign too long (schema)", "order_confirmation", url.Values{"campaign": {strings.Repeat("c", 121)}, "body": {"Ana", "ORD-1"}},
			"s-campaign-error", "maximum string length is 120"},
		{"body variable count", "order_confirmation", url.Values{"body": {"Ana"}},
			"group:s-body", "the template's body takes 2 variables, got 1"},
		{"empty body variable (schema)", "order_confirmation", url.Values{"body": {"Ana", ""}},
			"s-body-1-error", "minimum string length is 1"},
		{"header variable count", "shipping_update", url.Values{"body": {"Friday"}},
			"group:s-header", "the template's header takes 1 variable, got 0"},
		{"header variable too long (schema)", "shipping_update", url.Values{"header": {strings.Repeat("h", 1025)}, "body": {"Friday"}},
			"s-header-0-error", "maximum string length is 1024"},
		{"media header missing", "spring_sale", url.Values{"body": {"Ana"}, "button_0": {"X"}},
			"group:s-header", "the template's header is an IMAGE: give header_media with type image"},
		{"media link and id", "spring_sale", url.Values{"media_type": {"image"}, "media_link": {"https://cdn.example.com/a.jpg"},
			"media_id": {"77"}, "body": {"Ana"}, "button_0": {"X"}},
			"group:s-header", "give exactly one of link and id"},
		{"media of another type", "spring_sale", url.Values{"media_type": {"video"}, "media_link": {"https://cdn.example.com/a.mp4"},
			"body": {"Ana"}, "button_0": {"X"}},
			"group:s-header", "give header_media with type image, not video"},
		{"media link not https (schema)", "spring_sale", url.Values{"media_type": {"image"}, "media_link": {"http://cdn.example.com/a.jpg"},
			"body": {"Ana"}, "button_0": {"X"}},
			"s-media-link-error", "a public https:// link"},
		{"location missing", "store_directions", url.Values{},
			"group:s-header", "the template's header is a LOCATION: give header_location"},
		{"latitude not a number (form)", "store_directions", url.Values{"latitude": {"north"}, "longitude": {"-46.6559"}},
			"s-latitude-error", "must be a number"},
		{"longitude out of range (schema)", "store_directions", url.Values{"latitude": {"-23.5"}, "longitude": {"181"}},
			"s-longitude-error", "number must be at most 180"},
		{"button value missing", "spring_sale", url.Values{"media_type": {"image"}, "media_link": {"https://cdn.example.com/a.jpg"}, "body": {"Ana"}},
			"s-button-0-error", `the template's button 0 (URL "Shop now") needs a value in button_variables`},
		{"coupon code too long", "coupon_offer", url.Values{"body": {"Ana"}, "button_0": {"SIXTEEN-CHARS-XX"}},
			"s-button-0-error", "takes a coupon code of at most 15 characters, got 16"},
		// The second entry of button_variables is button 1's: the schema names it by position.
		{"button value too long (schema)", "spring_sale", url.Values{"media_type": {"image"}, "media_link": {"https://cdn.example.com/a.jpg"},
			"body": {"Ana"}, "button_0": {"X"}, "button_1": {long}},
			"s-button-1-error", "maximum string length is 2000"},
	}
	for i, tc := range cases {
		form := url.Values{"template": {fmt.Sprint(ids[tc.template])}, "key": {fmt.Sprintf("rule-%d", i)}, "destination": {"5511987654321"}}
		for k, v := range tc.form {
			form[k] = v
		}
		p := a.post("/dashboard/send", form)
		if p.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d, want 422\n%s", tc.rule, p.Status, p.Body)
			continue
		}
		var got string
		if g, ok := strings.CutPrefix(tc.input, "group:"); ok {
			got = groupError(p.Body, g)
		} else {
			got = fieldError(p.Body, tc.input)
		}
		if !strings.Contains(got, tc.says) {
			t.Errorf("%s: %s says %q, want %q", tc.rule, tc.input, got, tc.says)
		}
		// The reason is placed on the form, not listed in the page's message, and no other
		// input is marked.
		if !strings.Contains(p.Body, "The send was refused: correct the fields marked below.") {
			t.Errorf("%s: the page's message is not the one for placed reasons:\n%s", tc.rule, p.Body)
		}
		if n := strings.Count(p.Body, `class="field-error"`); n != 1 {
			t.Errorf("%s: %d inputs marked, want 1", tc.rule, n)
		}
	}
	if n := len(env.Sim.Sent()); n != 0 {
		t.Fatalf("refused sends reached the platform: %d", n)
	}
}

// A reason about an input the page does not show (a form filled for the template as it was, or
// not made by this page) is listed in the page's message with its field path, never lost
// behind "correct the fields marked below".
func TestPanelSendRefusalsOffForm(t *testing.T) {
	env, a, ids := richPanel(t)
	cases := []struct {
		rule     string
		template string
		form     url.Values
		says     string
	}{
		{"a value for a button that takes none", "product_demo", url.Values{"media_type": {"video"},
			"media_link": {"https://cdn.example.com/a.mp4"}, "body": {"Kettle"}, "button_0": {"x"}},
			`button_variables.0: the template's button 0 (URL "Visit us") takes no value`},
		{"a file name for an image", "spring_sale", url.Values{"media_type": {"image"}, "media_link": {"https://cdn.example.com/a.jpg"},
			"media_filename": {"a.jpg"}, "body": {"Ana"}, "button_0": {"X"}},
			"header_media.filename: filename is for a document header only"},
		{"a button the template does not have", "coupon_offer", url.Values{"body": {"Ana"}, "button_0": {"SAVE20"}, "button_5": {"x"}},
			"button_variables.1.index: the template has 2 buttons (indexes 0 to 1); there is no button 5"},
	}
	for i, tc := range cases {
		form := url.Values{"template": {fmt.Sprint(ids[tc.template])}, "key": {fmt.Sprintf("off-%d", i)}, "destination": {"5511987654321"}}
		for k, v := range tc.form {
			form[k] = v
		}
		p := a.post("/dashboard/send", form)
		if p.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d, want 422\n%s", tc.rule, p.Status, p.Body)
			continue
		}
		m := regexp.MustCompile(`<p class="error" role="alert">([^<]*)</p>`).FindStringSubmatch(p.Body)
		if m == nil || !strings.Contains(html.UnescapeString(m[1]), tc.says) {
			t.Errorf("%s: the page's message is %q, want it to list %q", tc.rule, m, tc.says)
		}
	}
	if n := len(env.Sim.Sent()); n != 0 {
		t.Fatalf("refused sends reached the platform: %d", n)
	}
}
