package whatsapp

import (
	"encoding/json"
	"errors"
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
