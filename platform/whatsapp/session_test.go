package whatsapp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestSendMessageRequests(t *testing.T) {
	const quoted = "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA="
	tests := []struct {
		name   string
		m      Message
		golden string
	}{
		{"text with preview, quote and callback data", Message{To: "16505551234", ReplyTo: quoted, CallbackData: "42",
			Text: &TextMessage{Body: "Yes, in blue & navy: https://example.com/p/42", PreviewURL: true}}, "send_session_text_request.golden.json"},
		{"text to a user id", Message{ToUserID: "BR.13491208655302741918", Text: &TextMessage{Body: "Olá Ana"}}, "send_session_text_user_id_request.golden.json"},
		{"image by id with caption", Message{To: "+16505551234", Image: &MediaMessage{ID: "1003383421387256", Caption: "The blue one"}}, "send_session_image_request.golden.json"},
		{"video by link", Message{To: "16505551234", Video: &MediaMessage{Link: "https://cdn.example.com/unboxing.mp4", Caption: "Unboxing"}}, "send_session_video_request.golden.json"},
		{"audio by id", Message{To: "16505551234", Audio: &MediaMessage{ID: "1208394737403842"}}, "send_session_audio_request.golden.json"},
		{"document by link with filename", Message{To: "16505551234", Document: &MediaMessage{Link: "https://cdn.example.com/i/42.pdf", Caption: "Invoice", Filename: "invoice-0042.pdf"}}, "send_session_document_request.golden.json"},
		{"sticker by id, quoting", Message{To: "16505551234", ReplyTo: quoted, Sticker: &MediaMessage{ID: "1180417293418722"}}, "send_session_sticker_request.golden.json"},
		{"location", Message{To: "16505551234", Location: &LocationMessage{Latitude: 37.483307, Longitude: -122.148981, Name: "Our shop", Address: "1 Hacker Way, Menlo Park, CA 94025"}}, "send_session_location_request.golden.json"},
		{"contacts", Message{To: "16505551234", Contacts: []ContactCard{{
			Name:   ContactName{FormattedName: "Support desk", FirstName: "Support"},
			Phones: []ContactPhone{{Phone: "+1 555 078 3881", WaID: "15550783881", Type: "WORK"}},
			Emails: []ContactEmail{{Email: "help@example.com", Type: "WORK"}},
			URLs:   []ContactURL{{URL: "https://example.com/help", Type: "WORK"}},
			Org:    &ContactOrg{Company: "Example Inc."},
		}}}, "send_session_contacts_request.golden.json"},
		{"reaction", Message{To: "16505551234", Reaction: &Reaction{MessageID: quoted, Emoji: "👍"}}, "send_session_reaction_request.golden.json"},
		{"reaction removed", Message{To: "16505551234", Reaction: &Reaction{MessageID: quoted}}, "send_session_reaction_removed_request.golden.json"},
		{"reply buttons", Message{To: "16505551234", ReplyTo: quoted, Interactive: &InteractiveMessage{Type: InteractiveButton,
			Header: "Your order", Body: "Deliver tomorrow between 9 and 12?", Footer: "Reply within 24 h",
			Buttons: []ReplyButton{{ID: "yes", Title: "Yes"}, {ID: "later", Title: "Another slot"}, {ID: "no", Title: "Cancel order"}}}}, "send_session_buttons_request.golden.json"},
		{"list", Message{To: "16505551234", Interactive: &InteractiveMessage{Type: InteractiveList,
			Body: "Pick a slot", ListButton: "Slots", Sections: []ListSection{
				{Title: "Tomorrow", Rows: []ListRow{{ID: "t-0930", Title: "09:30", Description: "Morning"}, {ID: "t-1400", Title: "14:00"}}},
				{Title: "Friday", Rows: []ListRow{{ID: "f-1000", Title: "10:00", Description: "Morning"}}},
			}}}, "send_session_list_request.golden.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := newFakePlatform(t, answer(http.StatusOK, []byte(`{"messaging_product":"whatsapp","contacts":[{"input":"x","wa_id":"16505551234","user_id":"US.1"}],"messages":[{"id":"wamid.S1"}]}`)))
			c := NewClient(fp.URL+"/v23.0", nil)
			res, err := c.SendMessage(context.Background(), testToken, testPhoneID, tt.m)
			if err != nil {
				t.Fatal(err)
			}
			if res != (SendResult{MessageID: "wamid.S1", WaID: "16505551234", UserID: "US.1", Input: "x"}) {
				t.Errorf("result = %+v", res)
			}
			r := fp.requests()[0]
			if r.Method != http.MethodPost || r.RequestURI != "/v23.0/"+testPhoneID+"/messages" {
				t.Errorf("request = %s %s", r.Method, r.RequestURI)
			}
			assertPlatformHeaders(t, r)
			assertGoldenJSON(t, tt.golden, r.Body)
			var body map[string]any
			_ = json.Unmarshal(r.Body, &body)
			if body["type"] != tt.m.Kind() || body[tt.m.Kind()] == nil {
				t.Errorf("type %v, want %q with its object", body["type"], tt.m.Kind())
			}
		})
	}
}

