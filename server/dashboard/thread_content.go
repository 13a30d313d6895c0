package dashboard

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"gateway/server/domain"
	"gateway/store"
)

// What a thread shows of each message's content. A received message keeps the platform's
// object of its kind (the whole message as received, or the object alone); a sent answer keeps
// the API's answer (domain.AnswerContent). Both name the object by the kind, so one reading
// serves both.

// bodyView is the content of one message as the thread shows it.
type bodyView struct {
	Text     string // a text, a caption, a button message's body
	Media    *mediaView
	Location *locationView
	Cards    []domain.ContactCard
	Choice   string // the reply button or list row the customer chose
	Flow     *flowView
	Order    *orderView
	Notice   string // a system notice or an unsupported message, in words
	Template string // a template's name
	// Buttons are the choices of an interactive message we sent.
	Buttons []string
}

// mediaView is an image, video, audio, document or sticker.
type mediaView struct {
	Kind     string
	ID       string // the platform's media id ("" for a link)
	Link     string // an https link we sent ("" for an id)
	MimeType string
	Filename string
	Voice    bool
}

// Src is where the browser gets the file: the dashboard's media route, never the platform.
func (m mediaView) Src() string {
	if m.ID == "" {
		return m.Link
	}
	return Prefix + "/media/" + url.PathEscape(m.ID)
}

// DownloadSrc is Src served as a download named after the file.
func (m mediaView) DownloadSrc() string {
	if m.ID == "" {
		return m.Link
	}
	name := m.Filename
	if name == "" {
		name = "document"
	}
	return m.Src() + "?download=" + url.QueryEscape(name)
}

// locationView is a shared place with its map link.
type locationView struct {
	domain.Location
}

// Coordinates are the place's latitude and longitude as a person reads them.
func (l locationView) Coordinates() string {
	ns, ew := "N", "E"
	if l.Latitude < 0 {
		ns = "S"
	}
	if l.Longitude < 0 {
		ew = "W"
	}
	return fmt.Sprintf("%.5f° %s, %.5f° %s", math.Abs(l.Latitude), ns, math.Abs(l.Longitude), ew)
}

// MapLink opens the place on OpenStreetMap.
func (l locationView) MapLink() string {
	return fmt.Sprintf("https://www.openstreetmap.org/?mlat=%f&mlon=%f#map=17/%f/%f", l.Latitude, l.Longitude, l.Latitude, l.Longitude)
}

// flowView is a Flow's answers: each field with its value.
type flowView struct {
	Name   string
	Fields [][2]string
}

// orderView is a cart with its lines and total.
type orderView struct {
	Text  string
	Lines []string
	Total string
}

// rawContent reads the object of kind out of content: content[kind] (the whole message, or
// an answer), else content["media"], else content itself (the object alone).
func rawContent(content json.RawMessage, kind string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(content, &m) != nil {
		return nil
	}
	if v, ok := m[kind]; ok {
		return v
	}
	if v, ok := m["media"]; ok {
		return v
	}
	return content
}

// editedContent reads an edit's new kind and content: the store keeps {"type", "content"},
// whose content is the edit as received (its message holds the new object) or the object.
func editedContent(stored json.RawMessage, kind string) (string, json.RawMessage) {
	var w struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(stored, &w) == nil && len(w.Content) > 0 {
		if w.Type != "" {
			kind = w.Type
		}
		stored = w.Content
	}
	var e struct {
		Edit struct {
			Message json.RawMessage `json:"message"`
		} `json:"edit"`
	}
	if json.Unmarshal(stored, &e) == nil && len(e.Edit.Message) > 0 {
		return kind, e.Edit.Message
	}
	return kind, stored
}

// bodyOf reads a message's content into what the thread shows.
func bodyOf(m store.ThreadMessage, content json.RawMessage) bodyView {
	var b bodyView
	if m.TemplateName != "" {
		b.Template = m.TemplateName
		return b
	}
	raw := rawContent(content, m.Type)
	switch m.Type {
	case domain.KindText:
		var t struct {
			Body string `json:"body"`
		}
		if json.Unmarshal(raw, &t) != nil || t.Body == "" {
			json.Unmarshal(raw, &t.Body)
		}
		b.Text = t.Body
	case domain.KindImage, domain.KindVideo, domain.KindAudio, domain.KindDocument, domain.KindSticker:
		var mc struct {
			domain.MediaContent
			Link string `json:"link"`
		}
		json.Unmarshal(raw, &mc)
		b.Media = &mediaView{Kind: m.Type, ID: mc.ID, Link: mc.Link, MimeType: mc.MimeType, Filename: mc.Filename, Voice: mc.Voice}
		b.Text = mc.Caption
	case domain.KindLocation:
		var l domain.Location
		json.Unmarshal(raw, &l)
		b.Location = &locationView{l}
	case domain.KindContacts:
		json.Unmarshal(raw, &b.Cards)
	case domain.KindInteractive:
		interactiveOf(&b, raw)
	case domain.KindButton:
		var bt domain.Button
		json.Unmarshal(raw, &bt)
		b.Choice = bt.Text
	case domain.KindOrder:
		// The platform names the lines product_items; the event's object, items.
		var o struct {
			domain.Order
			ProductItems []domain.OrderItem `json:"product_items"`
		}
		json.Unmarshal(raw, &o)
		if len(o.Items) == 0 {
			o.Items = o.ProductItems
		}
		b.Order = orderOf(o.Order)
	case domain.KindSystem:
		var sn domain.SystemNotice
		json.Unmarshal(raw, &sn)
		b.Notice = sn.Body
		if b.Notice == "" {
			b.Notice = "WhatsApp notice: " + humanize(sn.Type)
		}
	case domain.KindReaction:
	case domain.KindRequestWelcome:
		b.Notice = "The customer opened the chat for the first time."
	default:
		b.Notice = "WhatsApp could not show this message here (" + humanize(m.Type) + "); the customer sees it on their phone."
	}
	return b
}

