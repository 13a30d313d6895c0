package whatsapp

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func parseFixture(t *testing.T, name string) *WebhookPayload {
	t.Helper()
	p, err := ParseWebhook(readTestdata(t, name))
	if err != nil {
		t.Fatalf("ParseWebhook(%s): %v", name, err)
	}
	return p
}

// onlyChange returns the single change of a single-entry payload.
func onlyChange(t *testing.T, p *WebhookPayload) Change {
	t.Helper()
	if p.Object != "whatsapp_business_account" || len(p.Entry) != 1 || len(p.Entry[0].Changes) != 1 {
		t.Fatalf("payload shape: object %q, %d entries", p.Object, len(p.Entry))
	}
	return p.Entry[0].Changes[0]
}

func TestParseWebhookStatuses(t *testing.T) {
	p := parseFixture(t, "webhook_statuses.json")
	c := onlyChange(t, p)
	if p.Entry[0].ID != "102290129340398" || c.Field != "messages" {
		t.Errorf("entry id %q, field %q", p.Entry[0].ID, c.Field)
	}
	v := c.Value
	if v.MessagingProduct != "whatsapp" || v.Metadata != (Metadata{DisplayPhoneNumber: "15550783881", PhoneNumberID: "106540352242922"}) {
		t.Errorf("value header = %q %+v", v.MessagingProduct, v.Metadata)
	}
	if len(v.Statuses) != 5 || len(v.Messages) != 0 {
		t.Fatalf("%d statuses, %d messages", len(v.Statuses), len(v.Messages))
	}
	var kinds []string
	for _, s := range v.Statuses {
		kinds = append(kinds, s.Status)
		if !json.Valid(s.Raw) || !strings.Contains(string(s.Raw), s.ID) {
			t.Errorf("status Raw = %s", s.Raw)
		}
	}
	if want := []string{"sent", "delivered", "read", "failed", "played"}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("statuses = %q, want %q", kinds, want)
	}

	sent := v.Statuses[0]
	if sent.ID != "wamid.HBgNNTUxMTk4NzY1NDMyMRUCABEYEjQyQkU1RTlGRjM4QTcyQjU2MgA=" || sent.RecipientID != "5511987654321" ||
		sent.Timestamp != "1735689600" || sent.BizOpaqueCallbackData != "tenant-42:req-9f1c" {
		t.Errorf("sent = %+v", sent)
	}
	if tm, ok := sent.Time(); !ok || !tm.Equal(time.Unix(1735689600, 0)) {
		t.Errorf("sent.Time() = %v, %v", tm, ok)
	}
	if sent.Conversation == nil || *sent.Conversation != (Conversation{ID: "7270432eae374982", ExpirationTimestamp: "1735776000", Origin: ConversationOrigin{Type: "utility"}}) {
		t.Errorf("conversation = %+v", sent.Conversation)
	}
	if sent.Pricing == nil || *sent.Pricing != (Pricing{Billable: true, PricingModel: "PMP", Type: "regular", Category: "utility"}) {
		t.Errorf("pricing = %+v", sent.Pricing)
	}
	if v.Statuses[2].Conversation != nil || v.Statuses[2].Pricing != nil {
		t.Errorf("read status has conversation/pricing: %+v", v.Statuses[2])
	}

	failed := v.Statuses[3]
	if failed.BizOpaqueCallbackData != "tenant-7:résumé" {
		t.Errorf("callback data = %q (\\u escapes not decoded)", failed.BizOpaqueCallbackData)
	}
	wantErr := []StatusError{{
		Code: 131047, Title: "Re-engagement message", Message: "Re-engagement message",
		Href:      "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/",
		ErrorData: StatusErrorData{Details: "Message failed to send because more than 24 hours have passed since the customer last replied to this number."},
	}}
	if !reflect.DeepEqual(failed.Errors, wantErr) {
		t.Errorf("failed errors = %+v", failed.Errors)
	}
}

