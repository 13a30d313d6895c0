package whatsapp

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrUnparseableMessage is wrapped by InboundMessage.Err for a message the platform sent that
// cannot be turned into a typed value: no id, no sender, or the payload of a known type missing
// or of the wrong shape. The message is still returned (with Raw) so the caller can dead-letter it.
var ErrUnparseableMessage = errors.New("whatsapp: unparseable inbound message")

// Message types (InboundMessage.Type) this package decodes into typed payloads. Any other type is
// kept with its content only in Raw.
const (
	TypeText           = "text"
	TypeImage          = "image"
	TypeVideo          = "video"
	TypeAudio          = "audio"
	TypeDocument       = "document"
	TypeSticker        = "sticker"
	TypeLocation       = "location"
	TypeContacts       = "contacts"
	TypeInteractive    = "interactive"
	TypeButton         = "button"
	TypeReaction       = "reaction"
	TypeOrder          = "order"
	TypeSystem         = "system"
	TypeEdit           = "edit"
	TypeRevoke         = "revoke"
	TypeUnsupported    = "unsupported"
	TypeRequestWelcome = "request_welcome"
)

// Interactive reply types (Interactive.Type).
const (
	InteractiveButtonReply = "button_reply"
	InteractiveListReply   = "list_reply"
	InteractiveNFMReply    = "nfm_reply" // a Flow's answers
)

// System message types (System.Type).
const (
	SystemUserChangedNumber = "user_changed_number"
	SystemUserChangedUserID = "user_changed_user_id"
)

// Service windows: a business may answer freely for 24 h after a customer's last message, and
// for 72 h after a message that came from a click-to-WhatsApp ad (a free entry point).
const (
	ServiceWindow    = 24 * time.Hour
	EntryPointWindow = 72 * time.Hour
)

// Contact is the sender profile that accompanies inbound messages (value.contacts[]).
type Contact struct {
	Profile      Profile `json:"profile"`
	WaID         string  `json:"wa_id,omitempty"`          // left out for a username-only user whose number is not shared
	UserID       string  `json:"user_id,omitempty"`        // business-scoped user id (BSUID); always present since April 2026
	ParentUserID string  `json:"parent_user_id,omitempty"` // the managed parent's id (contains ".ENT."), when enabled
}

// Profile is a WhatsApp user's public profile.
type Profile struct {
	Name     string `json:"name"`
	Username string `json:"username,omitempty"`
}

// Sender is who sent an inbound message, joined from the message (from, from_user_id,
// from_parent_user_id) and its entry in value.contacts[]. WaID is empty for a username-only
// user whose number the platform does not share; UserID is then the only identifier.
type Sender struct {
	WaID         string `json:"wa_id,omitempty"`          // phone-based WhatsApp id (digits)
	UserID       string `json:"user_id,omitempty"`        // business-scoped user id, e.g. "US.13491208655302741918"
	ParentUserID string `json:"parent_user_id,omitempty"` // parent business-scoped user id, e.g. "US.ENT.11815799212886844830"
	Username     string `json:"username,omitempty"`       // the user's username, when they have one
	Name         string `json:"name,omitempty"`           // profile name
}