func TestSendMessageRefusesBadMessagesWithoutARequest(t *testing.T) {
	fp := newFakePlatform(t, answer(http.StatusOK, []byte(`{"messages":[{"id":"wamid.X"}]}`)))
	c := NewClient(fp.URL+"/v23.0", nil)
	text := &TextMessage{Body: "hi"}
	buttons := func(n int) []ReplyButton {
		var bs []ReplyButton
		for i := range n {
			bs = append(bs, ReplyButton{ID: strings.Repeat("b", i+1), Title: "B"})
		}
		return bs
	}
	rows := func(n int, prefix ...string) []ListRow {
		var rs []ListRow
		for i := range n {
			rs = append(rs, ListRow{ID: strings.Join(prefix, "") + strings.Repeat("r", i+1), Title: "R"})
		}
		return rs
	}
	for _, tt := range []struct {
		name string
		m    Message
		why  string
	}{
		{"no recipient", Message{Text: text}, "empty recipient"},
		{"both recipients", Message{To: "1555", ToUserID: "US.1", Text: text}, "both"},
		{"user id that is a number", Message{ToUserID: "15551234", Text: text}, "not a business-scoped user id"},
		{"no content", Message{To: "1555"}, "exactly one content, got 0"},
		{"two contents", Message{To: "1555", Text: text, Image: &MediaMessage{ID: "1"}}, "got 2"},
		{"empty text", Message{To: "1555", Text: &TextMessage{Body: "  "}}, "empty text body"},
		{"text too long", Message{To: "1555", Text: &TextMessage{Body: strings.Repeat("é", 4097)}}, "4097 characters"},
		{"media without id or link", Message{To: "1555", Image: &MediaMessage{Caption: "x"}}, "exactly one of a media id and a link"},
		{"media with id and link", Message{To: "1555", Image: &MediaMessage{ID: "1", Link: "https://x/y"}}, "exactly one"},
		{"plain http link", Message{To: "1555", Video: &MediaMessage{Link: "http://cdn.example.com/v.mp4"}}, "not an absolute https URL"},
		{"audio caption", Message{To: "1555", Audio: &MediaMessage{ID: "1", Caption: "x"}}, "no caption"},
		{"sticker caption", Message{To: "1555", Sticker: &MediaMessage{ID: "1", Caption: "x"}}, "no caption"},
		{"image filename", Message{To: "1555", Image: &MediaMessage{ID: "1", Filename: "a.jpg"}}, "only documents"},
		{"latitude out of range", Message{To: "1555", Location: &LocationMessage{Latitude: 91}}, "outside"},
		{"no cards", Message{To: "1555", Contacts: []ContactCard{}}, "at least one card"},
		{"card without name", Message{To: "1555", Contacts: []ContactCard{{Phones: []ContactPhone{{Phone: "1"}}}}}, "formatted_name"},
		{"reaction without target", Message{To: "1555", Reaction: &Reaction{Emoji: "x"}}, "message id"},
		{"four buttons", Message{To: "1555", Interactive: &InteractiveMessage{Type: InteractiveButton, Body: "b", Buttons: buttons(4)}}, "1 to 3 buttons"},
		{"no buttons", Message{To: "1555", Interactive: &InteractiveMessage{Type: InteractiveButton, Body: "b"}}, "1 to 3 buttons"},
		{"button title too long", Message{To: "1555", Interactive: &InteractiveMessage{Type: InteractiveButton, Body: "b", Buttons: []ReplyButton{{ID: "a", Title: strings.Repeat("t", 21)}}}}, "limit is 20"},
		{"duplicate button ids", Message{To: "1555", Interactive: &InteractiveMessage{Type: InteractiveButton, Body: "b", Buttons: []ReplyButton{{ID: "a", Title: "A"}, {ID: "a", Title: "B"}}}}, "used twice"},
		{"button body empty", Message{To: "1555", Interactive: &InteractiveMessage{Type: InteractiveButton, Buttons: buttons(1)}}, "empty interactive body"},
		{"list without label", Message{To: "1555", Interactive: &InteractiveMessage{Type: InteractiveList, Body: "b", Sections: []ListSection{{Rows: rows(1)}}}}, "list button label"},
		{"list with eleven rows", Message{To: "1555", Interactive: &InteractiveMessage{Type: InteractiveList, Body: "b", ListButton: "L", Sections: []ListSection{{Title: "A", Rows: rows(6, "a")}, {Title: "B", Rows: rows(5, "b")}}}}, "at most 10 rows"},
		{"untitled sections", Message{To: "1555", Interactive: &InteractiveMessage{Type: InteractiveList, Body: "b", ListButton: "L", Sections: []ListSection{{Rows: rows(1)}, {Title: "B", Rows: rows(1)}}}}, "section 1 title"},
		{"row description too long", Message{To: "1555", Interactive: &InteractiveMessage{Type: InteractiveList, Body: "b", ListButton: "L", Sections: []ListSection{{Rows: []ListRow{{ID: "a", Title: "A", Description: strings.Repeat("d", 73)}}}}}}, "description longer"},
		{"empty section", Message{To: "1555", Interactive: &InteractiveMessage{Type: InteractiveList, Body: "b", ListButton: "L", Sections: []ListSection{{Title: "A"}}}}, "no rows"},
		{"unknown interactive", Message{To: "1555", Interactive: &InteractiveMessage{Type: "cta_url", Body: "b"}}, "interactive type"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.SendMessage(context.Background(), testToken, testPhoneID, tt.m)
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("err = %v, want ErrInvalidArgument saying %q", err, tt.why)
			}
		})
	}
	if n := len(fp.requests()); n != 0 {
		t.Errorf("%d requests made", n)
	}
}

