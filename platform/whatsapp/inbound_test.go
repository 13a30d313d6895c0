package whatsapp

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// parsedView is what a golden file holds for each inbound message: the typed message, its
// sender and its parse error.
type parsedView struct {
	Sender  Sender         `json:"sender"`
	Err     string         `json:"err,omitempty"`
	Message InboundMessage `json:"message"`
}

// Every recorded inbound message parses to its golden value (testdata/parsed/<name>.golden):
// every typed field, the joined sender, and no error. Messages from senders known only by a
// user id are in bsuid_*.json.
func TestInboundMessagesGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "message_*.json"))
	bsuid, err2 := filepath.Glob(filepath.Join("testdata", "bsuid_*.json"))
	files = append(files, bsuid...)
	if err != nil || err2 != nil || len(files) < 30 || len(bsuid) < 2 {
		t.Fatalf("found %d message fixtures (%v, %v)", len(files), err, err2)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			p, err := ParseWebhook(readTestdata(t, filepath.Base(f)))
			if err != nil {
				t.Fatal(err)
			}
			var views []parsedView
			for _, e := range p.Entry {
				for _, c := range e.Changes {
					if c.Value.Err != nil {
						t.Errorf("change Err = %v", c.Value.Err)
					}
					for _, m := range c.Value.Messages {
						v := parsedView{Sender: m.Sender, Message: m}
						if m.Err != nil {
							v.Err = m.Err.Error()
							t.Errorf("%s: Err = %v", m.ID, m.Err)
						}
						views = append(views, v)
					}
				}
			}
			if len(views) != 1 {
				t.Fatalf("%d messages, want 1", len(views))
			}
			got, err := json.MarshalIndent(views[0], "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "parsed", name+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("parsed value differs from %s\n got: %s\nwant: %s", golden, got, want)
			}
		})
	}
}

// onlyMessage parses a fixture holding one message and returns it.
func onlyMessage(t *testing.T, name string) InboundMessage {
	t.Helper()
	v := onlyChange(t, parseFixture(t, name)).Value
	if len(v.Messages) != 1 {
		t.Fatalf("%s: %d messages", name, len(v.Messages))
	}
	m := v.Messages[0]
	if m.Err != nil {
		t.Fatalf("%s: Err = %v", name, m.Err)
	}
	return m
}

