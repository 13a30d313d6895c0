package domain

import (
	"context"
)

// PanelAnswer is an answer made on the dashboard (a contact's page, a thread of the inbox): the
// same answer as the API's POST /v1/messages (source "panel"), to the contact's number, or to
// its user id when it has no number. It is a text (Body), unless Media or ReactTo is set.
type PanelAnswer struct {
	Destination, UserID string
	Body                string
	IdempotencyKey      string // made when the page was shown: a double submit sends once
	// MediaKind and Media make it a media answer (image, video, audio, document or sticker: an
	// uploaded id or an https link, with its caption and a document's filename).
	MediaKind string
	Media     *AnswerMedia
	// ReactTo makes it a reaction with Emoji to our message of that id.
	ReactTo int64
	Emoji   string
	// ReplyTo quotes our message of that id (0: none).
	ReplyTo int64
}

// answer is the API's answer the panel's answer stands for.
func (in PanelAnswer) answer() Answer {
	a := Answer{Destination: in.Destination, UserID: in.UserID, ReplyTo: in.ReplyTo}
	switch {
	case in.ReactTo != 0:
		a.Type, a.Reaction, a.ReplyTo = AnswerReaction, &AnswerReactionTo{MessageID: in.ReactTo, Emoji: in.Emoji}, 0
	case in.Media != nil:
		a.Type = in.MediaKind
		m := *in.Media
		switch in.MediaKind {
		case AnswerImage:
			a.Image = &m
		case AnswerVideo:
			a.Video = &m
		case AnswerAudio:
			a.Audio = &m
		case AnswerDocument:
			a.Document = &m
		case AnswerSticker:
			a.Sticker = &m
		}
	default:
		a.Type, a.Text = AnswerText, &AnswerTextBody{Body: in.Body}
	}
	return a
}

// Answerer answers from a contact's page through the API's answer path (the process wiring
// hands it to the dashboard). A refusal the person can act on (the window closed, the contact
// blocked, a blank text) carries the API's code and message.
type Answerer interface {
	AnswerFromPanel(ctx context.Context, accountID int64, in PanelAnswer) (FormSent, error)
}

// PanelAnswers is the contact page's answer (Answerer) over the live answer send
// (SendAnswer: the window, blocked contacts, the same records and events) with source
// "panel", and the page's key kept as an idempotency record like the API's Idempotency-Key, so
// a double submit sends once. A refusal the person can act on is a *SendError with the API's
// code and message.
type PanelAnswers struct{ Sends *Sends }

var _ Answerer = PanelAnswers{}

// AnswerFromPanel sends the page's answer for the account.
func (p PanelAnswers) AnswerFromPanel(ctx context.Context, accountID int64, in PanelAnswer) (FormSent, error) {
	ans := in.answer()
	if fe := CheckAnswer(ans); len(fe) > 0 {
		return FormSent{}, Invalid(fe)
	}
	return p.Sends.formOnce(ctx, accountID, "panel-answer", in.IdempotencyKey, ans,
		"This answer was already submitted. Open the contact's page again to send another.",
		func(held *HeldKey) (int64, error) {
			res, err := p.Sends.SendAnswer(ctx, AnswerSend{AccountID: accountID, Answer: ans, Source: "panel", Key: held})
			return res.MessageID, err
		})
}