// interactiveOf reads a customer's reply to buttons, a list or a Flow, or the buttons or list
// we sent.
func interactiveOf(b *bodyView, raw json.RawMessage) {
	var in struct {
		domain.Interactive
		// The platform's Flow answers are response_json, a string holding the object.
		NFM *struct {
			domain.FlowReply
			ResponseJSON json.RawMessage `json:"response_json"`
		} `json:"nfm_reply"`
		Body    string                 `json:"body"`
		Buttons []domain.AnswerButton  `json:"buttons"`
		Section []domain.AnswerSection `json:"sections"`
	}
	json.Unmarshal(raw, &in)
	switch {
	case in.ButtonReply != nil:
		b.Choice = in.ButtonReply.Title
	case in.ListReply != nil:
		b.Choice = in.ListReply.Title
	case in.NFM != nil:
		f := in.NFM.FlowReply
		if len(f.Response) == 0 {
			f.Response = in.NFM.ResponseJSON
		}
		b.Flow = flowOf(&f)
	default:
		b.Text = in.Body
		for _, bt := range in.Buttons {
			b.Buttons = append(b.Buttons, bt.Title)
		}
		for _, s := range in.Section {
			for _, r := range s.Rows {
				b.Buttons = append(b.Buttons, r.Title)
			}
		}
	}
}

// flowOf lists a Flow's answers by field (the platform sends them as a JSON object, or as a
// string holding one), the flow token left out.
func flowOf(f *domain.FlowReply) *flowView {
	v := &flowView{Name: f.Name}
	resp := []byte(f.Response)
	var s string
	if json.Unmarshal(resp, &s) == nil {
		resp = []byte(s)
	}
	var fields map[string]any
	json.Unmarshal(resp, &fields)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if k != "flow_token" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v.Fields = append(v.Fields, [2]string{humanize(k), fmt.Sprint(fields[k])})
	}
	return v
}

// orderOf lists a cart's lines and its total per currency.
func orderOf(o domain.Order) *orderView {
	v := &orderView{Text: o.Text}
	totals := map[string]float64{}
	var currencies []string
	for _, it := range o.Items {
		v.Lines = append(v.Lines, fmt.Sprintf("%d × %s at %s %s", it.Quantity, it.ProductRetailerID,
			strconv.FormatFloat(it.ItemPrice, 'f', 2, 64), it.Currency))
		if _, ok := totals[it.Currency]; !ok {
			currencies = append(currencies, it.Currency)
		}
		totals[it.Currency] += float64(it.Quantity) * it.ItemPrice
	}
	var ts []string
	for _, c := range currencies {
		ts = append(ts, strconv.FormatFloat(totals[c], 'f', 2, 64)+" "+c)
	}
	v.Total = strings.Join(ts, " + ")
	return v
}

// reactionOf reads a reaction: the emoji ("" when taken away) and what it is about, by the
// platform's id (a customer's reaction) or by our id (one we sent).
func reactionOf(content json.RawMessage) (emoji, platformID string, ourID int64) {
	var r struct {
		MessageID json.RawMessage `json:"message_id"`
		Emoji     string          `json:"emoji"`
	}
	json.Unmarshal(rawContent(content, domain.KindReaction), &r)
	if json.Unmarshal(r.MessageID, &platformID) != nil {
		json.Unmarshal(r.MessageID, &ourID)
	}
	return r.Emoji, platformID, ourID
}

// summaryOf is a message in a few words: its text, else its kind (a quoted message, the last
// message of an inbox row).
func summaryOf(m store.ThreadMessage) string {
	if m.DeletedAt != nil {
		return "Deleted message"
	}
	b := bodyOf(m, m.Content)
	text := b.Text
	if text == "" {
		text = b.Choice
	}
	if b.Template != "" {
		text = "Template " + b.Template
	}
	switch {
	case text == "":
		text = orHumanize(messageTypeWords, m.Type)
	case m.Type != domain.KindText && b.Template == "":
		text = orHumanize(messageTypeWords, m.Type) + ": " + text
	}
	if r := []rune(text); len(r) > 120 {
		text = string(r[:119]) + "…"
	}
	return text
}