// InboundMessage is a message a user sent to the business. The typed payload field matching
// Type is set; a type this package does not know is still returned, with its content only in
// Raw. Err is set (wrapping ErrUnparseableMessage) when the message cannot be fully typed: the
// caller should dead-letter it rather than drop it.
type InboundMessage struct {
	From             string          `json:"from,omitempty"`                // sender's wa_id; left out for username-only users
	FromUserID       string          `json:"from_user_id,omitempty"`        // sender's business-scoped user id
	FromParentUserID string          `json:"from_parent_user_id,omitempty"` // sender's parent business-scoped user id
	ID               string          `json:"id,omitempty"`                  // wamid
	Timestamp        string          `json:"timestamp,omitempty"`           // unix seconds
	Type             string          `json:"type"`                          // one of the Type constants, or a newer type
	Context          *MessageContext `json:"context,omitempty"`
	Referral         *Referral       `json:"referral,omitempty"` // set when the message came from a click-to-WhatsApp ad

	Text        *Text         `json:"text,omitempty"`
	Image       *Media        `json:"image,omitempty"`
	Video       *Media        `json:"video,omitempty"`
	Audio       *Media        `json:"audio,omitempty"`
	Document    *Media        `json:"document,omitempty"`
	Sticker     *Media        `json:"sticker,omitempty"`
	Location    *Location     `json:"location,omitempty"`
	Contacts    []ContactCard `json:"contacts,omitempty"` // shared contact cards
	Interactive *Interactive  `json:"interactive,omitempty"`
	Button      *Button       `json:"button,omitempty"`
	Reaction    *Reaction     `json:"reaction,omitempty"`
	Order       *Order        `json:"order,omitempty"`
	System      *System       `json:"system,omitempty"`
	Edit        *Edit         `json:"edit,omitempty"`
	Revoke      *Revoke       `json:"revoke,omitempty"`
	Errors      []StatusError `json:"errors,omitempty"` // for unsupported messages (131051)

	// Sender is filled by ParseWebhook from the message and value.contacts[].
	Sender Sender `json:"-"`
	// Err says why the message could not be fully parsed; nil when it was.
	Err error `json:"-"`

	Raw json.RawMessage `json:"-"` // the whole message as received
}

// MessageContext points at the message this one replies to or was triggered by, and carries
// the forwarded flags.
type MessageContext struct {
	From                string           `json:"from,omitempty"` // who sent the quoted message (the business number for our messages)
	ID                  string           `json:"id,omitempty"`   // wamid of the earlier message (for "button", the template's)
	Forwarded           bool             `json:"forwarded,omitempty"`
	FrequentlyForwarded bool             `json:"frequently_forwarded,omitempty"` // forwarded more than five times
	ReferredProduct     *ReferredProduct `json:"referred_product,omitempty"`     // the product a user asked about
}

// ReferredProduct is the catalog product a message was sent about.
type ReferredProduct struct {
	CatalogID         string `json:"catalog_id"`
	ProductRetailerID string `json:"product_retailer_id"`
}

// Referral is the click-to-WhatsApp ad or post the user came from.
type Referral struct {
	SourceURL    string `json:"source_url,omitempty"`
	SourceID     string `json:"source_id,omitempty"`
	SourceType   string `json:"source_type,omitempty"` // "ad" or "post"
	Headline     string `json:"headline,omitempty"`
	Body         string `json:"body,omitempty"`
	MediaType    string `json:"media_type,omitempty"` // "image" or "video"
	ImageURL     string `json:"image_url,omitempty"`
	VideoURL     string `json:"video_url,omitempty"`
	ThumbnailURL string `json:"thumbnail_url,omitempty"`
	CtwaClid     string `json:"ctwa_clid,omitempty"` // click id, for conversion reporting
}

// Text is the content of a text message.
type Text struct {
	Body string `json:"body"`
}

