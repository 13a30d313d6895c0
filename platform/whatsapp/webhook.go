package whatsapp

import (
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

	Raw json.RawMessage `json:"-"` // the whole value as received
}

// Metadata identifies the business number a "messages" change is about.
type Metadata struct {
	DisplayPhoneNumber string `json:"display_phone_number"`
	PhoneNumberID      string `json:"phone_number_id"` // route tenants by this, never by the display number
}

// Contact is the sender profile that accompanies inbound messages.
type Contact struct {
	Profile Profile `json:"profile"`
	WaID    string  `json:"wa_id,omitempty"`   // may be absent for username-only users
	UserID  string  `json:"user_id,omitempty"` // business-scoped user id (newer payloads)
}

// Profile is a WhatsApp user's public profile.
type Profile struct {
	Name     string `json:"name"`
	Username string `json:"username,omitempty"`
}

// InboundMessage is a message a user sent to the business. Exactly one of the
// typed payload fields is normally set, matching Type; a type this package does not
// know is still returned, with its content only in Raw.
type InboundMessage struct {
	From      string          `json:"from"`      // sender's wa_id
	ID        string          `json:"id"`        // wamid
	Timestamp string          `json:"timestamp"` // unix seconds
	Type      string          `json:"type"`      // text, image, audio, video, document, sticker, location, contacts, interactive, button, reaction, order, system, unsupported, ...
	Context   *MessageContext `json:"context,omitempty"`
	Referral  json.RawMessage `json:"referral,omitempty"` // click-to-WhatsApp ad data

	Text        *Text           `json:"text,omitempty"`
	Image       *Media          `json:"image,omitempty"`
	Video       *Media          `json:"video,omitempty"`
	Audio       *Media          `json:"audio,omitempty"`
	Document    *Media          `json:"document,omitempty"`
	Sticker     *Media          `json:"sticker,omitempty"`
	Location    *Location       `json:"location,omitempty"`
	Contacts    json.RawMessage `json:"contacts,omitempty"` // shared contact cards, as received
	Interactive *Interactive    `json:"interactive,omitempty"`
	Button      *Button         `json:"button,omitempty"`
	Reaction    *Reaction       `json:"reaction,omitempty"`
	Order       *Order          `json:"order,omitempty"`
	System      *System         `json:"system,omitempty"`
	Errors      []StatusError   `json:"errors,omitempty"` // for unsupported messages (131051)

	Raw json.RawMessage `json:"-"` // the whole message as received
}

// MessageContext points at the message this one replies to or was triggered by.
type MessageContext struct {
	From                string `json:"from,omitempty"`
	ID                  string `json:"id,omitempty"` // wamid of the earlier message (for "button", the template's)
	Forwarded           bool   `json:"forwarded,omitempty"`
	FrequentlyForwarded bool   `json:"frequently_forwarded,omitempty"`
}

// Text is the content of a text message.
type Text struct {
	Body string `json:"body"`
}

// Media is the content of an image, video, audio, document or sticker message.
type Media struct {
	ID       string `json:"id"` // media id, to download through the Graph API
	MimeType string `json:"mime_type,omitempty"`
	SHA256   string `json:"sha256,omitempty"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"` // documents
	Voice    bool   `json:"voice,omitempty"`    // audio: a voice note
	Animated bool   `json:"animated,omitempty"` // stickers
}

// Location is the content of a location message.
type Location struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
	URL       string  `json:"url,omitempty"`
}

// Interactive is a reply to an interactive message: Type is "button_reply",
// "list_reply" or "nfm_reply" (a Flow), with the matching field set.
type Interactive struct {
	Type        string       `json:"type"`
	ButtonReply *ButtonReply `json:"button_reply,omitempty"`
	ListReply   *ListReply   `json:"list_reply,omitempty"`
	NFMReply    *NFMReply    `json:"nfm_reply,omitempty"`
}

// ButtonReply is a tap on a reply button.
type ButtonReply struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// ListReply is a choice from a list message.
type ListReply struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

