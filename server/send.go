package server

import (
	"context"

	"gateway/gen"
	"gateway/server/domain"
)

// SendTemplateMessage sends an approved template (POST /v1/messages/template in
// openapi/openapi.yaml): the request as the domain's TemplateSend, the send of the key's mode
// (keymode.go: live through server/domain's pipeline, or test mode's simulated send), and
// its result as the API's. A refusal is a *domain.SendError, which errors.go renders.
func (a *api) SendTemplateMessage(ctx context.Context, req gen.SendTemplateMessageRequestObject) (gen.SendTemplateMessageResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	in := templateSendOf(req.Body)
	if fe := domain.CheckTemplateSend(in); len(fe) > 0 {
		err := domain.Invalid(fe)
		a.s.sends.Observe(p.Mode, err)
		return nil, err
	}
	in.AccountID, in.Key = p.AccountID, heldKeyFrom(ctx)
	sent, err := p.data.send(ctx, p, in)
	if err != nil {
		return nil, err
	}
	return gen.SendTemplateMessage200JSONResponse{Body: gen.SendEnvelope{Success: true, Message: "Message sent", Data: sendResult(sent)}}, nil
}

// templateSendOf is the API's send request as the domain's.
func templateSendOf(b *gen.SendTemplateRequest) domain.TemplateSend {
	in := domain.TemplateSend{Destination: b.Destination, UserID: deref(b.UserId), TemplateID: b.TemplateId, TemplateName: b.TemplateName,
		Language: deref(b.Language), Name: deref(b.Name), CampaignName: deref(b.CampaignName),
		ClientReference: b.ClientReference}
	if b.HeaderVariables != nil {
		in.HeaderVariables = *b.HeaderVariables
	}
	if b.BodyVariables != nil {
		in.BodyVariables = *b.BodyVariables
	}
	if m := b.HeaderMedia; m != nil {
		in.HeaderMedia = &domain.HeaderMedia{Type: string(m.Type), Link: m.Link, ID: m.Id, Filename: m.Filename}
	}
	if l := b.HeaderLocation; l != nil {
		in.HeaderLocation = &domain.HeaderLocation{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}
	}
	if b.ButtonVariables != nil {
		in.ButtonVariables = make([]domain.ButtonVariable, len(*b.ButtonVariables))
		for i, bv := range *b.ButtonVariables {
			in.ButtonVariables[i] = domain.ButtonVariable{Index: bv.Index, Value: bv.Value}
		}
	}
	return in
}

// sendResult is a send's result as the API answers it; a test-mode send says so (mode,
// delivery, note).
func sendResult(m domain.SentMessage) gen.SendResult {
	r := gen.SendResult{MessageId: m.MessageID, ChatMessageId: m.PlatformMessageID, CampaignId: m.CampaignID,
		ConversationId: m.ConversationID, ContactId: m.ContactID, ContactCreated: m.ContactCreated,
		Status: gen.Sent, ClientReference: m.ClientReference}
	if t := m.Test; t != nil {
		mode, delivery, note := gen.SendResultModeTest, gen.Simulated, t.Note
		if t.Real {
			delivery = gen.Real
		}
		r.Mode, r.Delivery, r.Note = &mode, &delivery, &note
	}
	return r
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
