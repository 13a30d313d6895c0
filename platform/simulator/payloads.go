package simulator

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// SignatureHeader is the header that carries the webhook signature.
const SignatureHeader = "X-Hub-Signature-256"

// Sign returns the X-Hub-Signature-256 value for body: "sha256=" followed by
// the lower-case hex HMAC-SHA256 of the raw body under the app secret. It
// never fails.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// metaJSON encodes v the way Meta serialises webhook payloads: no HTML
// escaping, every non-ASCII character as \uXXXX (surrogate pairs above the
// BMP) and '/' as "\/". A receiver that re-serialises before checking the
// signature therefore fails, as it would against Meta. It fails only when v
// cannot be encoded as JSON.
func metaJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	raw := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	out := make([]byte, 0, len(raw)+len(raw)/8)
	for i := 0; i < len(raw); {
		c := raw[i]
		if c == '/' {
			out = append(out, '\\', '/')
			i++
			continue
		}
		if c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		i += size
		if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
	}
	return out, nil
}

// ---- envelope ----

type envelope struct {
	Object string  `json:"object"`
	Entry  []entry `json:"entry"`
}

type entry struct {
	ID      string   `json:"id"`
	Time    int64    `json:"time,omitempty"`
	Changes []change `json:"changes"`
}

type change struct {
	Value any    `json:"value"`
	Field string `json:"field"`
}

type metadata struct {
	DisplayPhoneNumber string `json:"display_phone_number"`
	PhoneNumberID      string `json:"phone_number_id"`
}

type messagesValue struct {
	MessagingProduct string           `json:"messaging_product"`
	Metadata         metadata         `json:"metadata"`
	Contacts         []inboundContact `json:"contacts,omitempty"`
	Messages         []inboundMessage `json:"messages,omitempty"`
	Statuses         []statusObject   `json:"statuses,omitempty"`
}

// inboundContact is value.contacts[i]: wa_id only when the user's number may be shared,
// user_id always (since April 2026).
type inboundContact struct {
	Profile      profile `json:"profile"`
	WaID         string  `json:"wa_id,omitempty"`
	UserID       string  `json:"user_id,omitempty"`
	ParentUserID string  `json:"parent_user_id,omitempty"`
}

type profile struct {
	Name     string `json:"name"`
	Username string `json:"username,omitempty"`
}

// inboundMessage is value.messages[i]; its payload sits under the key named
// by its type, so it marshals itself.
type inboundMessage struct {
	Context          *messageContext
	From             string // omitted when empty (a username-only sender)
	FromUserID       string
	FromParentUserID string
	ID               string
	Timestamp        string
	Type             string
	Referral         any // click-to-WhatsApp ad data; omitted when nil
	Errors           any // for unsupported messages; omitted when nil
	Payload          any // under the key Type; omitted when nil
}

type messageContext struct {
	From                string `json:"from,omitempty"`
	ID                  string `json:"id,omitempty"`
	Forwarded           bool   `json:"forwarded,omitempty"`
	FrequentlyForwarded bool   `json:"frequently_forwarded,omitempty"`
}

// MarshalJSON writes {context?, from?, from_user_id?, from_parent_user_id?, id, timestamp,
// type, referral?, errors?, <type>: payload?}.
func (m inboundMessage) MarshalJSON() ([]byte, error) {
	type kv struct {
		k string
		v any
	}
	var fields []kv
	add := func(k string, v any, keep bool) {
		if keep {
			fields = append(fields, kv{k, v})
		}
	}
	add("context", m.Context, m.Context != nil)
	add("from", m.From, m.From != "")
	add("from_user_id", m.FromUserID, m.FromUserID != "")
	add("from_parent_user_id", m.FromParentUserID, m.FromParentUserID != "")
	add("id", m.ID, true)
	add("timestamp", m.Timestamp, true)
	add("type", m.Type, true)
	add("referral", m.Referral, m.Referral != nil)
	add("errors", m.Errors, m.Errors != nil)
	add(m.Type, m.Payload, m.Payload != nil && m.Type != "errors")
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.k)
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type statusObject struct {
	ID                    string        `json:"id"`
	Status                string        `json:"status"`
	Timestamp             string        `json:"timestamp"`
	RecipientID           string        `json:"recipient_id,omitempty"`      // omitted for a send to a user id whose number is not shared
	RecipientUserID       string        `json:"recipient_user_id,omitempty"` // the recipient's business-scoped user id, when known
	BizOpaqueCallbackData string        `json:"biz_opaque_callback_data,omitempty"`
	Conversation          *conversation `json:"conversation,omitempty"`
	Pricing               *pricing      `json:"pricing,omitempty"`
	Errors                []statusError `json:"errors,omitempty"`
}

type conversation struct {
	ID                  string `json:"id"`
	ExpirationTimestamp string `json:"expiration_timestamp,omitempty"`
	Origin              origin `json:"origin"`
}

type origin struct {
	Type string `json:"type"`
}

type pricing struct {
	Billable     bool   `json:"billable"`
	PricingModel string `json:"pricing_model"`
	Type         string `json:"type"`
	Category     string `json:"category"`
}

type templateStatusValue struct {
	Event                   string `json:"event"`
	MessageTemplateID       int64  `json:"message_template_id"`
	MessageTemplateName     string `json:"message_template_name"`
	MessageTemplateLanguage string `json:"message_template_language"`
	MessageTemplateCategory string `json:"message_template_category,omitempty"`
	Reason                  string `json:"reason"`
}

// messagesEnvelope wraps a messages-field value for a WABA.
func messagesEnvelope(wabaID string, v messagesValue) envelope {
	v.MessagingProduct = "whatsapp"
	return envelope{
		Object: "whatsapp_business_account",
		Entry:  []entry{{ID: wabaID, Changes: []change{{Value: v, Field: "messages"}}}},
	}
}

// templateStatusEnvelope builds a message_template_status_update delivery.
// It fails when the template id is not a decimal number.
func templateStatusEnvelope(wabaID string, unix int64, t Template, event, reason string) (envelope, error) {
	id, err := strconv.ParseInt(t.ID, 10, 64)
	if err != nil {
		return envelope{}, fmt.Errorf("simulator: template id %q is not numeric: %w", t.ID, err)
	}
	if reason == "" {
		reason = "NONE"
	}
	v := templateStatusValue{
		Event:                   event,
		MessageTemplateID:       id,
		MessageTemplateName:     t.Name,
		MessageTemplateLanguage: t.Language,
		MessageTemplateCategory: t.Category,
		Reason:                  reason,
	}
	return envelope{
		Object: "whatsapp_business_account",
		Entry:  []entry{{ID: wabaID, Time: unix, Changes: []change{{Value: v, Field: "message_template_status_update"}}}},
	}, nil
}
