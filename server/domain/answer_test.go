package domain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestCheckAnswer(t *testing.T) {
	text := &AnswerTextBody{Body: "hi"}
	rows := func(n int, prefix string) []AnswerRow {
		var rs []AnswerRow
		for i := range n {
			rs = append(rs, AnswerRow{ID: prefix + strings.Repeat("r", i+1), Title: "R"})
		}
		return rs
	}
	for _, tt := range []struct {
		name string
		a    Answer
		path string // "" for accepted
	}{
		{"text", Answer{Destination: "15551234567", Type: AnswerText, Text: text}, ""},
		{"text to a user id", Answer{UserID: "US.1", Type: AnswerText, Text: text}, ""},
		{"both recipients", Answer{Destination: "15551234567", UserID: "US.1", Type: AnswerText, Text: text}, "user_id"},
		{"no recipient", Answer{Type: AnswerText, Text: text}, "destination"},
		{"leading zero", Answer{Destination: "0155512345", Type: AnswerText, Text: text}, "destination"},
		{"type without its object", Answer{Destination: "1555123456", Type: AnswerImage}, "image"},
		{"another kind's object", Answer{Destination: "1555123456", Type: AnswerText, Text: text, Image: &AnswerMedia{ID: "1"}}, "image"},
		{"blank text", Answer{Destination: "1555123456", Type: AnswerText, Text: &AnswerTextBody{Body: " \n"}}, "text.body"},
		{"media without id or link", Answer{Destination: "1555123456", Type: AnswerImage, Image: &AnswerMedia{Caption: "x"}}, "image"},
		{"media with both", Answer{Destination: "1555123456", Type: AnswerVideo, Video: &AnswerMedia{ID: "1", Link: "https://x.example/v.mp4"}}, "video.link"},
		{"http link", Answer{Destination: "1555123456", Type: AnswerDocument, Document: &AnswerMedia{Link: "http://x.example/a.pdf"}}, "document.link"},
		{"document by link with filename", Answer{Destination: "1555123456", Type: AnswerDocument, Document: &AnswerMedia{Link: "https://x.example/a.pdf", Filename: "a.pdf", Caption: "A"}}, ""},
		{"audio caption", Answer{Destination: "1555123456", Type: AnswerAudio, Audio: &AnswerMedia{ID: "1", Caption: "x"}}, "audio.caption"},
		{"sticker caption", Answer{Destination: "1555123456", Type: AnswerSticker, Sticker: &AnswerMedia{ID: "1", Caption: "x"}}, "sticker.caption"},
		{"image filename", Answer{Destination: "1555123456", Type: AnswerImage, Image: &AnswerMedia{ID: "1", Filename: "a.jpg"}}, "image.filename"},
		{"card without name", Answer{Destination: "1555123456", Type: AnswerContacts, Contacts: json.RawMessage(`[{"name":{"formatted_name":" "}}]`)}, "contacts.0.name.formatted_name"},
		{"card", Answer{Destination: "1555123456", Type: AnswerContacts, Contacts: json.RawMessage(`[{"name":{"formatted_name":"Desk"}}]`)}, ""},
		{"reaction", Answer{Destination: "1555123456", Type: AnswerReaction, Reaction: &AnswerReactionTo{MessageID: 3}}, ""},
		{"buttons", Answer{Destination: "1555123456", Type: AnswerInteractive, Interactive: &AnswerInteractions{Type: "button", Body: "b", Buttons: []AnswerButton{{ID: "a", Title: "A"}, {ID: "b", Title: "B"}}}}, ""},
		{"duplicate button ids", Answer{Destination: "1555123456", Type: AnswerInteractive, Interactive: &AnswerInteractions{Type: "button", Body: "b", Buttons: []AnswerButton{{ID: "a", Title: "A"}, {ID: "a", Title: "B"}}}}, "interactive.buttons.1.id"},
		{"button body too long", Answer{Destination: "1555123456", Type: AnswerInteractive, Interactive: &AnswerInteractions{Type: "button", Body: strings.Repeat("é", 1025), Buttons: []AnswerButton{{ID: "a", Title: "A"}}}}, "interactive.body"},
		{"buttons with a list", Answer{Destination: "1555123456", Type: AnswerInteractive, Interactive: &AnswerInteractions{Type: "button", Body: "b", Buttons: []AnswerButton{{ID: "a", Title: "A"}}, Sections: []AnswerSection{{Rows: rows(1, "")}}}}, "interactive.sections"},
		{"list", Answer{Destination: "1555123456", Type: AnswerInteractive, Interactive: &AnswerInteractions{Type: "list", Body: "b", Button: "Pick", Sections: []AnswerSection{{Title: "A", Rows: rows(5, "a")}, {Title: "B", Rows: rows(5, "b")}}}}, ""},
		{"list of eleven rows", Answer{Destination: "1555123456", Type: AnswerInteractive, Interactive: &AnswerInteractions{Type: "list", Body: "b", Button: "Pick", Sections: []AnswerSection{{Title: "A", Rows: rows(6, "a")}, {Title: "B", Rows: rows(5, "b")}}}}, "interactive.sections"},
		{"untitled sections", Answer{Destination: "1555123456", Type: AnswerInteractive, Interactive: &AnswerInteractions{Type: "list", Body: "b", Button: "Pick", Sections: []AnswerSection{{Rows: rows(1, "a")}, {Title: "B", Rows: rows(1, "b")}}}}, "interactive.sections.0.title"},
		{"list without label", Answer{Destination: "1555123456", Type: AnswerInteractive, Interactive: &AnswerInteractions{Type: "list", Body: "b", Sections: []AnswerSection{{Rows: rows(1, "a")}}}}, "interactive.button"},
		{"unknown type", Answer{Destination: "1555123456", Type: "template"}, "type"},
		{"blank header", Answer{Destination: "1555123456", Type: AnswerInteractive, Interactive: &AnswerInteractions{Type: "button", Header: " ", Body: "b", Buttons: []AnswerButton{{ID: "a", Title: "A"}}}}, "interactive.header"},
		{"blank button id", Answer{Destination: "1555123456", Type: AnswerInteractive, Interactive: &AnswerInteractions{Type: "button", Body: "b", Buttons: []AnswerButton{{ID: " ", Title: "A"}}}}, "interactive.buttons.0.id"},
		{"blank title of a single section", Answer{Destination: "1555123456", Type: AnswerInteractive, Interactive: &AnswerInteractions{Type: "list", Body: "b", Button: "Pick", Sections: []AnswerSection{{Title: " ", Rows: rows(1, "a")}}}}, "interactive.sections.0.title"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fe := CheckAnswer(tt.a)
			switch {
			case tt.path == "" && len(fe) > 0:
				t.Errorf("refused: %v", fe.ByPath())
			case tt.path != "" && !fe.Has(tt.path):
				t.Errorf("refusal %v, want one at %s", fe.ByPath(), tt.path)
			}
		})
	}
}

func TestAnswerContentKeepsWhatWasSent(t *testing.T) {
	c, err := AnswerContent(Answer{UserID: "US.1", Type: AnswerText, Text: &AnswerTextBody{Body: "hi"}, ReplyTo: 7,
		CampaignName: "x", ClientReference: "r", Destination: ""})
	if err != nil {
		t.Fatal(err)
	}
	if string(c) != `{"user_id":"US.1","text":{"body":"hi"},"reply_to":7}` {
		t.Errorf("content %s", c)
	}
}

func TestWindowClosedMessage(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 5, 0, 0, time.FixedZone("x", 3600))
	if m := WindowClosedMessage(&at); !strings.Contains(m, "closed at 2026-11-21T09:05:00Z") || !strings.Contains(m, "template") {
		t.Errorf("%q", m)
	}
	if m := WindowClosedMessage(nil); !strings.Contains(m, "not open") || !strings.Contains(m, "template") {
		t.Errorf("%q", m)
	}
}
