package domain

import (
	"encoding/json"
)

// The content of what customers send, shaped as the events carry it (openapi.yaml,
// MessageReceivedData and its Received* union members). The API's platform webhook turns the
// platform's wire format into these types; the domain decides which kind a message is and
// which fields its event gets.

// Message kinds: the `type` of a message.received (and message.edited) event, each with the
// object of the same name (text: the `text` string). The union in openapi.yaml is closed over
// exactly these: a message of any other platform type is delivered as KindUnsupported, naming
// the platform's type, so a receiver's switch over `type` covers every body it can get.
const (
	KindText           = "text"
	KindImage          = "image"
	KindVideo          = "video"
	KindAudio          = "audio"
	KindDocument       = "document"
	KindSticker        = "sticker"
	KindLocation       = "location"
	KindContacts       = "contacts"
	KindInteractive    = "interactive"
	KindButton         = "button"
	KindReaction       = "reaction"
	KindOrder          = "order"
	KindSystem         = "system"
	KindUnsupported    = "unsupported"
	KindRequestWelcome = "request_welcome"
)

// MessageKinds are every kind a message.received event names, in openapi.yaml's order.
var MessageKinds = []string{KindText, KindImage, KindVideo, KindAudio, KindDocument, KindSticker, KindLocation,
	KindContacts, KindInteractive, KindButton, KindReaction, KindOrder, KindSystem, KindUnsupported, KindRequestWelcome}

// InboundContent is the typed content of a message: the field of its platform type is set (a
// text message's Text, an image's Image, ...); the others are nil.
type InboundContent struct {
	Text        *string
	Image       *MediaContent
	Video       *MediaContent
	Audio       *MediaContent
	Document    *MediaContent
	Sticker     *MediaContent
	Location    *Location
	Contacts    []ContactCard
	Interactive *Interactive
	Button      *Button
	Reaction    *Reaction
	Order       *Order
	System      *SystemNotice
	Unsupported *Unsupported
}

// MediaContent is an image, video, audio, document or sticker: the platform's media id and what the
// platform says of the file. Filename is a document's, Voice an audio's, Animated a sticker's.
type MediaContent struct {
	ID       string `json:"id"`
	MimeType string `json:"mime_type,omitempty"`
	SHA256   string `json:"sha256,omitempty"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"`
	Voice    bool   `json:"voice,omitempty"`
	Animated bool   `json:"animated,omitempty"`
}

// Location is a place the customer shared.
type Location struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
	URL       string  `json:"url,omitempty"`
}

// ContactCard is one contact card the customer shared.
type ContactCard struct {
	Name      ContactCardName  `json:"name"`
	Phones    []ContactPhone   `json:"phones,omitempty"`
	Emails    []ContactEmail   `json:"emails,omitempty"`
	URLs      []ContactURL     `json:"urls,omitempty"`
	Addresses []ContactAddress `json:"addresses,omitempty"`
	Org       *ContactOrg      `json:"org,omitempty"`
	Birthday  string           `json:"birthday,omitempty"`
}

// ContactCardName is a contact card's name.
type ContactCardName struct {
	FormattedName string `json:"formatted_name"`
	FirstName     string `json:"first_name,omitempty"`
	LastName      string `json:"last_name,omitempty"`
	MiddleName    string `json:"middle_name,omitempty"`
	Suffix        string `json:"suffix,omitempty"`
	Prefix        string `json:"prefix,omitempty"`
}

// ContactPhone is a number on a contact card; WaID is set when it is on WhatsApp.
type ContactPhone struct {
	Phone string `json:"phone,omitempty"`
	WaID  string `json:"wa_id,omitempty"`
	Type  string `json:"type,omitempty"`
}

// ContactEmail is an email address on a contact card.
type ContactEmail struct {
	Email string `json:"email,omitempty"`
	Type  string `json:"type,omitempty"`
}

// ContactURL is a web address on a contact card.
type ContactURL struct {
	URL  string `json:"url,omitempty"`
	Type string `json:"type,omitempty"`
}

// ContactAddress is a postal address on a contact card.
type ContactAddress struct {
	Street      string `json:"street,omitempty"`
	City        string `json:"city,omitempty"`
	State       string `json:"state,omitempty"`
	Zip         string `json:"zip,omitempty"`
	Country     string `json:"country,omitempty"`
	CountryCode string `json:"country_code,omitempty"`
	Type        string `json:"type,omitempty"`
}

// ContactOrg is the organisation on a contact card.
type ContactOrg struct {
	Company    string `json:"company,omitempty"`
	Department string `json:"department,omitempty"`
	Title      string `json:"title,omitempty"`
}

// Interactive is a reply to an interactive message: Type is button_reply, list_reply or
// nfm_reply (a Flow's answers), with the matching field set.
type Interactive struct {
	Type        string     `json:"type"`
	ButtonReply *ReplyRow  `json:"button_reply,omitempty"`
	ListReply   *ReplyRow  `json:"list_reply,omitempty"`
	NFMReply    *FlowReply `json:"nfm_reply,omitempty"`
}

// ReplyRow is the reply button or list row the customer chose.
type ReplyRow struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

