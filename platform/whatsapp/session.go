package whatsapp

import (
	"errors"
	"strings"
)

// CodeReengagement is the platform's error code for a non-template message sent outside the
// customer-service window (24 h after the customer's last message; 72 h after an ad).
const CodeReengagement = 131047

// ErrOutsideWindow matches (errors.Is) a *Error with code 131047: the customer's service window
// is closed and only a template may be sent. The same code can arrive later in a failed status
// (StatusError.Code).
var ErrOutsideWindow = errors.New("whatsapp: outside the customer-service window (131047)")

// Is makes errors.Is(err, ErrOutsideWindow) true for the platform's 131047.
func (e *Error) Is(target error) bool {
	return target == ErrOutsideWindow && e.Code == CodeReengagement
}

// Limits of non-template messages, as the platform enforces them.
const (
	MaxTextBody          = 4096 // characters of a text message
	MaxCaption           = 1024 // characters of a media caption
	MaxReplyButtons      = 3    // reply buttons of an interactive button message
	MaxReplyButtonTitle  = 20   // characters of a reply button's title
	MaxButtonID          = 256  // characters of a reply button's id
	MaxInteractiveBody   = 1024 // characters of an interactive button message's body
	MaxListBody          = 4096 // characters of a list message's body
	MaxHeaderFooter      = 60   // characters of an interactive header or footer text
	MaxListButton        = 20   // characters of a list message's button label
	MaxListRows          = 10   // rows of a list message, all sections together
	MaxListSections      = 10   // sections of a list message
	MaxListSectionTitle  = 24   // characters of a list section's title
	MaxListRowTitle      = 24   // characters of a list row's title
	MaxListRowDesc       = 72   // characters of a list row's description
	MaxListRowID         = 200  // characters of a list row's id
	MaxUserIDAlphanumLen = 128  // alphanumerics after the country (and ENT.) of a user id
)

// IsUserID reports whether s is a business-scoped user id: two upper-case letters, ".",
// optionally "ENT.", then 1 to 128 ASCII letters or digits (e.g. "US.13491208655302741918").
// Such a value must never be treated as a phone number.
func IsUserID(s string) bool {
	if len(s) < 4 || s[0] < 'A' || s[0] > 'Z' || s[1] < 'A' || s[1] > 'Z' || s[2] != '.' {
		return false
	}
	rest := s[3:]
	if strings.HasPrefix(rest, "ENT.") && len(rest) > 4 {
		rest = rest[4:]
	}
	if len(rest) == 0 || len(rest) > MaxUserIDAlphanumLen {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// Message is one non-template message to send inside the customer's service window. Exactly
// one of To and ToUserID is set, and exactly one of the content fields.
type Message struct {
	To           string // recipient's number: digits, optionally with a leading "+"; sent as "+<digits>"
	ToUserID     string // recipient's business-scoped user id, sent as "recipient", instead of To
	ReplyTo      string // wamid of the message to quote (context.message_id); optional
	CallbackData string // biz_opaque_callback_data, echoed in status webhooks; optional

	Text        *TextMessage
	Image       *MediaMessage // jpeg or png; caption allowed
	Video       *MediaMessage // mp4 or 3gpp; caption allowed
	Audio       *MediaMessage // no caption
	Document    *MediaMessage // caption and filename allowed
	Sticker     *MediaMessage // webp; no caption
	Location    *LocationMessage
	Contacts    []ContactCard // each with Name.FormattedName
	Reaction    *Reaction     // an empty Emoji removes an earlier reaction
	Interactive *InteractiveMessage
}

// TextMessage is the content of a text message.
type TextMessage struct {
	Body       string // up to MaxTextBody characters
	PreviewURL bool   // render a preview of the first URL in Body
}

// MediaMessage is a media message's content: an uploaded media id or a public https link.
type MediaMessage struct {
	ID       string // from UploadMedia; exclusive with Link
	Link     string // https URL the platform fetches; exclusive with ID
	Caption  string // image, video and document only
	Filename string // document only
}

// LocationMessage is the content of a location message.
type LocationMessage struct {
	Latitude  float64
	Longitude float64
	Name      string
	Address   string
}

// Interactive message types (InteractiveMessage.Type).
const (
	InteractiveButton = "button" // up to three reply buttons
	InteractiveList   = "list"   // a button opening a list of rows in sections
)

// InteractiveMessage is a message with reply buttons (Type InteractiveButton, Buttons set) or
// a list (Type InteractiveList, ListButton and Sections set).
type InteractiveMessage struct {
	Type       string
	Header     string // optional text header
	Body       string // required
	Footer     string // optional
	Buttons    []ReplyButton
	ListButton string // the label of the button that opens the list
	Sections   []ListSection
}

// ReplyButton is one reply button; the user's tap comes back as a button_reply with its ID.
type ReplyButton struct {
	ID    string
	Title string
}

// ListSection is a titled group of list rows (the title is required when there are several).
type ListSection struct {
	Title string
	Rows  []ListRow
}

// ListRow is one choice of a list; the user's choice comes back as a list_reply with its ID.
type ListRow struct {
	ID          string
	Title       string
	Description string
}

// Kind returns the message's type as the platform names it ("text", "image", ... "interactive"),
// or "" when no content field is set.
func (m Message) Kind() string {
	if ks := m.kinds(); len(ks) > 0 {
		return ks[0]
	}
	return ""
}

// kinds lists the types whose content field is set.
func (m Message) kinds() []string {
	var ks []string
	add := func(set bool, k string) {
		if set {
			ks = append(ks, k)
		}
	}
	add(m.Text != nil, TypeText)
	add(m.Image != nil, TypeImage)
	add(m.Video != nil, TypeVideo)
	add(m.Audio != nil, TypeAudio)
	add(m.Document != nil, TypeDocument)
	add(m.Sticker != nil, TypeSticker)
	add(m.Location != nil, TypeLocation)
	add(m.Contacts != nil, TypeContacts)
	add(m.Reaction != nil, TypeReaction)
	add(m.Interactive != nil, TypeInteractive)
	return ks
}

// Wire shapes of a non-template send.
type (
	sessionContext struct {
		MessageID string `json:"message_id"`
	}
	mediaPayload struct {
		ID       string `json:"id,omitempty"`
		Link     string `json:"link,omitempty"`
		Caption  string `json:"caption,omitempty"`
		Filename string `json:"filename,omitempty"`
	}
	locationPayload struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
		Name      string  `json:"name,omitempty"`
		Address   string  `json:"address,omitempty"`
	}
	reactionPayload struct {
		MessageID string `json:"message_id"`
		Emoji     string `json:"emoji"`
	}
	interactivePayload struct {
		Type   string             `json:"type"`
		Header *interactiveText   `json:"header,omitempty"`
		Body   interactiveBody    `json:"body"`
		Footer *interactiveBody   `json:"footer,omitempty"`
		Action interactiveActions `json:"action"`
	}
	interactiveText struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	interactiveBody struct {
		Text string `json:"text"`
	}
	interactiveActions struct {
		Buttons  []replyButtonPayload `json:"buttons,omitempty"`
		Button   string               `json:"button,omitempty"`
		Sections []listSectionPayload `json:"sections,omitempty"`
	}
	replyButtonPayload struct {
		Type  string           `json:"type"`
		Reply replyButtonReply `json:"reply"`
	}
	replyButtonReply struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	listSectionPayload struct {
		Title string           `json:"title,omitempty"`
		Rows  []listRowPayload `json:"rows"`
	}
	listRowPayload struct {
		ID          string `json:"id"`
		Title       string `json:"title"`
		Description string `json:"description,omitempty"`
	}
)
