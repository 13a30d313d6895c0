package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"

	"gateway/server/domain"
	"gateway/store"
)

// AnswerFromPanel is a text answer from a contact's page: the API's live answer path
// (answerLive: the window, blocked contacts, the same records and events) with source "panel",
// and the page's key kept as an idempotency record like the API's Idempotency-Key, so a double
// submit sends once. A refusal is a *domain.SendRefused with the API's status and message.
func (s *Server) AnswerFromPanel(ctx context.Context, accountID int64, in domain.PanelAnswer) (domain.FormSent, error) {
	ans := domain.Answer{Destination: in.Destination, UserID: in.UserID, Type: domain.AnswerText, Text: &domain.AnswerTextBody{Body: in.Body}}
	if fe := domain.CheckAnswer(ans); len(fe) > 0 {
		return domain.FormSent{}, formRefused(invalid(fe))
	}
	key := ""
	if in.IdempotencyKey != "" {
		key = "panel-answer:" + in.IdempotencyKey
		fp, _ := json.Marshal(ans)
		sum := sha256.Sum256(fp)
		rec, err := s.store.BeginIdempotent(ctx, accountID, key, sum[:])
		if err != nil {
			return domain.FormSent{}, err
		}
		switch rec.State {
		case store.IdempotencyReplay:
			var sent domain.FormSent
			if err := json.Unmarshal(rec.Response, &sent); err != nil || sent.MessageID == 0 {
				return domain.FormSent{}, &domain.SendRefused{Status: rec.StatusCode, Message: string(rec.Response)}
			}
			sent.Replayed = true
			return sent, nil
		case store.IdempotencyMismatch, store.IdempotencyInFlight:
			return domain.FormSent{}, &domain.SendRefused{Status: http.StatusConflict,
				Message: "This answer was already submitted. Open the contact's page again to send another."}
		}
	}
	held := &heldKey{key: key}
	if key != "" {
		ctx = context.WithValue(ctx, heldKeyCtx{}, held)
	}
	res, err := s.answerLive(ctx, accountID, ans, "panel")
	ctx = context.WithoutCancel(ctx)
	sent := domain.FormSent{MessageID: res.MessageId}
	var refused *domain.SendRefused
	var ae *apiError
	if errors.As(err, &ae) {
		refused = formRefused(ae)
		err = refused
	}
	if key != "" && !held.outcomeUnknown.Load() { // an unknown outcome leaves the key held, unfinished
		switch {
		case refused != nil && refused.Status == http.StatusUnprocessableEntity, err != nil && refused == nil:
			// Nothing was sent: the same page may submit again. A key bound to a message is kept
			// (store.ReleaseIdempotent).
			s.store.ReleaseIdempotent(ctx, accountID, key)
		case refused != nil:
			s.store.FinishIdempotent(ctx, accountID, key, refused.Status, []byte(refused.Message))
		default:
			out, _ := json.Marshal(sent)
			s.store.FinishIdempotent(ctx, accountID, key, http.StatusOK, out)
		}
	}
	return sent, err
}