// FlowReply is a Flow's answers: Response is the object the platform sends as a JSON string.
type FlowReply struct {
	Name      string          `json:"name,omitempty"`
	Body      string          `json:"body,omitempty"`
	Response  json.RawMessage `json:"response"`
	FlowToken string          `json:"flow_token,omitempty"`
}

// Button is a tap on a template's quick-reply button.
type Button struct {
	Payload string `json:"payload"`
	Text    string `json:"text"`
}

// Reaction is an emoji reaction to a message (PlatformMessageID); an empty Emoji takes an
// earlier reaction away.
type Reaction struct {
	PlatformMessageID string
	Emoji             string
}

// Order is a cart the customer sent from a catalog.
type Order struct {
	CatalogID string      `json:"catalog_id"`
	Text      string      `json:"text,omitempty"`
	Items     []OrderItem `json:"items"`
}

// OrderItem is one line of an Order.
type OrderItem struct {
	ProductRetailerID string  `json:"product_retailer_id"`
	Quantity          int     `json:"quantity"`
	ItemPrice         float64 `json:"item_price"`
	Currency          string  `json:"currency"`
}

// SystemNotice is a notice of the platform about the customer. Identity changes (Type
// user_changed_number, user_changed_user_id) change the contact instead of being a message;
// the identifiers they carry are the json:"-" fields.
type SystemNotice struct {
	Type string `json:"type"`
	Body string `json:"body,omitempty"`

	NewWaID              string `json:"-"` // user_changed_number: the new number, when shared
	NewUserID            string `json:"-"` // the user id from now on
	NewParentUserID      string `json:"-"`
	PreviousUserID       string `json:"-"`
	PreviousParentUserID string `json:"-"`
}

// Unsupported is a message the platform could not deliver to the API (Errors say why), or of
// a platform type the gateway does not know (PlatformType names it).
type Unsupported struct {
	PlatformType string             `json:"platform_type,omitempty"`
	Errors       []UnsupportedError `json:"errors,omitempty"`
}

// UnsupportedError is one error the platform gave for an unsupported message.
type UnsupportedError struct {
	Code    int    `json:"code,omitempty"`
	Title   string `json:"title,omitempty"`
	Message string `json:"message,omitempty"`
	Details string `json:"details,omitempty"`
}

// Referral is the click-to-WhatsApp ad or post a message came from.
type Referral struct {
	SourceURL    string `json:"source_url,omitempty"`
	SourceID     string `json:"source_id,omitempty"`
	SourceType   string `json:"source_type,omitempty"`
	Headline     string `json:"headline,omitempty"`
	Body         string `json:"body,omitempty"`
	MediaType    string `json:"media_type,omitempty"`
	ImageURL     string `json:"image_url,omitempty"`
	VideoURL     string `json:"video_url,omitempty"`
	ThumbnailURL string `json:"thumbnail_url,omitempty"`
	CtwaClid     string `json:"ctwa_clid,omitempty"`
}

// ReferredProduct is the catalog product a message asks about.
type ReferredProduct struct {
	CatalogID         string `json:"catalog_id"`
	ProductRetailerID string `json:"product_retailer_id"`
}

// messageRef names a message by the platform's id and, when it is the account's, by ours.
type messageRef struct {
	MessageID         int64  `json:"message_id,omitempty"`
	PlatformMessageID string `json:"platform_message_id"`
}

// Kind returns the event kind of a message of the platform's type platformType with content
// c: the platform type when it is one of MessageKinds and its content is there, else
// KindUnsupported (with c.Unsupported naming the platform's type when the platform gave no
// error of its own).
func (c *InboundContent) Kind(platformType string) string {
	ok := false
	switch platformType {
	case KindText:
		ok = c.Text != nil
	case KindImage:
		ok = c.Image != nil
	case KindVideo:
		ok = c.Video != nil
	case KindAudio:
		ok = c.Audio != nil
	case KindDocument:
		ok = c.Document != nil
	case KindSticker:
		ok = c.Sticker != nil
	case KindLocation:
		ok = c.Location != nil
	case KindContacts:
		ok = len(c.Contacts) > 0
	case KindInteractive:
		ok = c.Interactive != nil
	case KindButton:
		ok = c.Button != nil
	case KindReaction:
		ok = c.Reaction != nil
	case KindOrder:
		ok = c.Order != nil
	case KindSystem:
		ok = c.System != nil
	case KindRequestWelcome:
		ok = true
	}
	if ok {
		return platformType
	}
	if c.Unsupported == nil {
		c.Unsupported = &Unsupported{}
	}
	if platformType != KindUnsupported && platformType != "unknown" && c.Unsupported.PlatformType == "" && len(c.Unsupported.Errors) == 0 {
		c.Unsupported.PlatformType = platformType
	}
	return KindUnsupported
}

// TypedText returns what the customer typed or chose: a text's body, a quick-reply button's
// text, or the title of a reply button or list row; "" for every other kind.
func (c InboundContent) TypedText(kind string) string {
	switch {
	case kind == KindText && c.Text != nil:
		return *c.Text
	case kind == KindButton && c.Button != nil:
		return c.Button.Text
	case kind == KindInteractive && c.Interactive != nil && c.Interactive.ButtonReply != nil:
		return c.Interactive.ButtonReply.Title
	case kind == KindInteractive && c.Interactive != nil && c.Interactive.ListReply != nil:
		return c.Interactive.ListReply.Title
	}
	return ""
}