// Media is the content of an image, video, audio, document or sticker message.
type Media struct {
	ID       string `json:"id"` // media id, to look up with Client.MediaURL
	MimeType string `json:"mime_type,omitempty"`
	SHA256   string `json:"sha256,omitempty"` // of the file; base64 or hex as the platform sends it
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

// ContactCard is one shared contact card.
type ContactCard struct {
	Name      ContactName      `json:"name"`
	Phones    []ContactPhone   `json:"phones,omitempty"`
	Emails    []ContactEmail   `json:"emails,omitempty"`
	URLs      []ContactURL     `json:"urls,omitempty"`
	Addresses []ContactAddress `json:"addresses,omitempty"`
	Org       *ContactOrg      `json:"org,omitempty"`
	Birthday  string           `json:"birthday,omitempty"` // YYYY-MM-DD
}

// ContactName is a contact card's name; FormattedName is required when sending.
type ContactName struct {
	FormattedName string `json:"formatted_name"`
	FirstName     string `json:"first_name,omitempty"`
	LastName      string `json:"last_name,omitempty"`
	MiddleName    string `json:"middle_name,omitempty"`
	Suffix        string `json:"suffix,omitempty"`
	Prefix        string `json:"prefix,omitempty"`
}

// ContactPhone is a phone number on a contact card; WaID is set when it is on WhatsApp.
type ContactPhone struct {
	Phone string `json:"phone,omitempty"`
	WaID  string `json:"wa_id,omitempty"`
	Type  string `json:"type,omitempty"` // CELL, MAIN, IPHONE, HOME, WORK, ...
}

// ContactEmail is an email address on a contact card.
type ContactEmail struct {
	Email string `json:"email,omitempty"`
	Type  string `json:"type,omitempty"` // HOME, WORK
}

// ContactURL is a web address on a contact card.
type ContactURL struct {
	URL  string `json:"url,omitempty"`
	Type string `json:"type,omitempty"` // HOME, WORK
}

// ContactAddress is a postal address on a contact card.
type ContactAddress struct {
	Street      string `json:"street,omitempty"`
	City        string `json:"city,omitempty"`
	State       string `json:"state,omitempty"`
	Zip         string `json:"zip,omitempty"`
	Country     string `json:"country,omitempty"`
	CountryCode string `json:"country_code,omitempty"`
	Type        string `json:"type,omitempty"` // HOME, WORK
}

// ContactOrg is the organisation on a contact card.
type ContactOrg struct {
	Company    string `json:"company,omitempty"`
	Department string `json:"department,omitempty"`
	Title      string `json:"title,omitempty"`
}

// Interactive is a reply to an interactive message: Type is InteractiveButtonReply,
// InteractiveListReply or InteractiveNFMReply, with the matching field set.
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

// NFMReply is a Flow's answers. On the wire response_json is a string holding a JSON object;
// ResponseJSON is that object, and FlowToken its "flow_token" member when it is a string.
type NFMReply struct {
	Name         string          `json:"name,omitempty"`
	Body         string          `json:"body,omitempty"`
	ResponseJSON json.RawMessage `json:"response_json,omitempty"` // a JSON object
	FlowToken    string          `json:"flow_token,omitempty"`    // not a wire member: read from ResponseJSON

	invalid bool // response_json was present but not a JSON object
}

// Button is a quick-reply tap on a template message.
type Button struct {
	Text    string `json:"text"`
	Payload string `json:"payload"`
}

// Reaction is an emoji reaction; an empty Emoji means the reaction was removed.
type Reaction struct {
	MessageID string `json:"message_id"` // wamid of the message reacted to
	Emoji     string `json:"emoji"`
}

// Removed reports whether the reaction takes an earlier one away.
func (r Reaction) Removed() bool { return r.Emoji == "" }

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

// System is a change of the user's identity. For SystemUserChangedNumber WaID is the new
// number (when the platform shares it); for SystemUserChangedUserID UserID is the new user id.
// Both carry the previous user ids.
type System struct {
	Body                 string `json:"body,omitempty"`
	Type                 string `json:"type"`
	WaID                 string `json:"wa_id,omitempty"`                   // the new wa_id
	UserID               string `json:"user_id,omitempty"`                 // the new business-scoped user id
	ParentUserID         string `json:"parent_user_id,omitempty"`          // the new parent user id
	PreviousUserID       string `json:"previous_user_id,omitempty"`        // the user id before the change
	PreviousParentUserID string `json:"previous_parent_user_id,omitempty"` // the parent user id before the change
	Customer             string `json:"customer,omitempty"`                // older payloads: the old wa_id
}

// Edit is a user's edit of a message they sent earlier: Message holds the new content (its
// Type and typed payload; no id of its own).
type Edit struct {
	OriginalMessageID string          `json:"original_message_id"`
	Message           *InboundMessage `json:"message,omitempty"`
}

// Revoke is a user's deletion of a message they sent earlier.
type Revoke struct {
	OriginalMessageID string `json:"original_message_id"`
}

// UnmarshalJSON decodes a message leniently and keeps it in Raw. It never fails: fields of an
// unexpected JSON type are left empty, a numeric timestamp is accepted, and a payload that
// cannot be typed sets Err.
func (m *InboundMessage) UnmarshalJSON(data []byte) error {
	*m = InboundMessage{Raw: append(json.RawMessage(nil), data...)}
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		m.Err = fmt.Errorf("%w: message is not a JSON object", ErrUnparseableMessage)
		return nil
	}
	type plain InboundMessage
	aux := struct {
		*plain
		Timestamp flexString `json:"timestamp"`
	}{plain: (*plain)(m)}
	_ = lenientUnmarshal(data, &aux)
	m.Timestamp = string(aux.Timestamp)
	if why := m.contentProblem(); why != "" {
		m.Err = fmt.Errorf("%w: %s", ErrUnparseableMessage, why)
	}
	return nil
}

