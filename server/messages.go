package server

import (
	"context"
	"errors"
	"net/http"

	"gateway/gen"
	"gateway/server/domain"
	"gateway/store"
)

// errMessageNotFound is GetMessage's 404.
var errMessageNotFound = newAPIError(http.StatusNotFound, gen.ErrorCodeNotFound, "Message not found")

// GetMessage returns a message's last reported status, when it was sent, its status history
// and, for a failed message, the platform's error. Another account's id, an inbound message
// and a send still waiting for the platform's answer are 404; a send whose answer was lost is
// shown as sent with outcome_unknown. Test and demo keys read their
// test sends, whose status ages with time (the key's domain.Records, keymode.go).
func (a *api) GetMessage(ctx context.Context, req gen.GetMessageRequestObject) (gen.GetMessageResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	m, err := p.records.Message(ctx, p.AccountID, req.Id, messageAhead(ctx, p.AccountID, req.Id))
	if errors.Is(err, domain.ErrMessageNotFound) {
		return nil, errMessageNotFound
	}
	if err != nil {
		return nil, err
	}
	return gen.GetMessage200JSONResponse{Body: gen.MessageEnvelope{Success: true, Message: "OK", Data: messageOut(m)}}, nil
}

// messageOut is a recorded message as GetMessage shows it: its status and history, and what
// the store read beside it (the recipient contact, the template, the campaign, the contact's
// service window, the platform's pricing), each left out when not known.
func messageOut(m store.Message) gen.Message {
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
	if m.Type != "" {
		out.Type = &m.Type
	}
	if m.ContactID != 0 {
		out.Recipient = &gen.MessageRecipient{ContactId: m.ContactID, Name: m.RecipientName,
			Mobile: omitEmpty(m.RecipientMobile), UserId: omitEmpty(m.RecipientUserID)}
	}
	if m.TemplateName != "" {
		out.Template = &gen.MessageTemplate{Name: m.TemplateName, Language: omitEmpty(m.TemplateLanguage)}
	}
	if m.CampaignID != nil {
		out.Campaign = &gen.MessageCampaign{Id: *m.CampaignID, Name: m.CampaignName}
	}
	if m.WindowExpiresAt != nil {
		t := m.WindowExpiresAt.UTC()
		out.WindowExpiresAt = &t
	}
	if p := m.Pricing; p != nil {
		out.Pricing = &gen.Pricing{Type: omitEmpty(p.Type), Category: omitEmpty(p.Category), Model: omitEmpty(p.Model)}
	}
	return out
}

// omitEmpty is s for an optional field: nil (left out) when empty.
func omitEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
