package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"gateway/gen"
	"gateway/server/dashboard"
	"gateway/store"
)

// SendFromPanel is a send from the dashboard's form: the API's live send path (sendLive: the
// same template and variable checks, blocked contacts refused, the same records and events)
// with message.sent source "panel", and the same idempotency records as the API's
// Idempotency-Key (the form carries a key made when it was shown, so a double submit sends
// once). A refusal the person can act on is a *dashboard.SendRefused with the API's message.
func (s *Server) SendFromPanel(ctx context.Context, accountID int64, in dashboard.PanelSend) (dashboard.PanelSent, error) {
	mobile, ok := normalizeMobile(in.Destination)
	if !ok {
		return dashboard.PanelSent{}, &dashboard.SendRefused{Status: http.StatusUnprocessableEntity,
			Message: "Enter the number in international format: 8 to 15 digits with the country code first."}
	}
	b := &gen.SendTemplateRequest{Destination: mobile, TemplateId: &in.TemplateID}
	if in.Name != "" {
		b.Name = &in.Name
	}
	if in.CampaignName != "" {
		b.CampaignName = &in.CampaignName
	}
	if len(in.BodyVariables) > 0 {
		b.BodyVariables = &in.BodyVariables
	}
	if len(in.HeaderVariables) > 0 {
		b.HeaderVariables = &in.HeaderVariables
	}
	for _, v := range append(append([]string{in.Name, in.CampaignName}, in.BodyVariables...), in.HeaderVariables...) {
		if len(v) > 1024 {
			return dashboard.PanelSent{}, &dashboard.SendRefused{Status: http.StatusUnprocessableEntity, Message: "A value is longer than 1024 characters."}
		}
	}
	if len(in.CampaignName) > 120 || len(in.Name) > 80 {
		return dashboard.PanelSent{}, &dashboard.SendRefused{Status: http.StatusUnprocessableEntity,
			Message: "The campaign name takes up to 120 characters and the name up to 80."}
	}
	key := ""
	if in.IdempotencyKey != "" {
		key = "panel:" + in.IdempotencyKey
		fp, _ := json.Marshal(b)
		sum := sha256.Sum256(fp)
		rec, err := s.store.BeginIdempotent(ctx, accountID, key, sum[:])
		if err != nil {
			return dashboard.PanelSent{}, err
		}
		switch rec.State {
		case store.IdempotencyReplay:
			var sent dashboard.PanelSent
			if err := json.Unmarshal(rec.Response, &sent); err != nil || sent.MessageID == 0 {
				return dashboard.PanelSent{}, &dashboard.SendRefused{Status: rec.StatusCode, Message: string(rec.Response)}
			}
			sent.Replayed = true
			return sent, nil
		case store.IdempotencyMismatch, store.IdempotencyInFlight:
			return dashboard.PanelSent{}, &dashboard.SendRefused{Status: http.StatusConflict,
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
	var sent dashboard.PanelSent
	var refused *dashboard.SendRefused
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
		msg := ae.Message
		if len(ae.Errors) > 0 {
			var details []string
			for _, k := range sortedKeys(ae.Errors) {
				details = append(details, strings.Join(ae.Errors[k], "; "))
			}
			msg = "The send was refused: " + strings.Join(details, "; ") + "."
		}
		refused = &dashboard.SendRefused{Status: ae.Status, Message: msg}
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