func TestParseWebhookInboundMessages(t *testing.T) {
	tests := []struct {
		file  string
		typ   string
		text  string // TextContent
		check func(t *testing.T, m InboundMessage)
	}{
		{"message_text.json", "text", "Is it in blue?", func(t *testing.T, m InboundMessage) {
			if m.Text == nil || m.Text.Body != "Is it in blue?" || m.Context != nil {
				t.Errorf("text = %+v, context = %+v", m.Text, m.Context)
			}
		}},
		{"message_image.json", "image", "", func(t *testing.T, m InboundMessage) {
			want := Media{ID: "1003383421387256", MimeType: "image/jpeg", SHA256: "UTUDR6/bL6JzH2qa6H9vd+ai3pi7dKYEUl0HL8pUHEo=", Caption: "This is a caption"}
			if m.Image == nil || *m.Image != want {
				t.Errorf("image = %+v", m.Image)
			}
		}},
		{"message_audio.json", "audio", "", func(t *testing.T, m InboundMessage) {
			if m.Audio == nil || m.Audio.ID != "1208394737403842" || m.Audio.MimeType != "audio/ogg; codecs=opus" || !m.Audio.Voice {
				t.Errorf("audio = %+v", m.Audio)
			}
		}},
		{"message_video.json", "video", "", func(t *testing.T, m InboundMessage) {
			if m.Video == nil || m.Video.ID != "2098443007264512" || m.Video.Caption != "Unboxing" || m.Video.MimeType != "video/mp4" {
				t.Errorf("video = %+v", m.Video)
			}
		}},
		{"message_document.json", "document", "", func(t *testing.T, m InboundMessage) {
			if m.Document == nil || m.Document.Filename != "invoice-0042.pdf" || m.Document.Caption != "Invoice" || m.Document.MimeType != "application/pdf" {
				t.Errorf("document = %+v", m.Document)
			}
		}},
		{"message_sticker.json", "sticker", "", func(t *testing.T, m InboundMessage) {
			if m.Sticker == nil || m.Sticker.ID != "1180417293418722" || m.Sticker.MimeType != "image/webp" || m.Sticker.Animated {
				t.Errorf("sticker = %+v", m.Sticker)
			}
		}},
		{"message_location.json", "location", "", func(t *testing.T, m InboundMessage) {
			want := Location{Latitude: 37.483307, Longitude: -122.148981, Name: "Meta Headquarters", Address: "1 Hacker Way, Menlo Park, CA 94025", URL: "https://www.facebook.com"}
			if m.Location == nil || *m.Location != want {
				t.Errorf("location = %+v", m.Location)
			}
		}},
		{"message_contacts.json", "contacts", "", func(t *testing.T, m InboundMessage) {
			want := []ContactCard{{
				Name: ContactName{FormattedName: "Barbara J. Johnson", FirstName: "Barbara", LastName: "Johnson"},
				Phones: []ContactPhone{
					{Phone: "+1 (650) 555-1234", WaID: "16505551234", Type: "MOBILE"},
					{Phone: "+1 (650) 555-0000", Type: "HOME"},
				},
				Emails: []ContactEmail{{Email: "bjohnson@example.com", Type: "WORK"}},
				URLs:   []ContactURL{{URL: "https://www.example.com", Type: "WORK"}},
				Addresses: []ContactAddress{{Street: "1 Hacker Way", City: "Menlo Park", State: "CA", Zip: "94025",
					Country: "United States", CountryCode: "us", Type: "WORK"}},
				Org:      &ContactOrg{Company: "Example Inc.", Department: "Sales", Title: "Manager"},
				Birthday: "1985-08-21",
			}}
			if !reflect.DeepEqual(m.Contacts, want) {
				t.Errorf("contacts = %+v", m.Contacts)
			}
		}},
		{"message_interactive_button_reply.json", "interactive", "Yes, confirm", func(t *testing.T, m InboundMessage) {
			if m.Interactive == nil || m.Interactive.Type != "button_reply" || m.Interactive.ButtonReply == nil ||
				*m.Interactive.ButtonReply != (ButtonReply{ID: "confirm-yes", Title: "Yes, confirm"}) || m.Interactive.ListReply != nil {
				t.Errorf("interactive = %+v", m.Interactive)
			}
			if m.Context == nil || m.Context.ID != "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBJDNUE3MkY4QTg2RDk5Q0Y3QTMA" || m.Context.From != "15550783881" {
				t.Errorf("context = %+v", m.Context)
			}
		}},
		{"message_interactive_list_reply.json", "interactive", "09:30", func(t *testing.T, m InboundMessage) {
			if m.Interactive == nil || m.Interactive.Type != "list_reply" || m.Interactive.ListReply == nil ||
				*m.Interactive.ListReply != (ListReply{ID: "slot-0930", Title: "09:30", Description: "Tomorrow morning"}) {
				t.Errorf("interactive = %+v", m.Interactive)
			}
		}},
		{"message_button.json", "button", "Stop promotions", func(t *testing.T, m InboundMessage) {
			if m.Button == nil || *m.Button != (Button{Text: "Stop promotions", Payload: "STOP_PROMO"}) {
				t.Errorf("button = %+v", m.Button)
			}
			if m.Context == nil || m.Context.ID != "wamid.HBgNNTUxMTk4NzY1NDMyMRUCABEYEjQyQkU1RTlGRjM4QTcyQjU2MgA=" {
				t.Errorf("context = %+v", m.Context)
			}
		}},
		{"message_reaction.json", "reaction", "", func(t *testing.T, m InboundMessage) {
			if m.Reaction == nil || *m.Reaction != (Reaction{MessageID: "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBJDNUE3MkY4QTg2RDk5Q0Y3QTMA", Emoji: "👍"}) {
				t.Errorf("reaction = %+v", m.Reaction)
			}
		}},
		{"message_order.json", "order", "", func(t *testing.T, m InboundMessage) {
			want := &Order{CatalogID: "1537321183616489", Text: "Please deliver after 6pm", ProductItems: []OrderItem{
				{ProductRetailerID: "sku-blue-42", Quantity: 2, ItemPrice: 49.9, Currency: "USD"},
				{ProductRetailerID: "sku-red-40", Quantity: 1, ItemPrice: 45, Currency: "USD"},
			}}
			if !reflect.DeepEqual(m.Order, want) {
				t.Errorf("order = %+v", m.Order)
			}
		}},
		{"message_system.json", "system", "", func(t *testing.T, m InboundMessage) {
			want := System{Body: "User A changed from 16505551234 to 16505559999", WaID: "16505559999", Type: "user_changed_number"}
			if m.System == nil || *m.System != want {
				t.Errorf("system = %+v", m.System)
			}
		}},
		{"message_unsupported.json", "unsupported", "", func(t *testing.T, m InboundMessage) {
			want := []StatusError{{Code: 131051, Title: "Message type unknown", Message: "Message type unknown", ErrorData: StatusErrorData{Details: "Message type is currently not supported."}}}
			if !reflect.DeepEqual(m.Errors, want) {
				t.Errorf("errors = %+v", m.Errors)
			}
		}},
		{"message_future_type.json", "hologram", "", func(t *testing.T, m InboundMessage) {
			if m.Text != nil || m.Image != nil || m.Interactive != nil || m.Button != nil || m.Errors != nil || m.Contacts != nil || m.Err != nil {
				t.Errorf("unknown type filled typed fields: %+v", m)
			}
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(m.Raw, &raw); err != nil || !strings.Contains(string(raw["hologram"]), `"shimmer"`) || string(raw["some_new_top_level_flag"]) != "true" {
				t.Errorf("Raw lost the unknown content: %s", m.Raw)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c := onlyChange(t, parseFixture(t, tt.file))
			v := c.Value
			if c.Field != "messages" || v.Metadata.PhoneNumberID != "106540352242922" {
				t.Errorf("field %q, metadata %+v", c.Field, v.Metadata)
			}
			if len(v.Contacts) != 1 || v.Contacts[0] != (Contact{Profile: Profile{Name: "Sheena Nelson"}, WaID: "16505551234"}) {
				t.Errorf("contacts = %+v", v.Contacts)
			}
			if len(v.Messages) != 1 {
				t.Fatalf("%d messages", len(v.Messages))
			}
			m := v.Messages[0]
			if m.Type != tt.typ || m.From != "16505551234" || !strings.HasPrefix(m.ID, "wamid.") {
				t.Errorf("message = type %q from %q id %q", m.Type, m.From, m.ID)
			}
			if _, ok := m.Time(); !ok {
				t.Errorf("Time() of %q not ok", m.Timestamp)
			}
			if !json.Valid(m.Raw) || !strings.Contains(string(m.Raw), m.ID) {
				t.Errorf("Raw = %s", m.Raw)
			}
			if m.Err != nil {
				t.Errorf("Err = %v", m.Err)
			}
			if m.Sender != (Sender{WaID: "16505551234", Name: "Sheena Nelson"}) {
				t.Errorf("Sender = %+v", m.Sender)
			}
			if got := m.TextContent(); got != tt.text {
				t.Errorf("TextContent() = %q, want %q", got, tt.text)
			}
			tt.check(t, m)
		})
	}
}

func TestEveryMessageFixtureIsCovered(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "message_*.json"))
	if err != nil || len(files) < 16 {
		t.Fatalf("found %d message fixtures (%v)", len(files), err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseWebhook(b); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestParseWebhookTemplateStatus(t *testing.T) {
	p := parseFixture(t, "template_status_update.json")
	c := onlyChange(t, p)
	if p.Entry[0].Time != 1751247548 || c.Field != "message_template_status_update" {
		t.Errorf("entry time %d, field %q", p.Entry[0].Time, c.Field)
	}
	v := c.Value
	got := [6]string{v.Event, v.MessageTemplateID, v.MessageTemplateName, v.MessageTemplateLanguage, v.MessageTemplateCategory, v.Reason}
	// 9876543210987653 is above 2^53: a float64 decode would turn it into ...652.
	want := [6]string{"REJECTED", "9876543210987653", "abandoned_cart", "en_US", "MARKETING", "INVALID_FORMAT"}
	if got != want {
		t.Errorf("template update = %q, want %q", got, want)
	}
	if !strings.Contains(string(v.Raw), `"rejection_info"`) {
		t.Errorf("Raw lost rejection_info: %s", v.Raw)
	}
	if len(v.Messages) != 0 || len(v.Statuses) != 0 {
		t.Errorf("template update has messages/statuses")
	}
}

func TestParseWebhookBatched(t *testing.T) {
	p := parseFixture(t, "batched.json")
	if len(p.Entry) != 2 {
		t.Fatalf("%d entries, want 2", len(p.Entry))
	}
	first, second := p.Entry[0], p.Entry[1]
	if first.ID != "102290129340398" || len(first.Changes) != 2 {
		t.Fatalf("first entry = %q with %d changes", first.ID, len(first.Changes))
	}
	msgs := first.Changes[0].Value
	if len(msgs.Messages) != 1 || msgs.Messages[0].TextContent() != "STOP" {
		t.Errorf("first change messages = %+v", msgs.Messages)
	}
	if len(msgs.Contacts) != 1 || msgs.Contacts[0].UserID != "US.13491208655302741918" {
		t.Errorf("contacts = %+v", msgs.Contacts)
	}
	prefs := first.Changes[1]
	if prefs.Field != "user_preferences" || prefs.Value.Metadata.PhoneNumberID != "106540352242922" ||
		!strings.Contains(string(prefs.Value.Raw), `"value":"stop"`) {
		t.Errorf("unknown change field not kept: %q %s", prefs.Field, prefs.Value.Raw)
	}
	if second.ID != "203391230451409" || len(second.Changes) != 1 {
		t.Fatalf("second entry = %q with %d changes", second.ID, len(second.Changes))
	}
	sv := second.Changes[0].Value
	if sv.Metadata.PhoneNumberID != "207651463353033" || len(sv.Statuses) != 2 || sv.Statuses[0].Status != "delivered" || sv.Statuses[1].ID != sv.Statuses[0].ID {
		t.Errorf("second entry statuses = %+v (duplicates must be kept for the caller to dedupe)", sv)
	}
}

func TestParseWebhookRejectsNonEnvelopes(t *testing.T) {
	for _, body := range []string{
		``, `   `, `null`, `[]`, `"whatsapp"`, `42`, `{`, `{"entry":[]} x`,
		`{"object":"whatsapp_business_account"}`,
		`{"object":"whatsapp_business_account","entry":null}`,
		`{"object":"whatsapp_business_account","entry":{}}`,
		`{"object":"whatsapp_business_account","entry":[1]}`,
		`{"object":"whatsapp_business_account","entry":[null]}`,
		`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":{}}]}`,
		`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[[]]}]}`,
		`{"object":5,"entry":[]}`,
	} {
		p, err := ParseWebhook([]byte(body))
		if !errors.Is(err, ErrMalformedPayload) || p != nil {
			t.Errorf("ParseWebhook(%q) = %v, %v; want nil, ErrMalformedPayload", body, p, err)
		}
	}
}

func TestParseWebhookIsLenientBelowTheEnvelope(t *testing.T) {
	wrap := func(value string) string {
		return `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":` + value + `}]}]}`
	}
	tests := []struct {
		name  string
		body  string
		check func(t *testing.T, p *WebhookPayload)
	}{
		{"no entries", `{"object":"whatsapp_business_account","entry":[]}`, func(t *testing.T, p *WebhookPayload) {
			if len(p.Entry) != 0 {
				t.Errorf("entries = %+v", p.Entry)
			}
		}},
		{"unknown top-level and entry fields, no changes", `{"object":"x","new":{"a":1},"entry":[{"id":"9","time":"1751247548","extra":[1]}]}`, func(t *testing.T, p *WebhookPayload) {
			if p.Object != "x" || len(p.Entry) != 1 || p.Entry[0].ID != "9" || p.Entry[0].Time != 1751247548 || p.Entry[0].Changes != nil {
				t.Errorf("payload = %+v", p)
			}
		}},
		{"numeric entry id", `{"entry":[{"id":102290129340398,"time":1751247548,"changes":[]}]}`, func(t *testing.T, p *WebhookPayload) {
			if p.Entry[0].ID != "102290129340398" {
				t.Errorf("entry id = %q", p.Entry[0].ID)
			}
		}},
		{"null and string values", `{"entry":[{"changes":[{"field":"a","value":null},{"field":"b","value":"str"},{"field":"c"}]}]}`, func(t *testing.T, p *WebhookPayload) {
			ch := p.Entry[0].Changes
			if len(ch) != 3 || ch[1].Field != "b" || string(ch[1].Value.Raw) != `"str"` {
				t.Errorf("changes = %+v", ch)
			}
		}},
		{"numeric timestamps", wrap(`{"messages":[{"from":"1","id":"wamid.A","timestamp":1749416383,"type":"text","text":{"body":"hi"}}],"statuses":[{"id":"wamid.B","status":"sent","timestamp":1735689600}]}`), func(t *testing.T, p *WebhookPayload) {
			v := p.Entry[0].Changes[0].Value
			if v.Messages[0].Timestamp != "1749416383" || v.Statuses[0].Timestamp != "1735689600" {
				t.Errorf("timestamps = %q %q", v.Messages[0].Timestamp, v.Statuses[0].Timestamp)
			}
		}},
		{"text of the wrong type keeps the rest of the message", wrap(`{"messages":[{"from":"1","text":"hi","id":"wamid.A","type":"text"},{"from":"2","id":"wamid.C","type":"text","text":{"body":"ok"}}]}`), func(t *testing.T, p *WebhookPayload) {
			ms := p.Entry[0].Changes[0].Value.Messages
			if len(ms) != 2 || ms[0].ID != "wamid.A" || ms[0].Type != "text" || ms[0].TextContent() != "" || ms[1].TextContent() != "ok" {
				t.Errorf("messages = %+v", ms)
			}
		}},
		{"coordinates as strings", wrap(`{"messages":[{"id":"wamid.L","type":"location","location":{"latitude":"37.5","longitude":"-122.25","name":"HQ"}}]}`), func(t *testing.T, p *WebhookPayload) {
			l := p.Entry[0].Changes[0].Value.Messages[0].Location
			if l == nil || *l != (Location{Latitude: 37.5, Longitude: -122.25, Name: "HQ"}) {
				t.Errorf("location = %+v", l)
			}
		}},
		{"status error with odd types", wrap(`{"statuses":[{"id":"wamid.F","status":"failed","errors":[{"code":"x","title":"T","error_data":"plain details"}],"pricing":{"billable":"yes","category":"utility"}}]}`), func(t *testing.T, p *WebhookPayload) {
			s := p.Entry[0].Changes[0].Value.Statuses[0]
			if s.ID != "wamid.F" || s.Status != "failed" || len(s.Errors) != 1 || s.Errors[0].Title != "T" || s.Errors[0].ErrorData.Details != "plain details" {
				t.Errorf("status = %+v", s)
			}
			if s.Pricing == nil || s.Pricing.Category != "utility" {
				t.Errorf("pricing = %+v", s.Pricing)
			}
		}},
		{"messages not an array keeps statuses", wrap(`{"messages":{"a":1},"statuses":[{"id":"wamid.S","status":"read"}]}`), func(t *testing.T, p *WebhookPayload) {
			v := p.Entry[0].Changes[0].Value
			if len(v.Messages) != 0 || len(v.Statuses) != 1 || v.Statuses[0].Status != "read" {
				t.Errorf("value = %+v", v)
			}
		}},
		{"template id as string", `{"entry":[{"changes":[{"field":"message_template_status_update","value":{"event":"APPROVED","message_template_id":"1689556908129835","reason":"NONE"}}]}]}`, func(t *testing.T, p *WebhookPayload) {
			v := p.Entry[0].Changes[0].Value
			if v.MessageTemplateID != "1689556908129835" || v.Event != "APPROVED" || v.Reason != "NONE" {
				t.Errorf("value = %+v", v)
			}
		}},
		{"null message", wrap(`{"messages":[null,{"id":"wamid.N","type":"request_welcome"}]}`), func(t *testing.T, p *WebhookPayload) {
			ms := p.Entry[0].Changes[0].Value.Messages
			if len(ms) != 2 || ms[1].Type != "request_welcome" {
				t.Errorf("messages = %+v", ms)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParseWebhook([]byte(tt.body))
			if err != nil {
				t.Fatalf("ParseWebhook: %v", err)
			}
			tt.check(t, p)
		})
	}
}

func TestTimestamps(t *testing.T) {
	for _, tt := range []struct {
		in   string
		ok   bool
		want int64
	}{
		{"1735689600", true, 1735689600},
		{" 1735689600 ", true, 1735689600},
		{"", false, 0},
		{"0", false, 0},
		{"-5", false, 0},
		{"1735689600.5", false, 0},
		{"soon", false, 0},
	} {
		got, ok := Status{Timestamp: tt.in}.Time()
		if ok != tt.ok || (ok && (!got.Equal(time.Unix(tt.want, 0)) || got.Location() != time.UTC)) {
			t.Errorf("Status{%q}.Time() = %v, %v", tt.in, got, ok)
		}
		if got2, ok2 := (InboundMessage{Timestamp: tt.in}).Time(); ok2 != ok || !got2.Equal(got) {
			t.Errorf("InboundMessage{%q}.Time() = %v, %v", tt.in, got2, ok2)
		}
	}
}

func TestTextContentNeedsMatchingPayload(t *testing.T) {
	for _, m := range []InboundMessage{
		{Type: "text"},
		{Type: "button"},
		{Type: "interactive"},
		{Type: "interactive", Interactive: &Interactive{Type: "nfm_reply", NFMReply: &NFMReply{Body: "Sent"}}},
		{Type: "image", Text: &Text{Body: "stray"}},
	} {
		if got := m.TextContent(); got != "" {
			t.Errorf("%+v.TextContent() = %q, want empty", m, got)
		}
	}
}

func FuzzParseWebhook(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"entry":[{"changes":[{"value":{"messages":[{"location":{"latitude":[]}}]}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := ParseWebhook(body)
		if (err == nil) == (p == nil) {
			t.Fatalf("ParseWebhook returned %v, %v", p, err)
		}
	})
}