// The platform's 131047 (window closed) is a *Error that errors.Is matches with
// ErrOutsideWindow; other codes do not match.
func TestSendMessageOutsideWindow(t *testing.T) {
	body := `{"error":{"message":"(#131047) Re-engagement message","type":"OAuthException","code":131047,"error_data":{"messaging_product":"whatsapp","details":"Message failed to send because more than 24 hours have passed since the customer last replied to this number."},"fbtrace_id":"Afb1"}}`
	fp := newFakePlatform(t, answer(http.StatusBadRequest, []byte(body)))
	c := NewClient(fp.URL+"/v23.0", nil)
	_, err := c.SendMessage(context.Background(), testToken, testPhoneID, Message{To: "1555", Text: &TextMessage{Body: "hi"}})
	var pe *Error
	if !errors.Is(err, ErrOutsideWindow) || !errors.As(err, &pe) || pe.Code != 131047 || !strings.Contains(pe.Reason(), "24 hours") {
		t.Fatalf("err = %v", err)
	}
	other := &Error{HTTPStatus: 400, Code: 131026}
	if errors.Is(other, ErrOutsideWindow) {
		t.Error("131026 matched ErrOutsideWindow")
	}
}

func TestSendTemplateToUserID(t *testing.T) {
	fp := newFakePlatform(t, answer(http.StatusOK, []byte(`{"contacts":[{"input":"US.13491208655302741918","user_id":"US.13491208655302741918"}],"messages":[{"id":"wamid.T","message_status":"accepted"}]}`)))
	c := NewClient(fp.URL+"/v23.0", nil)
	res, err := c.SendTemplate(context.Background(), testToken, testPhoneID, TemplateSend{ToUserID: "US.13491208655302741918", Name: "hello_world", Language: "en_US"})
	if err != nil {
		t.Fatal(err)
	}
	if res.UserID != "US.13491208655302741918" || res.WaID != "" || res.MessageID != "wamid.T" {
		t.Errorf("result = %+v", res)
	}
	assertGoldenJSON(t, "send_template_user_id_request.golden.json", fp.requests()[0].Body)

	_, err = c.SendTemplate(context.Background(), testToken, testPhoneID, TemplateSend{ToUserID: "US.13491208655302741918", Name: "otp", Language: "en_US",
		BodyParams: []string{"123456"}, Buttons: []ButtonParam{{Index: 0, Type: ButtonOTP, Value: "123456"}}})
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "phone number") {
		t.Errorf("OTP template to a user id: %v", err)
	}
	if _, err := c.SendTemplate(context.Background(), testToken, testPhoneID, TemplateSend{To: "1555", ToUserID: "US.1", Name: "n", Language: "en"}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("both recipients: %v", err)
	}
	if len(fp.requests()) != 1 {
		t.Errorf("%d requests", len(fp.requests()))
	}
}

