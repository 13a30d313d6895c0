package domain

import (
	"context"
)

// PanelAnswer is a text answer typed on a contact's page of the dashboard: the same answer as
// the API's POST /v1/messages (source "panel"), to the contact's number, or to its user id when
// it has no number.
type PanelAnswer struct {
	Destination, UserID string
	Body                string
	IdempotencyKey      string // made when the page was shown: a double submit sends once
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

// AnswerFromPanel sends the page's text answer for the account.
func (p PanelAnswers) AnswerFromPanel(ctx context.Context, accountID int64, in PanelAnswer) (FormSent, error) {
	ans := Answer{Destination: in.Destination, UserID: in.UserID, Type: AnswerText, Text: &AnswerTextBody{Body: in.Body}}
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
