package whatsapp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrMalformedPayload is wrapped by ParseWebhook's error for a body that is not a
// webhook envelope.
var ErrMalformedPayload = errors.New("whatsapp: malformed webhook payload")

// WebhookPayload is one webhook delivery (a POST body). A delivery can batch
// several entries, changes, messages and statuses.
type WebhookPayload struct {
	Object string  `json:"object"` // "whatsapp_business_account"
	Entry  []Entry `json:"entry"`
}

// Entry is the part of a delivery about one WhatsApp Business Account.
type Entry struct {
	ID      string   `json:"id"`   // the WABA id
	Time    int64    `json:"time"` // unix seconds; set for non-"messages" fields, else 0
	Changes []Change `json:"changes"`
}

// Change is one change notification. Field tells which parts of Value are set:
// "messages" fills MessagingProduct, Metadata, Contacts, Messages, Statuses and
// Errors; "message_template_status_update" fills the template fields. Other fields
// are kept in Value.Raw.
type Change struct {
	Field string      `json:"field"`
	Value ChangeValue `json:"value"`
}

// ChangeValue is the value of a change.
type ChangeValue struct {
	// "messages" field.
	MessagingProduct string           `json:"messaging_product,omitempty"`
	Metadata         Metadata         `json:"metadata"`
	Contacts         []Contact        `json:"contacts,omitempty"`
	Messages         []InboundMessage `json:"messages,omitempty"`
	Statuses         []Status         `json:"statuses,omitempty"`
	Errors           []StatusError    `json:"errors,omitempty"` // out-of-band system errors

	// "message_template_status_update" field (quality and category updates share
	// the id, name and language).
	Event                   string `json:"event,omitempty"`                     // APPROVED, REJECTED, PAUSED, DISABLED, ...
	MessageTemplateID       string `json:"message_template_id,omitempty"`       // a JSON number on the wire, kept digit for digit
	MessageTemplateName     string `json:"message_template_name,omitempty"`     //
	MessageTemplateLanguage string `json:"message_template_language,omitempty"` // locale, e.g. "en_US"
	MessageTemplateCategory string `json:"message_template_category,omitempty"` //
	Reason                  string `json:"reason,omitempty"`                    // "NONE" on approval

	// Err is set (wrapping ErrUnparseableMessage) when "messages" is present but not an
	// array: the messages in it cannot be read and the value should be dead-lettered.
	Err error `json:"-"`

	Raw json.RawMessage `json:"-"` // the whole value as received
}

// Metadata identifies the business number a "messages" change is about.
type Metadata struct {
	DisplayPhoneNumber string `json:"display_phone_number"`
	PhoneNumberID      string `json:"phone_number_id"` // route tenants by this, never by the display number
}

// Status is a delivery report for a message the business sent.
type Status struct {
	ID                    string        `json:"id"`                          // wamid of the sent message
	Status                string        `json:"status"`                      // sent, delivered, read, failed, played
	Timestamp             string        `json:"timestamp"`                   // unix seconds
	RecipientID           string        `json:"recipient_id"`                // wa_id; may differ from the number sent to; "" for a user id whose number is not shared
	RecipientUserID       string        `json:"recipient_user_id,omitempty"` // the recipient's business-scoped user id
	BizOpaqueCallbackData string        `json:"biz_opaque_callback_data,omitempty"`
	Errors                []StatusError `json:"errors,omitempty"` // set for failed
	Conversation          *Conversation `json:"conversation,omitempty"`
	Pricing               *Pricing      `json:"pricing,omitempty"`

	Raw json.RawMessage `json:"-"` // the whole status as received
}

// StatusError is an asynchronous error in a status, a message or a change value.
type StatusError struct {
	Code      int             `json:"code"`
	Title     string          `json:"title"`
	Message   string          `json:"message,omitempty"`
	Href      string          `json:"href,omitempty"`
	ErrorData StatusErrorData `json:"error_data"`
}

// StatusErrorData carries the human-readable cause of a StatusError.
type StatusErrorData struct {
	Details string `json:"details"`
}

// Conversation is the conversation a status was billed in (conversation-based
// pricing; often absent under per-message pricing).
type Conversation struct {
	ID                  string             `json:"id"`
	ExpirationTimestamp string             `json:"expiration_timestamp,omitempty"` // unix seconds; first status only
	Origin              ConversationOrigin `json:"origin"`
}

// ConversationOrigin says what opened a conversation.
type ConversationOrigin struct {
	Type string `json:"type"` // marketing, utility, authentication, service, ...
}

// Pricing is how a message was billed.
type Pricing struct {
	Billable     bool   `json:"billable"`
	PricingModel string `json:"pricing_model"` // "PMP" or the older "CBP"
	Type         string `json:"type,omitempty"`
	Category     string `json:"category"`
}

// ParseWebhook decodes a webhook POST body. It returns an error wrapping
// ErrMalformedPayload only when the body is not the envelope shape: a JSON object
// whose "object" (if present) is a string and whose "entry" is an array of objects,
// each with "changes" (if present) an array of objects. Below that everything is
// lenient: unknown fields, change fields and message types are kept, and a value of
// an unexpected JSON type leaves that one field empty. Verify the signature on the
// raw body before calling it.
func ParseWebhook(body []byte) (*WebhookPayload, error) {
	if p, ok := scanWebhook(body); ok {
		return p, nil
	}
	return parseWebhookLevels(body)
}

