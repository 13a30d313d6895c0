package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"gateway/gen"
	"gateway/platform/whatsapp"
	"gateway/server/domain"
	"gateway/server/refusal"
	"gateway/store"
)

// Answers inside the customer's service window (POST /v1/messages) and read receipts
// (POST /v1/messages/{id}/read). An answer is the domain's (domain.Answer, its checks, and its
// front on the send pipeline, server/domain/answersend.go); the key's mode sends it
// (answers_modes.go).

// SendMessage sends a non-template message inside the customer's service window
// (POST /v1/messages in openapi/openapi.yaml): the request as the domain's Answer, checked
// (domain.CheckAnswer), the answer of the key's mode (answers_modes.go: live through
// server/domain's send pipeline, or test mode's simulated answer), and its result as the
// API's. A refusal is a *domain.SendError, which errors.go renders (window_closed with its
// window_closed_at).
func (a *api) SendMessage(ctx context.Context, req gen.SendMessageRequestObject) (gen.SendMessageResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	ans, err := answerOf(req.Body)
	if err != nil {
		return nil, err
	}
	if fe := domain.CheckAnswer(ans); len(fe) > 0 {
		err := domain.Invalid(fe)
		a.s.sends.Observe(p.Mode, err)
		return nil, err
	}
	sent, err := p.data.answer(ctx, p, ans)
	if err != nil {
		return nil, err
	}
	res := sendResult(sent)
	typ := gen.OutgoingType(ans.Type)
	res.Type = &typ
	return gen.SendMessage200JSONResponse{Body: gen.SendEnvelope{Success: true, Message: "Message sent", Data: res}}, nil
}

// answerOf is the API's body as the domain's Answer: the two have the same JSON shape
// (TestAnswerOfKeepsEveryField).
func answerOf(b *gen.SendMessageRequest) (domain.Answer, error) {
	raw, err := json.Marshal(b)
	if err != nil {
		return domain.Answer{}, fmt.Errorf("answer body: %w", err)
	}
	var a domain.Answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return domain.Answer{}, fmt.Errorf("answer body: %w", err)
	}
	return a, nil
}

// MarkMessageRead marks a received message read on the platform (POST /v1/messages/{id}/read).
func (a *api) MarkMessageRead(ctx context.Context, req gen.MarkMessageReadRequestObject) (gen.MarkMessageReadResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	wamid, err := p.data.markRead(ctx, p, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.MarkMessageRead200JSONResponse{Body: gen.MarkReadEnvelope{Success: true, Message: "Marked read",
		Data: gen.MarkReadResult{MessageId: req.Id, ChatMessageId: wamid}}}, nil
}

// markReadLive marks the account's received message read through its number.
func (s *Server) markReadLive(ctx context.Context, accountID, id int64) (string, error) {
	m, err := s.store.MessageRefByID(ctx, accountID, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", errMessageNotFound
	}
	if err != nil {
		return "", err
	}
	if m.Direction != "in" {
		return "", invalid(refusal.One("path.id", "only a message a customer sent can be marked read; this one was sent by the account"))
	}
	conn, _, err := s.store.SendTarget(ctx, accountID, 0, "", "")
	if errors.Is(err, store.ErrNotFound) {
		return "", newAPIError(http.StatusConflict, gen.ErrorCodeNumberNotConnected, "No number is connected to this account")
	}
	if err != nil {
		return "", err
	}
	return m.PlatformMessageID, s.markRead(ctx, conn.AccessToken, conn.PhoneNumberID, m.PlatformMessageID)
}

// markRead makes the platform call of a read receipt; a refusal or no answer is a 502.
func (s *Server) markRead(ctx context.Context, token, phoneNumberID, wamid string) error {
	if s.platform == nil {
		return errors.New("no messaging platform configured")
	}
	pctx, cancel := context.WithTimeout(ctx, s.opts.SendTimeout)
	defer cancel()
	err := s.platform.MarkRead(pctx, token, phoneNumberID, wamid, false)
	var pe *whatsapp.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe):
		return &apiError{Status: http.StatusBadGateway, Code: gen.ErrorCodePlatformRejected,
			Message: fmt.Sprintf("The platform refused to mark the message read: %s (code %d)", pe.Reason(), pe.Code), cause: err}
	case errors.Is(err, whatsapp.ErrInvalidArgument):
		return err
	}
	return &apiError{Status: http.StatusBadGateway, Code: gen.ErrorCodePlatformUnavailable,
		Message: "The messaging platform did not answer; the message may not be marked read. Try again.", cause: err}
}