// contentProblem says what is missing from the payload of a known type ("" when nothing is).
func (m *InboundMessage) contentProblem() string {
	switch m.Type {
	case TypeText:
		if m.Text == nil || m.Text.Body == "" {
			return "text message without a body"
		}
	case TypeImage, TypeVideo, TypeAudio, TypeDocument, TypeSticker:
		if md := m.Media(); md == nil || md.ID == "" {
			return m.Type + " message without a media id"
		}
	case TypeLocation:
		if l := m.Location; l == nil || (l.Latitude == 0 && l.Longitude == 0 && l.Name == "" && l.Address == "") {
			return "location message without coordinates"
		}
	case TypeContacts:
		if len(m.Contacts) == 0 {
			return "contacts message without contact cards"
		}
	case TypeInteractive:
		return m.Interactive.problem()
	case TypeButton:
		if m.Button == nil || (m.Button.Text == "" && m.Button.Payload == "") {
			return "button message without text or payload"
		}
	case TypeReaction:
		if m.Reaction == nil || m.Reaction.MessageID == "" {
			return "reaction without the message reacted to"
		}
	case TypeOrder:
		if m.Order == nil || m.Order.CatalogID == "" {
			return "order without a catalog id"
		}
	case TypeSystem:
		if m.System == nil || m.System.Type == "" {
			return "system message without a system type"
		}
	case TypeEdit:
		switch {
		case m.Edit == nil || m.Edit.OriginalMessageID == "":
			return "edit without the original message id"
		case m.Edit.Message == nil:
			return "edit without the new content"
		case m.Edit.Message.Err != nil:
			return "edit: " + m.Edit.Message.Err.Error()
		}
	case TypeRevoke:
		if m.Revoke == nil || m.Revoke.OriginalMessageID == "" {
			return "revoke without the original message id"
		}
	}
	return ""
}

// problem says what is wrong with an interactive reply ("" when nothing is).
func (i *Interactive) problem() string {
	switch {
	case i == nil:
		return "interactive message without an interactive object"
	case i.Type == InteractiveButtonReply && i.ButtonReply == nil:
		return "button_reply without its object"
	case i.Type == InteractiveListReply && i.ListReply == nil:
		return "list_reply without its object"
	case i.Type == InteractiveNFMReply && i.NFMReply == nil:
		return "nfm_reply without its object"
	case i.Type == InteractiveNFMReply && i.NFMReply.invalid:
		return "nfm_reply whose response_json is not a JSON object"
	case i.Type != InteractiveButtonReply && i.Type != InteractiveListReply && i.Type != InteractiveNFMReply:
		return fmt.Sprintf("interactive reply of unknown type %q", i.Type)
	}
	return ""
}

// UnmarshalJSON decodes a Flow's answers: response_json is a string holding a JSON object (an
// object given directly is accepted too). Anything else marks the reply invalid. It never fails.
func (n *NFMReply) UnmarshalJSON(data []byte) error {
	var aux struct {
		Name         string          `json:"name"`
		Body         string          `json:"body"`
		ResponseJSON json.RawMessage `json:"response_json"`
	}
	_ = lenientUnmarshal(data, &aux)
	*n = NFMReply{Name: aux.Name, Body: aux.Body}
	raw := bytes.TrimSpace(aux.ResponseJSON)
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			n.invalid = true
			return nil
		}
		raw = bytes.TrimSpace([]byte(s))
	}
	var obj map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		n.invalid = true
		return nil
	}
	n.ResponseJSON = append(json.RawMessage(nil), raw...)
	if tok, ok := obj["flow_token"]; ok {
		_ = json.Unmarshal(tok, &n.FlowToken)
	}
	return nil
}

