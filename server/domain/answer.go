package domain

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gateway/server/refusal"
)

// Answers: a message that is not a template (text, media, location, contacts, a reaction,
// reply buttons, a list), allowed only inside the customer's service window (24 hours after
// their last message, 72 hours after a message from a click-to-WhatsApp ad). The API's
// POST /v1/messages and the dashboard's answer on a contact page both send an Answer; its
// JSON shape is the API's request body (SendMessageRequest in openapi/openapi.yaml).

// Answer kinds (Answer.Type), as the platform names them.
const (
	AnswerText        = "text"
	AnswerImage       = "image"
	AnswerVideo       = "video"
	AnswerAudio       = "audio"
	AnswerDocument    = "document"
	AnswerSticker     = "sticker"
	AnswerLocation    = "location"
	AnswerContacts    = "contacts"
	AnswerReaction    = "reaction"
	AnswerInteractive = "interactive"
)

// Limits the platform enforces on answers that the API's schema cannot say alone (the schema
// holds the plain length limits).
const (
	maxButtonBody = 1024 // characters of a reply-button message's body
	maxListRows   = 10   // rows of a list, all sections together
)

// Answer is one non-template message: exactly one of Destination and UserID, Type, and the
// object of that name.
type Answer struct {
	Destination     string              `json:"destination,omitempty"` // digits, country code first
	UserID          string              `json:"user_id,omitempty"`     // business-scoped user id
	Type            string              `json:"type,omitempty"`
	Text            *AnswerTextBody     `json:"text,omitempty"`
	Image           *AnswerMedia        `json:"image,omitempty"`
	Video           *AnswerMedia        `json:"video,omitempty"`
	Audio           *AnswerMedia        `json:"audio,omitempty"`
	Document        *AnswerMedia        `json:"document,omitempty"`
	Sticker         *AnswerMedia        `json:"sticker,omitempty"`
	Location        *AnswerPlace        `json:"location,omitempty"`
	Contacts        json.RawMessage     `json:"contacts,omitempty"` // the platform's contact cards, as given
	Reaction        *AnswerReactionTo   `json:"reaction,omitempty"`
	Interactive     *AnswerInteractions `json:"interactive,omitempty"`
	ReplyTo         int64               `json:"reply_to,omitempty"` // our message id to quote; 0 for none
	Name            string              `json:"name,omitempty"`
	CampaignName    string              `json:"campaign_name,omitempty"`
	ClientReference string              `json:"client_reference,omitempty"`
}

// AnswerTextBody is a text answer.
type AnswerTextBody struct {
	Body       string `json:"body"`
	PreviewURL bool   `json:"preview_url,omitempty"`
}