func TestIsUserID(t *testing.T) {
	for s, want := range map[string]bool{
		"US.13491208655302741918":        true,
		"US.ENT.11815799212886844830":    true,
		"BR.abcXYZ09":                    true,
		"US.ENT":                         true, // "ENT" itself is a valid id body
		"US.":                            false,
		"us.1349":                        false,
		"USA.1349":                       false,
		"US.ENT.":                        false,
		"US.13-49":                       false,
		"+15551234567":                   false,
		"15551234567":                    false,
		"US." + strings.Repeat("1", 128): true,
		"US." + strings.Repeat("1", 129): false,
	} {
		if got := IsUserID(s); got != want {
			t.Errorf("IsUserID(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestMarkRead(t *testing.T) {
	fp := newFakePlatform(t, answer(http.StatusOK, []byte(`{"success":true}`)))
	c := NewClient(fp.URL+"/v23.0", nil)
	if err := c.MarkRead(context.Background(), testToken, testPhoneID, "wamid.IN", true); err != nil {
		t.Fatal(err)
	}
	if got, want := string(fp.requests()[0].Body), `{"messaging_product":"whatsapp","status":"read","message_id":"wamid.IN","typing_indicator":{"type":"text"}}`; got != want {
		t.Errorf("body = %s, want %s", got, want)
	}
	fp2 := newFakePlatform(t, answer(http.StatusOK, []byte(`{"success":false}`)))
	if err := NewClient(fp2.URL+"/v23.0", nil).MarkRead(context.Background(), testToken, testPhoneID, "wamid.IN", false); !errors.Is(err, ErrMalformedResponse) {
		t.Errorf("success false: %v", err)
	}
	if got := string(fp2.requests()[0].Body); strings.Contains(got, "typing") {
		t.Errorf("body without typing = %s", got)
	}
}

// FuzzSessionRequest: any message either fails with ErrInvalidArgument or builds a body that is
// JSON with exactly one recipient member and the content object its type names.
func FuzzSessionRequest(f *testing.F) {
	f.Add("16505551234", "", "text", "hello", "", "", 0, 0.0)
	f.Add("", "US.1349", "image", "1003383421387256", "cap", "", 0, 0.0)
	f.Add("1555", "", "document", "https://x.example/a.pdf", "Invoice", "a.pdf", 0, 0.0)
	f.Add("1555", "", "buttons", "Pick", "yes", "Yes", 3, 0.0)
	f.Add("1555", "", "list", "Pick", "row", "Row", 11, 0.0)
	f.Add("1555", "", "location", "Shop", "Addr", "", 0, 91.5)
	f.Fuzz(func(t *testing.T, to, userID, kind, a, b, c string, n int, x float64) {
		m := Message{To: to, ToUserID: userID, ReplyTo: c}
		switch kind {
		case "text":
			m.Text = &TextMessage{Body: a}
		case "image", "document", "audio":
			md := &MediaMessage{Caption: b, Filename: c}
			if strings.HasPrefix(a, "https://") {
				md.Link = a
			} else {
				md.ID = a
			}
			map[string]func(){"image": func() { m.Image = md }, "document": func() { m.Document = md }, "audio": func() { m.Audio = md }}[kind]()
		case "buttons", "list":
			im := &InteractiveMessage{Type: InteractiveButton, Body: a}
			if kind == "list" {
				im.Type, im.ListButton = InteractiveList, c
				sec := ListSection{}
				for i := range n % 16 {
					sec.Rows = append(sec.Rows, ListRow{ID: b + strings.Repeat("x", i), Title: c})
				}
				im.Sections = []ListSection{sec}
			} else {
				for i := range n % 6 {
					im.Buttons = append(im.Buttons, ReplyButton{ID: b + strings.Repeat("x", i), Title: c})
				}
			}
			m.Interactive = im
		case "location":
			m.Location = &LocationMessage{Latitude: x, Longitude: -x, Name: a, Address: b}
		}
		req, err := sessionRequest(m)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
			}
			return
		}
		body, err := marshalRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("body %s: %v", body, err)
		}
		_, hasTo := got["to"]
		_, hasRecipient := got["recipient"]
		if hasTo == hasRecipient {
			t.Fatalf("body %s: want exactly one of to and recipient", body)
		}
		var typ string
		_ = json.Unmarshal(got["type"], &typ)
		if typ != m.Kind() || got[typ] == nil {
			t.Fatalf("body %s: type %q without its object", body, typ)
		}
	})
}