// parseWebhookLevels is ParseWebhook decoding level by level: the reference scanWebhook
// follows, and the path for every body scanWebhook does not take (with the precise error).
func parseWebhookLevels(body []byte) (*WebhookPayload, error) {
	top, ok := objectOf(body)
	if !ok {
		return nil, fmt.Errorf("%w: body is not a JSON object", ErrMalformedPayload)
	}
	p := &WebhookPayload{}
	if raw, ok := top["object"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &p.Object); err != nil {
			return nil, fmt.Errorf("%w: \"object\" is not a string", ErrMalformedPayload)
		}
	}
	entries, ok := arrayOf(top["entry"])
	if !ok {
		return nil, fmt.Errorf("%w: \"entry\" is not an array", ErrMalformedPayload)
	}
	p.Entry = make([]Entry, 0, len(entries))
	for i, rawEntry := range entries {
		eo, ok := objectOf(rawEntry)
		if !ok {
			return nil, fmt.Errorf("%w: entry[%d] is not an object", ErrMalformedPayload, i)
		}
		var (
			e  Entry
			id flexString
			tm flexInt
		)
		_ = id.UnmarshalJSON(eo["id"])
		_ = tm.UnmarshalJSON(eo["time"])
		e.ID, e.Time = string(id), int64(tm)
		if raw, ok := eo["changes"]; ok && !isNull(raw) {
			changes, ok := arrayOf(raw)
			if !ok {
				return nil, fmt.Errorf("%w: entry[%d].changes is not an array", ErrMalformedPayload, i)
			}
			e.Changes = make([]Change, 0, len(changes))
			for j, rawChange := range changes {
				co, ok := objectOf(rawChange)
				if !ok {
					return nil, fmt.Errorf("%w: entry[%d].changes[%d] is not an object", ErrMalformedPayload, i, j)
				}
				var (
					c     Change
					field flexString
				)
				_ = field.UnmarshalJSON(co["field"])
				c.Field = string(field)
				if raw, ok := co["value"]; ok {
					_ = c.Value.UnmarshalJSON(raw)
				}
				e.Changes = append(e.Changes, c)
			}
		}
		p.Entry = append(p.Entry, e)
	}
	return p, nil
}

// UnmarshalJSON decodes a change value leniently and keeps it in Raw. It never
// fails: fields of an unexpected JSON type are left empty. Each inbound message gets
// its Sender, and Err when it cannot be typed; "messages" that is not an array sets Err.
func (v *ChangeValue) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		return nil
	}
	type plain ChangeValue
	aux := struct {
		*plain
		MessageTemplateID flexString `json:"message_template_id"`
	}{plain: (*plain)(v)}
	_ = lenientUnmarshal(data, &aux)
	v.MessageTemplateID = string(aux.MessageTemplateID)
	if len(v.Messages) > 0 {
		v.joinSenders()
	} else if bytes.Contains(data, []byte(`"messages"`)) && !messagesIsArray(data) {
		v.Err = fmt.Errorf("%w: \"messages\" is not an array", ErrUnparseableMessage)
	}
	v.Raw = append(json.RawMessage(nil), data...)
	return nil
}

// messagesIsArray reports whether a change value's "messages" is absent, null or an array (a
// second look, taken only when the decode found no messages).
func messagesIsArray(data []byte) bool {
	var probe struct {
		Messages json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(data, &probe) != nil {
		return true // not an object: nothing was lost to a wrong "messages"
	}
	raw := bytes.TrimSpace(probe.Messages)
	return len(raw) == 0 || isNull(raw) || raw[0] == '['
}

// UnmarshalJSON decodes a status leniently and keeps it in Raw. It never fails:
// fields of an unexpected JSON type are left empty, and a numeric timestamp is
// accepted.
func (s *Status) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		return nil
	}
	type plain Status
	aux := struct {
		*plain
		Timestamp flexString `json:"timestamp"`
	}{plain: (*plain)(s)}
	_ = lenientUnmarshal(data, &aux)
	s.Timestamp = string(aux.Timestamp)
	s.Raw = append(json.RawMessage(nil), data...)
	return nil
}

// UnmarshalJSON decodes a conversation, accepting a numeric expiration timestamp.
// It never fails.
func (c *Conversation) UnmarshalJSON(data []byte) error {
	type plain Conversation
	aux := struct {
		*plain
		ExpirationTimestamp flexString `json:"expiration_timestamp"`
	}{plain: (*plain)(c)}
	_ = lenientUnmarshal(data, &aux)
	c.ExpirationTimestamp = string(aux.ExpirationTimestamp)
	return nil
}

// UnmarshalJSON decodes error_data given as {"details": ...} or as a plain string
// (taken as the details). It never fails.
func (d *StatusErrorData) UnmarshalJSON(data []byte) error {
	d.Details = errorDataDetails(data)
	return nil
}

// Time returns the status's timestamp (when the platform says the status happened,
// not when the webhook arrived). ok is false when it is missing or not a positive
// number of unix seconds.
func (s Status) Time() (t time.Time, ok bool) {
	return unixSeconds(s.Timestamp)
}

func unixSeconds(s string) (time.Time, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}, false
	}
	return time.Unix(n, 0).UTC(), true
}
