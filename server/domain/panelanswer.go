package domain

import (
	"context"
	"crypto/sha256"
	"encoding/json"

	"gateway/store"
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
	st := p.Sends.cfg.Store
	key := ""
	if in.IdempotencyKey != "" {
		key = "panel-answer:" + in.IdempotencyKey
		fp, _ := json.Marshal(ans)
		sum := sha256.Sum256(fp)
		rec, err := st.BeginIdempotent(ctx, accountID, key, sum[:])
		if err != nil {
			return FormSent{}, err
		}
		switch rec.State {
		case store.IdempotencyReplay:
			var sent FormSent
			if err := json.Unmarshal(rec.Response, &sent); err != nil || sent.MessageID == 0 {
				return FormSent{}, formRefusalOf(rec.Response)
			}
			sent.Replayed = true
			return sent, nil
		case store.IdempotencyMismatch, store.IdempotencyInFlight:
			return FormSent{}, &SendError{Kind: KindConflict, Code: CodeIdempotencyConflict,
				Message: "This answer was already submitted. Open the contact's page again to send another."}
		}
	}
	held := &HeldKey{Key: key}
	send := AnswerSend{AccountID: accountID, Answer: ans, Source: "panel"}
	if key != "" {
		send.Key = held
	}
	res, err := p.Sends.SendAnswer(ctx, send)
	ctx = context.WithoutCancel(ctx)
	sent := FormSent{MessageID: res.MessageID}
	refused := AsSendError(err)
	if key != "" && !held.OutcomeUnknown() { // an unknown outcome leaves the key held, unfinished
		switch {
		case refused != nil && refused.Kind == KindInvalid, err != nil && refused == nil:
			// Nothing was sent: the same page may submit again. A key bound to a message is kept
			// (store.ReleaseIdempotent).
			st.ReleaseIdempotent(ctx, accountID, key)
		case refused != nil:
			out, _ := json.Marshal(formRefusal{Kind: refused.Kind, Code: refused.Code, Message: refused.Message})
			st.FinishIdempotent(ctx, accountID, key, formRefusalStatus, out)
		default:
			out, _ := json.Marshal(sent)
			st.FinishIdempotent(ctx, accountID, key, formSentStatus, out)
		}
	}
	if err != nil {
		return FormSent{}, err
	}
	return sent, nil
}