// UnmarshalJSON decodes a location, accepting coordinates given as numbers or as numeric
// strings. It never fails.
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

// UnmarshalJSON decodes an order line, accepting quantity and price given as numbers or as
// numeric strings. It never fails.
func (o *OrderItem) UnmarshalJSON(data []byte) error {
	type plain OrderItem
	aux := struct {
		*plain
		Quantity  flexInt   `json:"quantity"`
		ItemPrice flexFloat `json:"item_price"`
	}{plain: (*plain)(o)}
	_ = lenientUnmarshal(data, &aux)
	o.Quantity, o.ItemPrice = int(aux.Quantity), float64(aux.ItemPrice)
	return nil
}

// joinSenders fills each message's Sender from the message and the change's contacts, and sets
// Err on a message without an id or without any sender identifier.
func (v *ChangeValue) joinSenders() {
	for i := range v.Messages {
		m := &v.Messages[i]
		c := v.contactOf(m)
		m.Sender = Sender{
			WaID:         cmp.Or(m.From, c.WaID),
			UserID:       cmp.Or(m.FromUserID, c.UserID),
			ParentUserID: cmp.Or(m.FromParentUserID, c.ParentUserID),
			Username:     c.Profile.Username,
			Name:         c.Profile.Name,
		}
		if m.Type == TypeSystem && m.System != nil && m.Sender.WaID == "" && m.Sender.UserID == "" {
			// System messages come without contacts; an identity change names the person by
			// the id they had before it.
			m.Sender.UserID, m.Sender.ParentUserID = m.System.PreviousUserID, m.System.PreviousParentUserID
		}
		if m.Err != nil {
			continue
		}
		switch {
		case m.ID == "":
			m.Err = fmt.Errorf("%w: message without an id", ErrUnparseableMessage)
		case m.Sender.WaID == "" && m.Sender.UserID == "":
			m.Err = fmt.Errorf("%w: message without a sender (no from, from_user_id or contact)", ErrUnparseableMessage)
		}
	}
}

// contactOf is the value.contacts[] entry of a message's sender: the one with its wa_id or its
// user id, else the only contact when the message names no sender itself.
func (v *ChangeValue) contactOf(m *InboundMessage) Contact {
	for _, c := range v.Contacts {
		if (m.From != "" && c.WaID == m.From) || (m.FromUserID != "" && c.UserID == m.FromUserID) {
			return c
		}
	}
	if len(v.Contacts) == 1 && m.From == "" && m.FromUserID == "" {
		return v.Contacts[0]
	}
	return Contact{}
}

// Media returns the media payload of an image, video, audio, document or sticker message, and
// nil for every other type.
func (m InboundMessage) Media() *Media {
	switch m.Type {
	case TypeImage:
		return m.Image
	case TypeVideo:
		return m.Video
	case TypeAudio:
		return m.Audio
	case TypeDocument:
		return m.Document
	case TypeSticker:
		return m.Sticker
	}
	return nil
}

// TextContent returns the text a user typed or chose: the body of a text message,
// the text of a template quick-reply button, or the title of an interactive button
// or list reply. It returns "" for every other type.
func (m InboundMessage) TextContent() string {
	switch m.Type {
	case TypeText:
		if m.Text != nil {
			return m.Text.Body
		}
	case TypeButton:
		if m.Button != nil {
			return m.Button.Text
		}
	case TypeInteractive:
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

// Window returns how long the business may answer freely after this message: EntryPointWindow
// for a message from a click-to-WhatsApp ad (it carries a referral), else ServiceWindow.
func (m InboundMessage) Window() time.Duration {
	if m.Referral != nil {
		return EntryPointWindow
	}
	return ServiceWindow
}

// Time returns the message's timestamp. ok is false when it is missing or not a
// positive number of unix seconds.
func (m InboundMessage) Time() (t time.Time, ok bool) {
	return unixSeconds(m.Timestamp)
}