func TestInboundNewKinds(t *testing.T) {
	t.Run("flow answers", func(t *testing.T) {
		m := onlyMessage(t, "message_interactive_nfm_reply.json")
		r := m.Interactive.NFMReply
		if m.Interactive.Type != InteractiveNFMReply || r == nil || r.Name != "flow" || r.Body != "Sent" || r.FlowToken != "appt-7f3c21" {
			t.Fatalf("nfm_reply = %+v", r)
		}
		var answers map[string]any
		if err := json.Unmarshal(r.ResponseJSON, &answers); err != nil {
			t.Fatalf("ResponseJSON %s: %v", r.ResponseJSON, err)
		}
		if answers["slot"] != "2026-12-01T09:30" || answers["party_size"] != float64(2) || answers["notes"] != "Window seat ❤" {
			t.Errorf("answers = %v", answers)
		}
		if m.TextContent() != "" {
			t.Errorf("TextContent = %q", m.TextContent())
		}
	})
	t.Run("click-to-WhatsApp referral", func(t *testing.T) {
		m := onlyMessage(t, "message_referral.json")
		want := Referral{SourceURL: "https://fb.me/3cr4Wqqkv", SourceID: "120210433592280123", SourceType: "ad",
			Headline: "Blue sneakers, 20% off", Body: "Tap to chat with us", MediaType: "video",
			VideoURL:     "https://video.xx.fbcdn.net/v/t42.1790-2/ad.mp4",
			ThumbnailURL: "https://scontent.xx.fbcdn.net/v/t15.5256-10/thumb.jpg",
			CtwaClid:     "ARAkLkA8rmlFeiCktEJQ-QTwRiyYHAFDLMNDBH0CD3qpjd0HR4irJ6LEkR7JwFF4XvnO2E4Nx0-eM-GABDLOPaOdRMv-_zfUQ2a"}
		if m.Referral == nil || *m.Referral != want || m.TextContent() != "Can I get more info about this?" {
			t.Errorf("referral = %+v", m.Referral)
		}
		if m.Window() != 72*time.Hour || onlyMessage(t, "message_text.json").Window() != 24*time.Hour {
			t.Errorf("windows = %v", m.Window())
		}
	})
	t.Run("username-only sender", func(t *testing.T) {
		m := onlyMessage(t, "bsuid_username_only.json")
		want := Sender{UserID: "BR.13491208655302741918", ParentUserID: "BR.ENT.11815799212886844830", Username: "ana.makes", Name: "Ana Lima"}
		if m.From != "" || m.Sender != want || m.TextContent() != "Olá! Is the blue one in stock?" {
			t.Errorf("from %q, sender %+v, text %q", m.From, m.Sender, m.TextContent())
		}
	})
	t.Run("number and user id together", func(t *testing.T) {
		m := onlyMessage(t, "message_text_with_user_id.json")
		want := Sender{WaID: "16505551234", UserID: "US.13491208655302741918", Username: "sheena.n", Name: "Sheena Nelson"}
		if m.Sender != want {
			t.Errorf("sender %+v", m.Sender)
		}
	})
	t.Run("number change", func(t *testing.T) {
		m := onlyMessage(t, "message_system_user_changed_number.json")
		want := System{Body: "User Sheena Nelson changed from 16505551234 to 16505559999", Type: SystemUserChangedNumber,
			WaID: "16505559999", UserID: "US.20587361049913285544", PreviousUserID: "US.13491208655302741918"}
		if m.System == nil || *m.System != want || m.Sender.WaID != "16505551234" {
			t.Errorf("system = %+v, sender %+v", m.System, m.Sender)
		}
	})
	t.Run("user id change", func(t *testing.T) {
		m := onlyMessage(t, "bsuid_system_user_changed_user_id.json")
		want := System{Body: "User Ana Lima changed their user id", Type: SystemUserChangedUserID,
			UserID: "BR.99310472285563100471", ParentUserID: "BR.ENT.11815799212886844830",
			PreviousUserID: "BR.13491208655302741918", PreviousParentUserID: "BR.ENT.11815799212886844830"}
		if m.System == nil || *m.System != want || m.Sender.UserID != "BR.13491208655302741918" {
			t.Errorf("system = %+v, sender %+v", m.System, m.Sender)
		}
	})
	t.Run("edit", func(t *testing.T) {
		m := onlyMessage(t, "message_edit.json")
		if m.Edit == nil || m.Edit.OriginalMessageID != "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=" ||
			m.Edit.Message == nil || m.Edit.Message.Type != TypeText || m.Edit.Message.TextContent() != "Is it in navy blue?" {
			t.Errorf("edit = %+v", m.Edit)
		}
	})
	t.Run("revoke", func(t *testing.T) {
		m := onlyMessage(t, "message_revoke.json")
		if m.Revoke == nil || m.Revoke.OriginalMessageID != "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=" {
			t.Errorf("revoke = %+v", m.Revoke)
		}
	})
	t.Run("forwarded media", func(t *testing.T) {
		m := onlyMessage(t, "message_forwarded.json")
		if m.Context == nil || !m.Context.Forwarded || !m.Context.FrequentlyForwarded || m.Context.ID != "" {
			t.Errorf("context = %+v", m.Context)
		}
		if md := m.Media(); md == nil || md.ID != "1457190078592240" || md.MimeType != "image/jpeg" {
			t.Errorf("media = %+v", md)
		}
	})
	t.Run("product inquiry", func(t *testing.T) {
		m := onlyMessage(t, "message_product_inquiry.json")
		if m.Context == nil || m.Context.ReferredProduct == nil ||
			*m.Context.ReferredProduct != (ReferredProduct{CatalogID: "1537321183616489", ProductRetailerID: "sku-blue-42"}) {
			t.Errorf("context = %+v", m.Context)
		}
	})
	t.Run("reaction removed", func(t *testing.T) {
		m := onlyMessage(t, "message_reaction_removed.json")
		if m.Reaction == nil || !m.Reaction.Removed() || m.Reaction.MessageID == "" {
			t.Errorf("reaction = %+v", m.Reaction)
		}
	})
	t.Run("animated sticker and voice note", func(t *testing.T) {
		if s := onlyMessage(t, "message_sticker_animated.json").Sticker; s == nil || !s.Animated {
			t.Errorf("sticker = %+v", s)
		}
		if a := onlyMessage(t, "message_audio.json").Media(); a == nil || !a.Voice {
			t.Errorf("audio = %+v", a)
		}
	})
}