// NFMReply is a Flow's response.
type NFMReply struct {
	Name         string `json:"name,omitempty"`
	Body         string `json:"body,omitempty"`
	ResponseJSON string `json:"response_json,omitempty"`
}

// Button is a quick-reply tap on a template message.
type Button struct {
	Text    string `json:"text"`
	Payload string `json:"payload"`
}

// Reaction is an emoji reaction; an empty Emoji means the reaction was removed.
type Reaction struct {
	MessageID string `json:"message_id"`
	Emoji     string `json:"emoji"`
}

// Order is a cart sent from a catalog.
type Order struct {
	CatalogID    string      `json:"catalog_id"`
	Text         string      `json:"text,omitempty"`
	ProductItems []OrderItem `json:"product_items"`
}

// OrderItem is one line of an Order.
type OrderItem struct {
	ProductRetailerID string  `json:"product_retailer_id"`
	Quantity          int     `json:"quantity"`
	ItemPrice         float64 `json:"item_price"`
	Currency          string  `json:"currency"`
}

// System is a system message, e.g. Type "user_changed_number" with the new wa_id.
type System struct {
	Body string `json:"body"`
	WaID string `json:"wa_id,omitempty"`
	Type string `json:"type"`
}

// Status is a delivery report for a message the business sent.
type Status struct {
	ID                    string        `json:"id"`           // wamid of the sent message
	Status                string        `json:"status"`       // sent, delivered, read, failed, played
	Timestamp             string        `json:"timestamp"`    // unix seconds
	RecipientID           string        `json:"recipient_id"` // wa_id; may differ from the number sent to
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
// fails: fields of an unexpected JSON type are left empty.
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
	v.Raw = append(json.RawMessage(nil), data...)
	return nil
}

// UnmarshalJSON decodes a message leniently and keeps it in Raw. It never fails:
// fields of an unexpected JSON type are left empty, and a numeric timestamp is
// accepted.
func (m *InboundMessage) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		return nil
	}
	type plain InboundMessage
	aux := struct {
		*plain
		Timestamp flexString `json:"timestamp"`
	}{plain: (*plain)(m)}
	_ = lenientUnmarshal(data, &aux)
	m.Timestamp = string(aux.Timestamp)
	m.Raw = append(json.RawMessage(nil), data...)
	return nil
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

// UnmarshalJSON decodes a location, accepting coordinates given as numbers or as
// numeric strings. It never fails.
func (l *Location) UnmarshalJSON(data []byte) error {
	type plain Location
	aux := struct {
		*plain
		Latitude  flexFloat `json:"latitude"`
		Longitude flexFloat `json:"longitude"`
	}{plain: (*plain)(l)}
	_ = lenientUnmarshal(data, &aux)
	l.Latitude, l.Longitude = float64(aux.Latitude), float64(aux.Longitude)
	return nil
}

// UnmarshalJSON decodes error_data given as {"details": ...} or as a plain string
// (taken as the details). It never fails.
func (d *StatusErrorData) UnmarshalJSON(data []byte) error {
	d.Details = errorDataDetails(data)
	return nil
}

// TextContent returns the text a user typed or chose: the body of a text message,
// the text of a template quick-reply button, or the title of an interactive button
// or list reply. It returns "" for every other type.
func (m InboundMessage) TextContent() string {
	switch m.Type {
	case "text":
		if m.Text != nil {
			return m.Text.Body
		}
	case "button":
		if m.Button != nil {
			return m.Button.Text
		}
	case "interactive":
		if m.Interactive == nil {
			return ""
		}
		if m.Interactive.ButtonReply != nil {
			return m.Interactive.ButtonReply.Title
		}
		if m.Interactive.ListReply != nil {
			return m.Interactive.ListReply.Title
		}
	}
	return ""
}

// Time returns the message's timestamp. ok is false when it is missing or not a
// positive number of unix seconds.
func (m InboundMessage) Time() (t time.Time, ok bool) {
	return unixSeconds(m.Timestamp)
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
