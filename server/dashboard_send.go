package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"gateway/gen"
	"gateway/server/domain"
	"gateway/server/refusal"
	"gateway/store"
)

// SendFromForm is a send from the dashboard's form: the API's live send path (sendLive: the
// same template and variable checks, blocked contacts refused, the same records and events)
// with message.sent source "panel", and the same idempotency records as the API's
// Idempotency-Key (the form carries a key made when it was shown, so a double submit sends
// once). The form's values are checked as the API checks a request body first
// (formRequest). A refusal the person can act on is a *domain.SendRefused with the API's
// status, message and broken rules (refusal.Fields, by the API's field paths).
func (s *Server) SendFromForm(ctx context.Context, accountID int64, in domain.FormSend) (domain.FormSent, error) {
	mobile, ok := domain.NormalizeMobile(in.Destination)
	if !ok {
		mobile = in.Destination
	}
	b, fe := s.formRequest(in, mobile)
	if !ok {
		fe = append(fe.Without("destination"), refusal.One("destination",
			"enter the number in international format: 8 to 15 digits with the country code first")...)
	}
	if len(fe) > 0 {
		return domain.FormSent{}, formRefused(invalid(fe))
	}
	key := ""
	if in.IdempotencyKey != "" {
		key = "panel:" + in.IdempotencyKey
		fp, _ := json.Marshal(b)
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
				Message: "This form was already submitted. Open the send page again to send another message."}
		}
	}
	// The key rides in the context like the API's, so the send binds it to its message before
	// the platform call (store.BeginSend): from then on no failure releases it for a re-send.
	held := &heldKey{key: key}
	if key != "" {
		ctx = context.WithValue(ctx, heldKeyCtx{}, held)
	}
	resp, err := s.sendLive(ctx, accountID, b, "panel")
	ctx = context.WithoutCancel(ctx)
	var sent domain.FormSent
	var refused *domain.SendRefused
	var ae *apiError
	switch {
	case err == nil:
		ok, isOK := resp.(gen.SendTemplateMessage200JSONResponse)
		if !isOK {
			err = fmt.Errorf("panel send: unexpected answer %T", resp)
			break
		}
		sent.MessageID = ok.Body.Data.MessageId
	case errors.As(err, &ae):
		refused = formRefused(ae)
		err = refused
	}
	if key != "" && !held.outcomeUnknown.Load() { // an unknown outcome leaves the key held, unfinished
		switch {
		case refused != nil && refused.Status != http.StatusBadGateway && refused.Status != http.StatusConflict:
			// Refused before anything was sent (a wrong variable count, a missing template):
			// the person corrects the form and submits it again with the same key.
			s.store.ReleaseIdempotent(ctx, accountID, key)
		case refused != nil:
			s.store.FinishIdempotent(ctx, accountID, key, refused.Status, []byte(refused.Message))
		case err != nil:
			// Released only if no message holds it yet (store.ReleaseIdempotent keeps bound keys).
			s.store.ReleaseIdempotent(ctx, accountID, key)
		default:
			out, _ := json.Marshal(sent)
			s.store.FinishIdempotent(ctx, accountID, key, http.StatusOK, out)
		}
	}
	return sent, err
}

// formRefused is the API's refusal ae as the dashboard receives it.
func formRefused(ae *apiError) *domain.SendRefused {
	return &domain.SendRefused{Status: ae.Status, Message: ae.Message, Fields: ae.Fields}
}