// A message that cannot be typed is returned with Raw and an Err wrapping ErrUnparseableMessage,
// never dropped; the other messages of the change are unaffected.
func TestInboundUnparseableComesBackAsItemError(t *testing.T) {
	const good = `{"from":"1","id":"wamid.OK","timestamp":"1","type":"text","text":{"body":"ok"}}`
	for _, tt := range []struct {
		name, msg, why string
	}{
		{"not an object", `"hello"`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"no id", `{"from":"1","type":"text","text":{"body":"x"}}`, "without an id"},
		{"no sender", `{"id":"wamid.X","type":"text","text":{"body":"x"}}`, "without a sender"},
		{"text of the wrong type", `{"from":"1","id":"wamid.X","type":"text","text":"x"}`, "text message without a body"},
		{"image without id", `{"from":"1","id":"wamid.X","type":"image","image":{"mime_type":"image/jpeg"}}`, "image message without a media id"},
		{"document id a number", `{"from":"1","id":"wamid.X","type":"document","document":{"id":5}}`, "document message without a media id"},
		{"location missing", `{"from":"1","id":"wamid.X","type":"location"}`, "without coordinates"},
		{"location a string", `{"from":"1","id":"wamid.X","type":"location","location":"here"}`, "without coordinates"},
		{"contacts not an array", `{"from":"1","id":"wamid.X","type":"contacts","contacts":{"name":{}}}`, "without contact cards"},
		{"interactive missing", `{"from":"1","id":"wamid.X","type":"interactive"}`, "without an interactive object"},
		{"button_reply missing", `{"from":"1","id":"wamid.X","type":"interactive","interactive":{"type":"button_reply"}}`, "button_reply without"},
		{"unknown interactive", `{"from":"1","id":"wamid.X","type":"interactive","interactive":{"type":"hologram_reply"}}`, "unknown type"},
		{"flow answers not JSON", `{"from":"1","id":"wamid.X","type":"interactive","interactive":{"type":"nfm_reply","nfm_reply":{"response_json":"{oops"}}}`, "not a JSON object"},
		{"flow answers an array", `{"from":"1","id":"wamid.X","type":"interactive","interactive":{"type":"nfm_reply","nfm_reply":{"response_json":"[1]"}}}`, "not a JSON object"},
		{"button missing", `{"from":"1","id":"wamid.X","type":"button"}`, "without text or payload"},
		{"button a string", `{"from":"1","id":"wamid.X","type":"button","button":"yes"}`, "without text or payload"},
		{"interactive a string", `{"from":"1","id":"wamid.X","type":"interactive","interactive":"x"}`, "unknown type"},
		{"reaction without target", `{"from":"1","id":"wamid.X","type":"reaction","reaction":{"emoji":"x"}}`, "reaction without"},
		{"order without catalog", `{"from":"1","id":"wamid.X","type":"order","order":{"product_items":[]}}`, "without a catalog"},
		{"system without type", `{"from":"1","id":"wamid.X","type":"system","system":{"body":"b"}}`, "without a system type"},
		{"edit without original", `{"from":"1","id":"wamid.X","type":"edit","edit":{"message":{"type":"text","text":{"body":"b"}}}}`, "without the original"},
		{"edit without content", `{"from":"1","id":"wamid.X","type":"edit","edit":{"original_message_id":"wamid.O"}}`, "without the new content"},
		{"edit with bad content", `{"from":"1","id":"wamid.X","type":"edit","edit":{"original_message_id":"wamid.O","message":{"type":"image","image":{}}}}`, "edit: "},
		{"revoke without original", `{"from":"1","id":"wamid.X","type":"revoke","revoke":{}}`, "revoke without"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"entry":[{"changes":[{"field":"messages","value":{"contacts":[{"profile":{"name":"A"},"wa_id":"1"},{"profile":{"name":"B"},"wa_id":"2"}],"messages":[` + tt.msg + `,` + good + `]}}]}]}`
			p, err := ParseWebhook([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			ms := p.Entry[0].Changes[0].Value.Messages
			if len(ms) != 2 {
				t.Fatalf("%d messages", len(ms))
			}
			if !errors.Is(ms[0].Err, ErrUnparseableMessage) || !strings.Contains(ms[0].Err.Error(), tt.why) {
				t.Errorf("Err = %v, want one saying %q", ms[0].Err, tt.why)
			}
			if string(ms[0].Raw) != tt.msg {
				t.Errorf("Raw = %s, want the message as received", ms[0].Raw)
			}
			if ms[1].Err != nil || ms[1].TextContent() != "ok" || ms[1].Sender.Name != "A" {
				t.Errorf("the good message = %+v", ms[1])
			}
		})
	}
}

func TestInboundMessagesNotAnArray(t *testing.T) {
	p, err := ParseWebhook([]byte(`{"entry":[{"changes":[{"field":"messages","value":{"messages":{"id":"wamid.X"},"statuses":[{"id":"wamid.S","status":"read"}]}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	v := p.Entry[0].Changes[0].Value
	if !errors.Is(v.Err, ErrUnparseableMessage) || len(v.Messages) != 0 || len(v.Statuses) != 1 || !strings.Contains(string(v.Raw), `"wamid.X"`) {
		t.Errorf("value = %+v, Err %v", v, v.Err)
	}
	for _, fine := range []string{`"messages":[]`, `"messages":null`, `"note":"no \"messages\" here"`, `"statuses":[]`} {
		p, err := ParseWebhook([]byte(`{"entry":[{"changes":[{"field":"messages","value":{` + fine + `}}]}]}`))
		if err != nil || p.Entry[0].Changes[0].Value.Err != nil {
			t.Errorf("%s: %v, Err %v", fine, err, p.Entry[0].Changes[0].Value.Err)
		}
	}
}

// The sender is found by wa_id, else by user id, else it is the only contact when the message
// names nobody; a contact that matches neither is not taken.
func TestInboundSenderJoin(t *testing.T) {
	contacts := `"contacts":[{"profile":{"name":"Phone"},"wa_id":"111","user_id":"US.1"},{"profile":{"name":"Handle","username":"h"},"user_id":"US.2","parent_user_id":"US.ENT.9"}]`
	body := `{"entry":[{"changes":[{"field":"messages","value":{` + contacts + `,"messages":[` +
		`{"from":"111","id":"a","type":"text","text":{"body":"1"}},` +
		`{"from_user_id":"US.2","id":"b","type":"text","text":{"body":"2"}},` +
		`{"from":"333","id":"c","type":"text","text":{"body":"3"}}]}}]}]}`
	p, err := ParseWebhook([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	ms := p.Entry[0].Changes[0].Value.Messages
	want := []Sender{
		{WaID: "111", UserID: "US.1", Name: "Phone"},
		{UserID: "US.2", ParentUserID: "US.ENT.9", Username: "h", Name: "Handle"},
		{WaID: "333"},
	}
	for i, m := range ms {
		if m.Sender != want[i] || m.Err != nil {
			t.Errorf("message %s: sender %+v (err %v), want %+v", m.ID, m.Sender, m.Err, want[i])
		}
	}
	one := `{"entry":[{"changes":[{"value":{"contacts":[{"profile":{"name":"Solo"},"user_id":"US.7"}],"messages":[{"id":"d","type":"text","text":{"body":"x"}}]}}]}]}`
	p, _ = ParseWebhook([]byte(one))
	if m := p.Entry[0].Changes[0].Value.Messages[0]; m.Sender != (Sender{UserID: "US.7", Name: "Solo"}) || m.Err != nil {
		t.Errorf("only contact: sender %+v, err %v", m.Sender, m.Err)
	}
}

// Order lines take quantity and price as numbers or numeric strings.
func TestOrderItemsFlexibleNumbers(t *testing.T) {
	var it OrderItem
	if err := json.Unmarshal([]byte(`{"product_retailer_id":"s","quantity":"3","item_price":"12.5","currency":"EUR"}`), &it); err != nil {
		t.Fatal(err)
	}
	if it != (OrderItem{ProductRetailerID: "s", Quantity: 3, ItemPrice: 12.5, Currency: "EUR"}) {
		t.Errorf("item = %+v", it)
	}
}

func FuzzInboundMessage(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "message_*.json"))
	bsuid, _ := filepath.Glob(filepath.Join("testdata", "bsuid_*.json"))
	files = append(files, bsuid...)
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		p, err := ParseWebhook(b)
		if err != nil {
			continue
		}
		for _, m := range p.Entry[0].Changes[0].Value.Messages {
			f.Add([]byte(m.Raw))
		}
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		var m InboundMessage
		if err := json.Unmarshal(msg, &m); err != nil {
			return // not JSON at all: the envelope parse refuses such a body before
		}
		if !bytes.Equal(m.Raw, bytes.TrimSpace(msg)) {
			t.Fatalf("Raw = %q, want %q", m.Raw, msg)
		}
		if m.Err != nil && !errors.Is(m.Err, ErrUnparseableMessage) {
			t.Fatalf("Err %v does not wrap ErrUnparseableMessage", m.Err)
		}
		if m.Err == nil && m.Type == TypeInteractive && m.Interactive.NFMReply != nil && len(m.Interactive.NFMReply.ResponseJSON) > 0 {
			var obj map[string]json.RawMessage
			if json.Unmarshal(m.Interactive.NFMReply.ResponseJSON, &obj) != nil {
				t.Fatalf("ResponseJSON %q is not an object", m.Interactive.NFMReply.ResponseJSON)
			}
		}
	})
}
