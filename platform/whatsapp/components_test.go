package whatsapp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"
)

// The rich send shapes of reference §1 and §10, pinned byte for byte.
func TestSendTemplateRichComponents(t *testing.T) {
	tests := []struct {
		name   string
		send   TemplateSend
		golden string
	}{
		{
			name: "image header by link, URL suffix, quick-reply payload",
			send: TemplateSend{To: "15551234567", Name: "spring_sale", Language: "en_US", BodyParams: []string{"Ana"},
				HeaderMedia: &HeaderMedia{Type: "image", Link: "https://cdn.example.com/spring.jpg?w=800&h=600"},
				Buttons: []ButtonParam{{Index: 0, Type: ButtonURL, Value: "SPRING24"},
					{Index: 1, Type: ButtonQuickReply, Value: "STOP_PROMO"}}},
			golden: "send_template_image_buttons_request.golden.json",
		},
		{
			name: "document header by id with a filename",
			send: TemplateSend{To: "15551234567", Name: "invoice_ready", Language: "en_US", BodyParams: []string{"INV-1001"},
				HeaderMedia: &HeaderMedia{Type: "document", ID: "1029384756", Filename: "INV-1001.pdf"}},
			golden: "send_template_document_request.golden.json",
		},
		{
			name: "location header and a coupon code",
			send: TemplateSend{To: "15551234567", Name: "store_opening", Language: "en_US",
				HeaderLocation: &HeaderLocation{Latitude: -23.5614, Longitude: -46.6559, Name: "Acme Paulista", Address: "Av. Paulista 1000"},
				Buttons:        []ButtonParam{{Index: 0, Type: ButtonCopyCode, Value: "SAVE20"}}},
			golden: "send_template_location_coupon_request.golden.json",
		},
		{
			name: "one-time password: body and OTP button carry the code",
			send: TemplateSend{To: "15551234567", Name: "login_code", Language: "en_US", BodyParams: []string{"482913"},
				Buttons: []ButtonParam{{Index: 0, Type: ButtonOTP, Value: "482913"}}},
			golden: "send_template_otp_request.golden.json",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := newFakePlatform(t, answer(http.StatusOK, readTestdata(t, "send_template_response.json")))
			c := NewClient(fp.URL+"/v23.0", nil)
			if _, err := c.SendTemplate(context.Background(), testToken, testPhoneID, tt.send); err != nil {
				t.Fatalf("SendTemplate: %v", err)
			}
			assertGoldenJSON(t, tt.golden, fp.requests()[0].Body)
		})
	}
}

func TestSendTemplateRichComponentsRefused(t *testing.T) {
	for name, m := range map[string]TemplateSend{
		"link and id":          {HeaderMedia: &HeaderMedia{Type: "image", Link: "https://x.example/a.jpg", ID: "1"}},
		"neither link nor id":  {HeaderMedia: &HeaderMedia{Type: "image"}},
		"unknown media type":   {HeaderMedia: &HeaderMedia{Type: "audio", ID: "1"}},
		"filename on an image": {HeaderMedia: &HeaderMedia{Type: "image", ID: "1", Filename: "a.jpg"}},
		"media and text":       {HeaderParams: []string{"x"}, HeaderMedia: &HeaderMedia{Type: "image", ID: "1"}},
		"phone button":         {Buttons: []ButtonParam{{Index: 0, Type: "PHONE_NUMBER", Value: "x"}}},
	} {
		fp := newFakePlatform(t, answer(http.StatusOK, readTestdata(t, "send_template_response.json")))
		c := NewClient(fp.URL+"/v23.0", nil)
		m.To, m.Name, m.Language = "15551234567", "t", "en_US"
		if _, err := c.SendTemplate(context.Background(), testToken, testPhoneID, m); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: err = %v, want ErrInvalidArgument", name, err)
		}
		if n := len(fp.requests()); n != 0 {
			t.Errorf("%s: %d requests made", name, n)
		}
	}
}

func TestSendButtonsAndUnsupported(t *testing.T) {
	parse := func(category, comps string) Template {
		var tpl Template
		if err := json.Unmarshal([]byte(`{"category":"`+category+`","components":`+comps+`}`), &tpl); err != nil {
			t.Fatal(err)
		}
		return tpl
	}
	mk := parse("MARKETING", `[{"type":"HEADER","format":"IMAGE"},{"type":"BODY","text":"Hi {{1}}"},
		{"type":"BUTTONS","buttons":[{"type":"URL","text":"Shop","url":"https://s.example/{{1}}"},
			{"type":"URL","text":"Home","url":"https://s.example/"},{"type":"QUICK_REPLY","text":"Stop"},
			{"type":"COPY_CODE","text":"Copy","example":"SAVE20"},{"type":"PHONE_NUMBER","text":"Call","phone_number":"+15550001111"}]}]`)
	want := []SendButton{{0, "URL", "Shop", true}, {1, "URL", "Home", false}, {2, "QUICK_REPLY", "Stop", true},
		{3, "COPY_CODE", "Copy", true}, {4, "PHONE_NUMBER", "Call", false}}
	if got := mk.SendButtons(); !reflect.DeepEqual(got, want) {
		t.Errorf("marketing buttons %+v", got)
	}
	if u := mk.Unsupported(); u != nil {
		t.Errorf("marketing unsupported %v", u)
	}
	// Meta lists an authentication template's copy-code button as URL; one tap as OTP.
	for _, typ := range []string{"URL", "OTP"} {
		auth := parse("AUTHENTICATION", `[{"type":"BODY","text":"*{{1}}* is your verification code."},
			{"type":"BUTTONS","buttons":[{"type":"`+typ+`","text":"Copy code","url":"https://www.whatsapp.com/otp/code/?otp_type=COPY_CODE&code=otp{{1}}"}]}]`)
		if got := auth.SendButtons(); !reflect.DeepEqual(got, []SendButton{{0, "OTP", "Copy code", true}}) {
			t.Errorf("authentication %s button %+v", typ, got)
		}
	}
	odd := parse("MARKETING", `[{"type":"HEADER","format":"gif"},{"type":"BODY","text":"x"},{"type":"CAROUSEL","cards":[]},
		{"type":"LIMITED_TIME_OFFER"},{"type":"BUTTONS","buttons":[{"type":"FLOW","text":"Book"},{"type":"CATALOG","text":"View"},{"type":"FLOW","text":"Again"}]}]`)
	if got, want := odd.Unsupported(), []string{"GIF header", "CAROUSEL", "LIMITED_TIME_OFFER", "FLOW button", "CATALOG button"}; !reflect.DeepEqual(got, want) {
		t.Errorf("unsupported %v, want %v", got, want)
	}
}
