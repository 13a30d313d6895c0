package server_test

import (
	"net/http"
	"testing"

	"gateway/server/servertest"
)

// The API's refusals, byte for byte: each broken rule of a send, an upsert and a listing, as
// the 422 (or 404) body reads. The bodies were recorded before send refusals became typed
// values (server/refusal); the API renders them unchanged.
func TestRefusalBodiesUnchanged(t *testing.T) {
	env, tn := richEnv(t)
	send := func(key string, body string) servertest.Request {
		return servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Key: key, Body: body}
	}
	cases := []struct {
		name string
		req  servertest.Request
		want string
	}{
		{"every header and button rule of an image template", send(tn.Live, `{"destination":"5511987654321","template_name":"spring_sale",
			"header_variables":["x"],"header_media":{"type":"video","link":"https://cdn.example.com/a.mp4","id":"9","filename":"f.pdf"},
			"button_variables":[{"index":1,"value":"p"},{"index":1,"value":"q"},{"index":7,"value":"z"}]}`),
			`{"code":"validation_failed","errors":{"body_variables":["the template's body takes 1 variable, got 0"],"button_variables":["the template's button 0 (URL \"Shop now\") needs a value in button_variables: the URL suffix for {{1}}"],"button_variables.1.index":["button 1 is given more than once"],"button_variables.2.index":["the template has 2 buttons (indexes 0 to 1); there is no button 7"],"header_media":["give exactly one of link and id"],"header_media.filename":["filename is for a document header only"],"header_media.type":["the template's header is an IMAGE: give header_media with type image, not video"],"header_variables":["the template's header is an IMAGE: give header_media with type image"]},"message":"Invalid request: body_variables, button_variables, button_variables.1.index, button_variables.2.index, header_media, header_media.filename, header_media.type, header_variables","success":false}`},
		{"a location template given media", send(tn.Live, `{"destination":"5511987654321","template_name":"store_directions",
			"header_media":{"type":"image","link":"https://cdn.example.com/a.jpg","id":"9"},"body_variables":["x"]}`),
			`{"code":"validation_failed","errors":{"body_variables":["the template's body takes 0 variables, got 1"],"header_location":["the template's header is a LOCATION: give header_location"],"header_media":["the template's header is a LOCATION: give header_location","give exactly one of link and id"]},"message":"Invalid request: body_variables, header_location, header_media","success":false}`},
		{"a coupon too long and a location for a template without a header", send(tn.Live, `{"destination":"5511987654321",
			"template_name":"coupon_offer","body_variables":["Ana"],"header_location":{"latitude":1,"longitude":2},
			"button_variables":[{"index":0,"value":"SIXTEEN-CHARS-XX"}]}`),
			`{"code":"validation_failed","errors":{"button_variables.0.value":["the template's button 0 (COPY_CODE \"\") takes a coupon code of at most 15 characters, got 16"],"header_location":["the template has no header: it takes no header_variables, header_media or header_location"]},"message":"Invalid request: button_variables.0.value, header_location","success":false}`},
		{"a value for a button that takes none", send(tn.Live, `{"destination":"5511987654321","template_name":"product_demo",
			"header_media":{"type":"video","id":"7"},"body_variables":["Kettle"],"button_variables":[{"index":0,"value":"x"}]}`),
			`{"code":"validation_failed","errors":{"button_variables.0":["the template's button 0 (URL \"Visit us\") takes no value"]},"message":"Invalid request: button_variables.0","success":false}`},
		{"an unsupported template", send(tn.Live, `{"destination":"5511987654321","template_name":"holiday_carousel"}`),
			`{"code":"validation_failed","errors":{"template_name":["the template \"holiday_carousel\" has CAROUSEL, which the API cannot send yet"]},"message":"Invalid request: template_name","success":false}`},
		{"no template and a national number", send(tn.Live, `{"destination":"05511987654"}`),
			`{"code":"validation_failed","errors":{"destination":["must start with the country code, not 0"],"template_name":["one of template_name or template_id is required"]},"message":"Invalid request: destination, template_name","success":false}`},
		{"a template in several languages", send(tn.Live, `{"destination":"5511987654321","template_name":"appointment_reminder",
			"body_variables":["a","b"]}`),
			`{"code":"validation_failed","errors":{"language":["the template \"appointment_reminder\" is approved in several languages (en_US, es_MX); say which one"]},"message":"Invalid request: language","success":false}`},
		{"no template in that language", send(tn.Live, `{"destination":"5511987654321","template_name":"order_confirmation",
			"language":"pt_BR"}`),
			`{"code":"template_not_found","message":"No approved template named \"order_confirmation\" in language pt_BR","success":false}`},
		{"a test key's fixture without its code", send(tn.Test, `{"destination":"5511987654321","template_name":"otp_login_code",
			"header_variables":["x"]}`),
			`{"code":"validation_failed","errors":{"body_variables":["the template's body takes 1 variable, got 0"],"button_variables":["the template's button 0 (OTP \"Copy code\") needs a value in button_variables: the one-time password"],"header_variables":["the template has no header: it takes no header_variables, header_media or header_location"]},"message":"Invalid request: body_variables, button_variables, header_variables","success":false}`},
		{"a test key's unknown template", send(tn.Test, `{"destination":"5511987654321","template_id":99}`),
			`{"code":"template_not_found","message":"No approved template with id 99 (test mode has the sandbox templates 1, 2 and 3)","success":false}`},
		{"a contact's national number", servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: tn.Live,
			Body: `{"mobile":"12"}`},
			`{"code":"validation_failed","errors":{"mobile":["must be an international number: 8 to 15 digits with the country code first"]},"message":"Invalid request: mobile","success":false}`},
		{"a cursor no listing returned", servertest.Request{Method: http.MethodGet, Path: "/v1/messages?cursor=bm90LWEtY3Vyc29y", Key: tn.Live},
			`{"code":"validation_failed","errors":{"query.cursor":["is not a next_cursor this listing returned"]},"message":"Invalid request: query.cursor","success":false}`},
	}
	for _, c := range cases {
		r := env.Do(c.req)
		if string(r.Body) != c.want {
			t.Errorf("%s: %d\n got %s\nwant %s", c.name, r.Status, r.Body, c.want)
		}
	}
}
