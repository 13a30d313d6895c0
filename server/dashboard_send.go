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

// SendFromPanel is a send from the dashboard's form: the API's live send path (sendLive: the
// same template and variable checks, blocked contacts refused, the same records and events)
// with message.sent source "panel", and the same idempotency records as the API's
// Idempotency-Key (the form carries a key made when it was shown, so a double submit sends
// once). The form's values are checked as the API checks a request body first
// (panelRequest). A refusal the person can act on is a *domain.SendRefused with the API's
// status, message and broken rules (refusal.Fields, by the API's field paths).
func (s *Server) SendFromPanel(ctx context.Context, accountID int64, in domain.PanelSend) (domain.PanelSent, error) {
	mobile, ok := domain.NormalizeMobile(in.Destination)
	if !ok {
		mobile = in.Destination
	}
	b, fe := s.panelRequest(in, mobile)
	if !ok {
		fe = append(fe.Without("destination"), refusal.One("destination",
			"enter the number in international format: 8 to 15 digits with the country code first")...)
	}
	if len(fe) > 0 {
		return domain.PanelSent{}, panelRefused(invalid(fe))
	}
	key := ""
	if in.IdempotencyKey != "" {
		key = "panel:" + in.IdempotencyKey
		fp, _ := json.Marshal(b)
		sum := sha256.Sum256(fp)
		rec, err := s.store.BeginIdempotent(ctx, accountID, key, sum[:])
		if err != nil {
			return domain.PanelSent{}, err
		}
		switch rec.State {
		case store.IdempotencyReplay:
			var sent domain.PanelSent
			if err := json.Unmarshal(rec.Response, &sent); err != nil || sent.MessageID == 0 {
				return domain.PanelSent{}, &domain.SendRefused{Status: rec.StatusCode, Message: string(rec.Response)}
			}
			sent.Replayed = true
			return sent, nil
		case store.IdempotencyMismatch, store.IdempotencyInFlight:
			return domain.PanelSent{}, &domain.SendRefused{Status: http.StatusConflict,
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
	var sent domain.PanelSent
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
		refused = panelRefused(ae)
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

// panelRefused is the API's refusal ae as the dashboard receives it.
func panelRefused(ae *apiError) *domain.SendRefused {
	return &domain.SendRefused{Status: ae.Status, Message: ae.Message, Fields: ae.Fields}
}