// AnswerMedia is media by an uploaded id or a public https link.
type AnswerMedia struct {
	ID       string `json:"id,omitempty"`
	Link     string `json:"link,omitempty"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// AnswerPlace is a location answer.
type AnswerPlace struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
}

// AnswerReactionTo is a reaction to one of our messages (by our message id); an empty Emoji
// removes an earlier reaction.
type AnswerReactionTo struct {
	MessageID int64  `json:"message_id"`
	Emoji     string `json:"emoji,omitempty"`
}

// AnswerInteractions is reply buttons (Type "button") or a list (Type "list").
type AnswerInteractions struct {
	Type     string          `json:"type"`
	Header   string          `json:"header,omitempty"`
	Body     string          `json:"body"`
	Footer   string          `json:"footer,omitempty"`
	Buttons  []AnswerButton  `json:"buttons,omitempty"`
	Button   string          `json:"button,omitempty"`
	Sections []AnswerSection `json:"sections,omitempty"`
}

// AnswerButton is one reply button.
type AnswerButton struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// AnswerSection is a titled group of list rows.
type AnswerSection struct {
	Title string      `json:"title,omitempty"`
	Rows  []AnswerRow `json:"rows"`
}

// AnswerRow is one choice of a list.
type AnswerRow struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

// media returns the answer's media object for its Type (nil for other kinds).
func (a Answer) media() *AnswerMedia {
	switch a.Type {
	case AnswerImage:
		return a.Image
	case AnswerVideo:
		return a.Video
	case AnswerAudio:
		return a.Audio
	case AnswerDocument:
		return a.Document
	case AnswerSticker:
		return a.Sticker
	}
	return nil
}

// present lists the kinds whose object the answer holds, in the order of the kinds above.
func (a Answer) present() []string {
	var ks []string
	add := func(set bool, k string) {
		if set {
			ks = append(ks, k)
		}
	}
	add(a.Text != nil, AnswerText)
	add(a.Image != nil, AnswerImage)
	add(a.Video != nil, AnswerVideo)
	add(a.Audio != nil, AnswerAudio)
	add(a.Document != nil, AnswerDocument)
	add(a.Sticker != nil, AnswerSticker)
	add(a.Location != nil, AnswerLocation)
	add(len(a.Contacts) > 0, AnswerContacts)
	add(a.Reaction != nil, AnswerReaction)
	add(a.Interactive != nil, AnswerInteractive)
	return ks
}

// CheckAnswer is what the API's schema cannot say about an answer, by the API's field paths:
// one recipient, the object of its type and no other, the media rules of each kind, and the
// platform's rules of interactive messages. It reads nothing: the quoted and reacted-to
// messages are found by the send (they must be the account's).
func CheckAnswer(a Answer) refusal.Fields {
	var fe refusal.Fields
	checkRecipient(a.Destination, a.UserID, &fe)
	kinds := a.present()
	for _, k := range kinds {
		if k != a.Type {
			fe.Add(k, fmt.Sprintf("not allowed in a %s message; send one kind per message", a.Type))
		}
	}
	if !containsString(kinds, a.Type) && knownAnswer(a.Type) {
		fe.Add(a.Type, fmt.Sprintf("required for type %s", a.Type))
		return fe
	}
	switch a.Type {
	case AnswerText:
		if strings.TrimSpace(a.Text.Body) == "" {
			fe.Add("text.body", "must not be blank")
		}
	case AnswerImage, AnswerVideo, AnswerAudio, AnswerDocument, AnswerSticker:
		checkAnswerMedia(&fe, a.Type, a.media())
	case AnswerContacts:
		checkCards(&fe, a.Contacts)
	case AnswerInteractive:
		checkInteractive(&fe, a.Interactive)
	case AnswerLocation, AnswerReaction:
		// The schema says all there is (ranges; our message id).
	default:
		fe.Add("type", fmt.Sprintf("%q is not a kind of message this API sends", a.Type))
	}
	return fe
}

func knownAnswer(k string) bool {
	switch k {
	case AnswerText, AnswerImage, AnswerVideo, AnswerAudio, AnswerDocument, AnswerSticker,
		AnswerLocation, AnswerContacts, AnswerReaction, AnswerInteractive:
		return true
	}
	return false
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// checkAnswerMedia: exactly one of id and link (an absolute https URL), a caption only on
// image, video and document, a filename only on a document.
func checkAnswerMedia(fe *refusal.Fields, kind string, m *AnswerMedia) {
	switch {
	case m.ID == "" && m.Link == "":
		fe.Add(kind, "give the media's id (from POST /v1/media) or an https link")
	case m.ID != "" && m.Link != "":
		fe.Add(kind+".link", "give id or link, not both")
	case m.Link != "":
		if u, err := url.Parse(m.Link); err != nil || u.Scheme != "https" || u.Host == "" {
			fe.Add(kind+".link", "must be an absolute https URL the platform can download")
		}
	}
	if m.Caption != "" && (kind == AnswerAudio || kind == AnswerSticker) {
		fe.Add(kind+".caption", fmt.Sprintf("%s messages take no caption", kind))
	}
	if m.Filename != "" && kind != AnswerDocument {
		fe.Add(kind+".filename", "only a document takes a filename")
	}
}

// checkCards: every card has a formatted name that is not blank.
func checkCards(fe *refusal.Fields, raw json.RawMessage) {
	var cards []struct {
		Name struct {
			FormattedName string `json:"formatted_name"`
		} `json:"name"`
	}
	if err := json.Unmarshal(raw, &cards); err != nil {
		fe.Add("contacts", "must be a list of contact cards")
		return
	}
	if len(cards) == 0 {
		fe.Add("contacts", "give at least one contact card")
	}
	for i, c := range cards {
		if strings.TrimSpace(c.Name.FormattedName) == "" {
			fe.Add("contacts."+strconv.Itoa(i)+".name.formatted_name", "must not be blank")
		}
	}
}

// checkInteractive: buttons for a button message (1 to 3, ids unique, a body of at most 1,024
// characters) and no list; a list's button label and sections (titled when several, at most
// 10 rows together, ids unique) and no buttons.
func checkInteractive(fe *refusal.Fields, im *AnswerInteractions) {
	if strings.TrimSpace(im.Body) == "" {
		fe.Add("interactive.body", "must not be blank")
	}
	if im.Header != "" && strings.TrimSpace(im.Header) == "" {
		fe.Add("interactive.header", "must not be blank; leave it out for no header")
	}
	if im.Footer != "" && strings.TrimSpace(im.Footer) == "" {
		fe.Add("interactive.footer", "must not be blank; leave it out for no footer")
	}
	switch im.Type {
	case "button":
		if n := utf8.RuneCountInString(im.Body); n > maxButtonBody {
			fe.Add("interactive.body", fmt.Sprintf("has %d characters; a message with buttons takes at most %d", n, maxButtonBody))
		}
		if len(im.Buttons) == 0 {
			fe.Add("interactive.buttons", "give 1 to 3 reply buttons")
		}
		if im.Button != "" {
			fe.Add("interactive.button", "only a list takes a button label")
		}
		if len(im.Sections) > 0 {
			fe.Add("interactive.sections", "only a list takes sections")
		}
		seen := map[string]bool{}
		for i, b := range im.Buttons {
			p := "interactive.buttons." + strconv.Itoa(i)
			if strings.TrimSpace(b.ID) == "" {
				fe.Add(p+".id", "must not be blank")
			}
			if strings.TrimSpace(b.Title) == "" {
				fe.Add(p+".title", "must not be blank")
			}
			if seen[b.ID] {
				fe.Add(p+".id", fmt.Sprintf("%q is the id of an earlier button; ids must differ", b.ID))
			}
			seen[b.ID] = true
		}
	case "list":
		if strings.TrimSpace(im.Button) == "" {
			fe.Add("interactive.button", "a list needs the label of the button that opens it")
		}
		if len(im.Buttons) > 0 {
			fe.Add("interactive.buttons", "only a button message takes reply buttons")
		}
		if len(im.Sections) == 0 {
			fe.Add("interactive.sections", "give 1 to 10 sections of rows")
		}
		rows, seen := 0, map[string]bool{}
		for i, s := range im.Sections {
			p := "interactive.sections." + strconv.Itoa(i)
			if (len(im.Sections) > 1 || s.Title != "") && strings.TrimSpace(s.Title) == "" {
				fe.Add(p+".title", "required (not blank) when a list has several sections; leave it out of a single one")
			}
			for j, r := range s.Rows {
				rows++
				rp := p + ".rows." + strconv.Itoa(j)
				if strings.TrimSpace(r.ID) == "" {
					fe.Add(rp+".id", "must not be blank")
				}
				if strings.TrimSpace(r.Title) == "" {
					fe.Add(rp+".title", "must not be blank")
				}
				if seen[r.ID] {
					fe.Add(rp+".id", fmt.Sprintf("%q is the id of an earlier row; ids must differ", r.ID))
				}
				seen[r.ID] = true
			}
		}
		if rows > maxListRows {
			fe.Add("interactive.sections", fmt.Sprintf("has %d rows; a list takes at most %d, all sections together", rows, maxListRows))
		}
	default:
		fe.Add("interactive.type", "button or list")
	}
}

// AnswerContent is what the message row keeps of an answer (and what GET /messages/{id} can
// show of it): the object of its kind, the quoted message and the user id it went to.
func AnswerContent(a Answer) (json.RawMessage, error) {
	c := a
	c.Destination, c.Name, c.CampaignName, c.ClientReference, c.Type = "", "", "", "", ""
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("answer content: %w", err)
	}
	return b, nil
}

// WindowClosedMessage says why an answer was refused: when the customer's window closed (nil:
// they never wrote, or the platform said so before we knew) and that only a template can be
// sent.
func WindowClosedMessage(closedAt *time.Time) string {
	const tail = ": only a template can be sent now (POST /v1/messages/template)"
	if closedAt == nil {
		return "The customer's service window is not open (they have not written in the last 24 hours, " +
			"or never wrote to this number)" + tail
	}
	return "The customer's service window closed at " + closedAt.UTC().Format(time.RFC3339) +
		" (24 hours after their last message, 72 after a click-to-WhatsApp ad)" + tail
}
