package domain

import (
	"encoding/json"
	"testing"
)

// A panel answer is the API's answer of its kind: a text by default, a media answer of the
// uploaded kind with its caption, a reaction (which quotes nothing), and the quoted message
// kept; each passes CheckAnswer, and a media kind the API does not send is refused by it.
func TestPanelAnswerIsTheAPIAnswer(t *testing.T) {
	cases := []struct {
		in   PanelAnswer
		want string
	}{
		{PanelAnswer{Destination: "5511987654321", Body: "Hi", ReplyTo: 7},
			`{"destination":"5511987654321","type":"text","text":{"body":"Hi"},"reply_to":7}`},
		{PanelAnswer{Destination: "5511987654321", MediaKind: AnswerImage, Media: &AnswerMedia{ID: "m1", Caption: "Cake"}},
			`{"destination":"5511987654321","type":"image","image":{"id":"m1","caption":"Cake"}}`},
		{PanelAnswer{UserID: "BR.1", MediaKind: AnswerDocument, Media: &AnswerMedia{Link: "https://x.example/a.pdf", Filename: "a.pdf"}},
			`{"user_id":"BR.1","type":"document","document":{"link":"https://x.example/a.pdf","filename":"a.pdf"}}`},
		{PanelAnswer{Destination: "5511987654321", ReactTo: 9, Emoji: "👍", ReplyTo: 3, Body: "ignored"},
			`{"destination":"5511987654321","type":"reaction","reaction":{"message_id":9,"emoji":"👍"}}`},
	}
	for _, c := range cases {
		a := c.in.answer()
		got, _ := json.Marshal(a)
		if string(got) != c.want {
			t.Errorf("answer of %+v:\n got %s\nwant %s", c.in, got, c.want)
		}
		if fe := CheckAnswer(a); len(fe) > 0 {
			t.Errorf("%s refused: %v", got, fe)
		}
	}
	bad := PanelAnswer{Destination: "5511987654321", MediaKind: "hologram", Media: &AnswerMedia{ID: "m1"}}.answer()
	if fe := CheckAnswer(bad); len(fe) == 0 {
		t.Errorf("a media kind the API does not send was accepted: %+v", bad)
	}
}
