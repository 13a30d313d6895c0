package simulator

import (
	"encoding/json"
	"net/url"
	"strconv"
	"unicode/utf8"
)

// Non-template ("session") messages: the kinds the platform accepts inside the customer-service
// window besides text (reference §13), checked as the platform checks them.

// sessionKinds are the non-template types the simulator accepts.
var sessionKinds = map[string]bool{
	"text": true, "image": true, "video": true, "audio": true, "document": true, "sticker": true,
	"location": true, "contacts": true, "reaction": true, "interactive": true,
}

// sessionBody is the part of a send body with the content objects.
type sessionBody struct {
	Context *struct {
		MessageID string `json:"message_id"`
	} `json:"context"`
	Image       *sessionMedia              `json:"image"`
	Video       *sessionMedia              `json:"video"`
	Audio       *sessionMedia              `json:"audio"`
	Document    *sessionMedia              `json:"document"`
	Sticker     *sessionMedia              `json:"sticker"`
	Location    *sessionLocation           `json:"location"`
	Contacts    []sessionContact           `json:"contacts"`
	Reaction    *sessionReaction           `json:"reaction"`
	Interactive *sessionInteractive        `json:"interactive"`
	Raw         map[string]json.RawMessage `json:"-"` // every member as received
}

type sessionMedia struct {
	ID       string `json:"id"`
	Link     string `json:"link"`
	Caption  string `json:"caption"`
	Filename string `json:"filename"`
}

type sessionLocation struct {
	Latitude  *float64 `json:"latitude"`
	Longitude *float64 `json:"longitude"`
	Name      string   `json:"name"`
	Address   string   `json:"address"`
}

type sessionContact struct {
	Name *struct {
		FormattedName string `json:"formatted_name"`
	} `json:"name"`
}

type sessionReaction struct {
	MessageID *string `json:"message_id"`
	Emoji     *string `json:"emoji"`
}

