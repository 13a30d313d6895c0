package server

import (
	"context"
	"errors"
	"time"

	"gateway/gen"
	"gateway/store"
)

// Default test-mode aging (DESIGN section 9): a test message reads as delivered 2 s and read
// 5 s after it was sent. Options.TestDeliveredAfter / TestReadAfter override them.
const (
	defaultTestDeliveredAfter = 2 * time.Second
	defaultTestReadAfter      = 5 * time.Second
)

func messageNotFound() gen.GetMessageResponseObject {
	return gen.GetMessage404JSONResponse{NotFoundJSONResponse: gen.NotFoundJSONResponse{Body: gen.NotFoundEnvelope{
		Success: false, Code: gen.ErrorCodeNotFound, Message: "Message not found"}}}
}

// GetMessage returns a message's last reported status, when it was sent, its status history
// and, for a failed message, the platform's error. Another account's id, an inbound message
// and a send still waiting for the platform's answer are 404. Test and demo keys read their
// test sends, whose status ages with time.
func (a *api) GetMessage(ctx context.Context, req gen.GetMessageRequestObject) (gen.GetMessageResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if p.Mode != ModeLive {
		return a.s.getTestMessage(ctx, p.AccountID, req.Id)
	}
	m, err := a.s.store.MessageByID(ctx, p.AccountID, req.Id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && m.Status == "pending") {
		return messageNotFound(), nil
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
		SentAt: sentAt.UTC(), History: history}
	if m.Status == "failed" && (m.ErrorCode != nil || m.ErrorTitle != nil) {
		e := gen.MessageError{Code: deref(m.ErrorCode), Title: deref(m.ErrorTitle), Details: m.ErrorDetails}
		out.Error = &e
	}
	return gen.GetMessage200JSONResponse{Body: gen.MessageEnvelope{Success: true, Message: "OK", Data: out}}, nil
}

// getTestMessage reads a test send; its status is derived from its age on the server's clock:
// sent, then delivered, then read.
func (s *Server) getTestMessage(ctx context.Context, accountID, id int64) (gen.GetMessageResponseObject, error) {
	tm, err := s.store.TestMessageByID(ctx, accountID, id)
	if errors.Is(err, store.ErrNotFound) {
		return messageNotFound(), nil
	}
	if err != nil {
		return nil, err
	}
	delivered, read := s.opts.TestDeliveredAfter, s.opts.TestReadAfter
	if delivered <= 0 {
		delivered = defaultTestDeliveredAfter
	}
	if read <= 0 {
		read = defaultTestReadAfter
	}
	sent := tm.CreatedAt.UTC()
	age := s.now().Sub(sent)
	history := []gen.StatusChange{{Status: gen.Sent, Timestamp: sent}}
	if age >= delivered {
		history = append(history, gen.StatusChange{Status: gen.Delivered, Timestamp: sent.Add(delivered)})
	}
	if age >= read {
		history = append(history, gen.StatusChange{Status: gen.Read, Timestamp: sent.Add(read)})
	}
	return gen.GetMessage200JSONResponse{Body: gen.MessageEnvelope{Success: true, Message: "OK", Data: gen.Message{
		MessageId: tm.ID, ChatMessageId: tm.PlatformMessageID, Status: history[len(history)-1].Status,
		SentAt: sent, History: history,
	}}}, nil
}
