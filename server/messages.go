package server

import (
	"context"
	"errors"
	"net/http"

	"gateway/gen"
	"gateway/store"
)

// errMessageNotFound is GetMessage's 404.
var errMessageNotFound = newAPIError(http.StatusNotFound, gen.ErrorCodeNotFound, "Message not found")

// GetMessage returns a message's last reported status, when it was sent, its status history
// and, for a failed message, the platform's error. Another account's id, an inbound message
// and a send still waiting for the platform's answer are 404; a send whose answer was lost is
// shown as sent with outcome_unknown. Test and demo keys read their
// test sends, whose status ages with time.
func (a *api) GetMessage(ctx context.Context, req gen.GetMessageRequestObject) (gen.GetMessageResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if p.Mode != ModeLive {
		return a.s.getTestMessage(ctx, p.AccountID, req.Id)
	}
	m, ok := messageAhead(ctx, p.AccountID, req.Id)
	if !ok {
		m, err = a.s.store.MessageByID(ctx, p.AccountID, req.Id)
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && m.Status == "pending" && !m.OutcomeUnknown) {
		return nil, errMessageNotFound
	}
	if err != nil {
		return nil, err
	}
	sentAt := m.CreatedAt
	if m.SentAt != nil {
		sentAt = *m.SentAt
	}
	history := make([]gen.StatusChange, 0, len(m.History))
	for _, h := range m.History {
		if st := gen.MessageStatus(h.Status); st.Valid() {
			history = append(history, gen.StatusChange{Status: st, Timestamp: h.At.UTC()})
		}
	}
	out := gen.Message{MessageId: m.ID, ChatMessageId: m.PlatformMessageID, Status: gen.MessageStatus(m.Status),
		SentAt: sentAt.UTC(), History: history, ClientReference: m.ClientReference}
	if m.OutcomeUnknown {
		// Handed to the platform, its answer lost: shown as sent, never as failed, until a
		// status report confirms it (openapi.yaml, Message.outcome_unknown).
		out.Status, out.OutcomeUnknown = gen.Sent, &m.OutcomeUnknown
	}
	if m.Status == "failed" && (m.ErrorCode != nil || m.ErrorTitle != nil) {
		e := gen.MessageError{Code: deref(m.ErrorCode), Title: deref(m.ErrorTitle), Details: m.ErrorDetails}
		out.Error = &e
	}
	return gen.GetMessage200JSONResponse{Body: gen.MessageEnvelope{Success: true, Message: "OK", Data: out}}, nil
}
