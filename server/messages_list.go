package server

import (
	"context"
	"errors"

	"gateway/gen"
	"gateway/server/refusal"
	"gateway/store"
)

// errBadCursor is the 422 for a cursor no listing returned.
var errBadCursor = invalid(refusal.One("query.cursor", "is not a next_cursor this listing returned"))

// ListMessages lists the account's sent messages newest first with the request's filters, a
// page at a time by cursor (the key's domain.Records). Test and demo keys see fixture messages.
func (a *api) ListMessages(ctx context.Context, req gen.ListMessagesRequestObject) (gen.ListMessagesResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	q := req.Params
	f := store.MessageFilter{Limit: 50, CampaignID: deref(q.CampaignId), ContactID: deref(q.ContactId),
		Template: deref(q.Template), Status: string(deref(q.Status))}
	if q.Limit != nil {
		f.Limit = *q.Limit
	}
	if q.CreatedAfter != nil {
		f.CreatedAfter = *q.CreatedAfter
	}
	if q.CreatedBefore != nil {
		f.CreatedBefore = *q.CreatedBefore
	}
	if q.Cursor != nil {
		c, err := store.ParseMessageCursor(*q.Cursor)
		if errors.Is(err, store.ErrBadCursor) {
			return nil, errBadCursor
		}
		f.After = &c
	}
	page, err := p.records.Messages(ctx, p.AccountID, f)
	if err != nil {
		return nil, err
	}
	out := gen.MessageList{Messages: make([]gen.MessageListItem, 0, len(page.Messages))}
	for _, m := range page.Messages {
		out.Messages = append(out.Messages, listItem(m))
	}
	if page.Next != nil {
		next := page.Next.String()
		out.NextCursor = &next
	}
	return gen.ListMessages200JSONResponse{Body: gen.MessagesEnvelope{Success: true, Message: "OK", Data: out}}, nil
}

// listItem is a listed message as the API shows it.
func listItem(m store.ListedMessage) gen.MessageListItem {
	sentAt := m.CreatedAt
	if m.SentAt != nil {
		sentAt = *m.SentAt
	}
	it := gen.MessageListItem{MessageId: m.ID, ChatMessageId: m.PlatformMessageID, Status: gen.MessageStatus(m.Status),
		Destination: m.Destination, ContactId: m.ContactID, ConversationId: m.ConversationID, CampaignId: m.CampaignID,
		Template: m.TemplateName, Source: gen.MessageSource(m.Source), CreatedAt: m.CreatedAt.UTC(), SentAt: sentAt.UTC()}
	if m.CampaignName != "" {
		name := m.CampaignName
		it.CampaignName = &name
	}
	if m.Status == "failed" && (m.ErrorCode != nil || m.ErrorTitle != nil) {
		it.Error = &gen.MessageError{Code: deref(m.ErrorCode), Title: deref(m.ErrorTitle), Details: m.ErrorDetails}
	}
	return it
}