// receivedFields are the kind-specific members of a message.received (or message.edited)
// event's data: the v1 members (text, media, location, reply, reaction: kept as they were)
// and the kind's own object. The store adds the members every message has.
type receivedFields struct {
	Text            *string          `json:"text,omitempty"`
	Media           *v1Media         `json:"media,omitempty"`
	Reply           *v1Reply         `json:"reply,omitempty"`
	Image           *MediaContent    `json:"image,omitempty"`
	Video           *MediaContent    `json:"video,omitempty"`
	Audio           *MediaContent    `json:"audio,omitempty"`
	Document        *MediaContent    `json:"document,omitempty"`
	Sticker         *MediaContent    `json:"sticker,omitempty"`
	Location        *Location        `json:"location,omitempty"`
	Contacts        []ContactCard    `json:"contacts,omitempty"`
	Interactive     *Interactive     `json:"interactive,omitempty"`
	Button          *Button          `json:"button,omitempty"`
	Reaction        *eventReaction   `json:"reaction,omitempty"`
	Order           *Order           `json:"order,omitempty"`
	System          *SystemNotice    `json:"system,omitempty"`
	Unsupported     *Unsupported     `json:"unsupported,omitempty"`
	ReferredProduct *ReferredProduct `json:"referred_product,omitempty"`
}

// v1Media is v1's media member: the media object of every media kind.
type v1Media struct {
	ID       string `json:"id"`
	MimeType string `json:"mime_type,omitempty"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// v1Reply is v1's reply member, of button and list replies.
type v1Reply struct {
	ID      string `json:"id,omitempty"`
	Title   string `json:"title,omitempty"`
	Payload string `json:"payload,omitempty"`
}

// eventReaction is a reaction as the event carries it: v1's message_id (the platform's id)
// and emoji, whether it was taken away, and the message reacted to by our id when it is the
// account's.
type eventReaction struct {
	MessageID string     `json:"message_id"`
	Emoji     string     `json:"emoji"`
	Removed   bool       `json:"removed"`
	ReactedTo messageRef `json:"reacted_to"`
}

// eventFields builds the kind-specific data of an event for content c of kind (Kind's
// answer). reactedTo is our id of the message a reaction is about (0 when it is not the
// account's).
func eventFields(kind string, c InboundContent, referred *ReferredProduct, reactedTo int64) ([]byte, error) {
	f := receivedFields{ReferredProduct: referred}
	if t := c.TypedText(kind); t != "" || kind == KindText {
		f.Text = &t
	}
	switch kind {
	case KindImage, KindVideo, KindAudio, KindDocument, KindSticker:
		m := map[string]*MediaContent{KindImage: c.Image, KindVideo: c.Video, KindAudio: c.Audio, KindDocument: c.Document,
			KindSticker: c.Sticker}[kind]
		f.Media = &v1Media{ID: m.ID, MimeType: m.MimeType, Caption: m.Caption, Filename: m.Filename}
		f.Image, f.Video, f.Audio, f.Document, f.Sticker = c.Image, c.Video, c.Audio, c.Document, c.Sticker
	case KindLocation:
		f.Location = c.Location
	case KindContacts:
		f.Contacts = c.Contacts
	case KindInteractive:
		f.Interactive = c.Interactive
		if r := cmpReply(c.Interactive); r != nil {
			f.Reply = &v1Reply{ID: r.ID, Title: r.Title}
		}
	case KindButton:
		f.Button = c.Button
		f.Reply = &v1Reply{Title: c.Button.Text, Payload: c.Button.Payload}
	case KindReaction:
		f.Reaction = &eventReaction{MessageID: c.Reaction.PlatformMessageID, Emoji: c.Reaction.Emoji,
			Removed: c.Reaction.Emoji == "", ReactedTo: messageRef{MessageID: reactedTo, PlatformMessageID: c.Reaction.PlatformMessageID}}
	case KindOrder:
		f.Order = c.Order
		if f.Order.Items == nil {
			f.Order.Items = []OrderItem{}
		}
	case KindSystem:
		f.System = c.System
	case KindUnsupported:
		f.Unsupported = c.Unsupported
	}
	return json.Marshal(f)
}

// ReceivedFields returns the kind of a message of the platform's type platformType (Kind) and
// the kind-specific members of its message.received data, for messages that are not recorded
// against a contact (the sandbox's test events). It fails only when they cannot be encoded.
func ReceivedFields(platformType string, c InboundContent, referred *ReferredProduct) (string, []byte, error) {
	kind := c.Kind(platformType)
	f, err := eventFields(kind, c, referred, 0)
	return kind, f, err
}

// cmpReply is the reply button or list row of an interactive reply, nil for a Flow's answers.
func cmpReply(i *Interactive) *ReplyRow {
	if i.ButtonReply != nil {
		return i.ButtonReply
	}
	return i.ListReply
}