type sessionInteractive struct {
	Type   string `json:"type"`
	Header *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"header"`
	Body *struct {
		Text string `json:"text"`
	} `json:"body"`
	Footer *struct {
		Text string `json:"text"`
	} `json:"footer"`
	Action *struct {
		Buttons []struct {
			Type  string `json:"type"`
			Reply struct {
				ID    string `json:"id"`
				Title string `json:"title"`
			} `json:"reply"`
		} `json:"buttons"`
		Button   string `json:"button"`
		Sections []struct {
			Title string `json:"title"`
			Rows  []struct {
				ID          string `json:"id"`
				Title       string `json:"title"`
				Description string `json:"description"`
			} `json:"rows"`
		} `json:"sections"`
	} `json:"action"`
}

// checkSession validates the content of a non-template send of kind (not text, which the
// template path checks) and returns that content as received. A media id must be one the
// simulator holds for the number's WABA.
func (s *Simulator) checkSession(kind, wabaID string, raw []byte, sm *SentMessage) *graphError {
	var b sessionBody
	if err := json.Unmarshal(raw, &b); err != nil {
		return paramError("Invalid parameter", "the "+kind+" object has the wrong shape: "+err.Error())
	}
	_ = json.Unmarshal(raw, &b.Raw)
	if b.Context != nil {
		sm.ReplyTo = b.Context.MessageID
	}
	if b.Raw[kind] == nil || string(b.Raw[kind]) == "null" {
		return paramError("The parameter "+kind+" is required.", kind+" is required for type "+kind)
	}
	sm.Content = b.Raw[kind]
	tooLong := func(what string, s string, limit int) *graphError {
		if utf8.RuneCountInString(s) > limit {
			return waError(131009, what+" is longer than "+strconv.Itoa(limit)+" characters")
		}
		return nil
	}
	switch kind {
	case "image", "video", "audio", "document", "sticker":
		m := map[string]*sessionMedia{"image": b.Image, "video": b.Video, "audio": b.Audio, "document": b.Document, "sticker": b.Sticker}[kind]
		switch {
		case (m.ID == "") == (m.Link == ""):
			return paramError("Invalid parameter", kind+" needs exactly one of id and link")
		case m.Link != "" && !isHTTPURL(m.Link):
			return waError(131009, kind+".link is not an http(s) URL")
		case m.Caption != "" && (kind == "audio" || kind == "sticker"):
			return paramError("Invalid parameter", kind+" messages take no caption")
		case m.Filename != "" && kind != "document":
			return paramError("Invalid parameter", "only documents take a filename")
		}
		if e := tooLong(kind+".caption", m.Caption, 1024); e != nil {
			return e
		}
		if m.ID != "" {
			s.mu.Lock()
			obj := s.media[m.ID]
			s.mu.Unlock()
			if obj == nil || obj.info.WabaID != wabaID {
				return waError(131053, "media id "+m.ID+" is not an uploaded media of this business")
			}
		}
	case "location":
		l := b.Location
		switch {
		case l.Latitude == nil || l.Longitude == nil:
			return paramError("The parameter location['latitude'] is required.", "location needs latitude and longitude")
		case *l.Latitude < -90 || *l.Latitude > 90 || *l.Longitude < -180 || *l.Longitude > 180:
			return waError(131009, "location coordinates are out of range")
		}
	case "contacts":
		if len(b.Contacts) == 0 {
			return paramError("The parameter contacts is required.", "contacts needs at least one card")
		}
		for _, c := range b.Contacts {
			if c.Name == nil || c.Name.FormattedName == "" {
				return paramError("The parameter contacts[0]['name']['formatted_name'] is required.", "every card needs name.formatted_name")
			}
		}
	case "reaction":
		if b.Reaction.MessageID == nil || *b.Reaction.MessageID == "" {
			return paramError("The parameter reaction['message_id'] is required.", "reaction.message_id is required")
		}
		if b.Reaction.Emoji == nil {
			return paramError("The parameter reaction['emoji'] is required.", "reaction.emoji is required (empty removes a reaction)")
		}
	case "interactive":
		return checkInteractive(b.Interactive, tooLong)
	}
	return nil
}

// checkInteractive validates reply buttons and lists.
func checkInteractive(in *sessionInteractive, tooLong func(string, string, int) *graphError) *graphError {
	if in.Body == nil || in.Body.Text == "" {
		return paramError("The parameter interactive['body']['text'] is required.", "interactive.body.text is required")
	}
	if in.Action == nil {
		return paramError("The parameter interactive['action'] is required.", "interactive.action is required")
	}
	if in.Header != nil {
		if e := tooLong("interactive.header.text", in.Header.Text, 60); e != nil {
			return e
		}
	}
	if in.Footer != nil {
		if e := tooLong("interactive.footer.text", in.Footer.Text, 60); e != nil {
			return e
		}
	}
	switch in.Type {
	case "button":
		bs := in.Action.Buttons
		if len(bs) == 0 || len(bs) > 3 {
			return waError(131009, "interactive button messages take 1 to 3 buttons, got "+strconv.Itoa(len(bs)))
		}
		seen := map[string]bool{}
		for _, b := range bs {
			switch {
			case b.Type != "reply" || b.Reply.ID == "" || b.Reply.Title == "":
				return paramError("Invalid parameter", "each button needs type reply, reply.id and reply.title")
			case seen[b.Reply.ID]:
				return waError(131009, "button ids must be unique")
			}
			seen[b.Reply.ID] = true
			if e := tooLong("button title", b.Reply.Title, 20); e != nil {
				return e
			}
		}
		if e := tooLong("interactive.body.text", in.Body.Text, 1024); e != nil {
			return e
		}
	case "list":
		if in.Action.Button == "" {
			return paramError("The parameter interactive['action']['button'] is required.", "a list needs its button label")
		}
		if e := tooLong("interactive.action.button", in.Action.Button, 20); e != nil {
			return e
		}
		rows, seen := 0, map[string]bool{}
		if len(in.Action.Sections) == 0 || len(in.Action.Sections) > 10 {
			return waError(131009, "a list takes 1 to 10 sections")
		}
		for _, sec := range in.Action.Sections {
			if len(in.Action.Sections) > 1 && sec.Title == "" {
				return paramError("Invalid parameter", "every section needs a title when there are several")
			}
			if e := tooLong("section title", sec.Title, 24); e != nil {
				return e
			}
			if len(sec.Rows) == 0 {
				return paramError("Invalid parameter", "every section needs rows")
			}
			for _, r := range sec.Rows {
				rows++
				switch {
				case r.ID == "" || r.Title == "":
					return paramError("Invalid parameter", "every row needs id and title")
				case seen[r.ID]:
					return waError(131009, "row ids must be unique")
				}
				seen[r.ID] = true
				if e := tooLong("row title", r.Title, 24); e != nil {
					return e
				}
				if e := tooLong("row description", r.Description, 72); e != nil {
					return e
				}
			}
		}
		if rows > 10 {
			return waError(131009, "a list takes at most 10 rows, got "+strconv.Itoa(rows))
		}
		if e := tooLong("interactive.body.text", in.Body.Text, 4096); e != nil {
			return e
		}
	default:
		return waError(131009, "interactive type "+strconv.Quote(in.Type)+" is not supported by the simulator (button, list)")
	}
	return nil
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}
