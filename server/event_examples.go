package server

import (
	"context"
	"time"

	"gateway/gen"
)

// ListEventExamples answers GET /events/examples: one made-up example of each webhook event,
// shaped like a delivery's body and marked mode "test". Nothing is read or written. It fails
// only when the examples cannot be encoded, a programming error rendered as 500.
func (a *api) ListEventExamples(ctx context.Context, _ gen.ListEventExamplesRequestObject) (gen.ListEventExamplesResponseObject, error) {
	if _, err := principalFrom(ctx); err != nil {
		return nil, err
	}
	events, err := eventExamples(a.s.now().UTC().Truncate(time.Second))
	if err != nil {
		return nil, err
	}
	return gen.ListEventExamples200JSONResponse{Body: gen.EventExamplesEnvelope{Success: true, Message: "OK",
		Data: gen.EventExamples{Events: events}}}, nil
}

// eventExamples builds one example of each event, in the order of WebhookEvent's oneOf.
func eventExamples(now time.Time) ([]gen.WebhookEvent, error) {
	text := "Is it in blue?"
	received := gen.MessageReceivedEvent{Id: "evt_example_message_received", Event: "message.received", CreatedAt: now,
		Mode: ptr(gen.MessageReceivedEventMode("test")),
		Data: gen.MessageReceivedData{MessageId: 1002, ConversationId: 77, ContactId: 501, From: "5511987654321",
			Name: "Ana Souza", Type: "text", Text: &text}}
	sent := gen.MessageSentEvent{Id: "evt_example_message_sent", Event: "message.sent", CreatedAt: now,
		Mode: ptr(gen.MessageSentEventMode("test")),
		Data: gen.MessageSentData{MessageId: 1001, ChatMessageId: "wamid.example", ConversationId: 77, ContactId: 501,
			Destination: "15551234567", Template: "order_confirmation", Source: "api"}}
	status := gen.MessageStatusEvent{Id: "evt_example_message_status", Event: "message.status", CreatedAt: now,
		Mode: ptr(gen.MessageStatusEventMode("test")),
		Data: gen.MessageStatusData{MessageId: 1001, ChatMessageId: "wamid.example", ConversationId: 77,
			Status: gen.Delivered, Timestamp: now,
			Pricing: &gen.Pricing{Type: ptr("regular"), Category: ptr("utility"), Model: ptr("PMP")}}}
	contact := gen.ContactCreatedEvent{Id: "evt_example_contact_created", Event: "contact.created", CreatedAt: now,
		Mode: ptr(gen.ContactCreatedEventMode("test")),
		Data: gen.ContactCreatedData{ContactId: 501, Mobile: "15551234567", Name: "Ana Souza"}}
	test := gen.WebhookTestEvent{Id: "evt_example_webhook_test", Event: "webhook.test", CreatedAt: now,
		Mode: ptr(gen.WebhookTestEventMode("test")),
		Data: gen.WebhookTestData{EndpointId: 3, Message: "A test event sent from the dashboard"}}
	received.Data.UserId = ptr("BR.13491208655302741918")
	received.Data.ReplyTo = &gen.MessageRef{MessageId: ptr(int64(1001)), PlatformMessageId: "wamid.example"}
	withoutNumber := gen.MessageReceivedWithoutNumberEvent{Id: "evt_example_message_received_without_number",
		Event: "message.received_without_number", CreatedAt: now, Mode: ptr(gen.MessageReceivedWithoutNumberEventMode("test")),
		Data: gen.MessageReceivedWithoutNumberData{MessageId: 1003, ConversationId: 78, ContactId: 502,
			UserId: "BR.13491208655302741918", Username: ptr("ana.makes"), Name: "Ana Lima", Type: "image",
			Media: &struct {
				Caption  *string `json:"caption,omitempty"`
				Filename *string `json:"filename,omitempty"`
				Id       string  `json:"id"`
				MimeType *string `json:"mime_type,omitempty"`
			}{Id: "1479537139650973", MimeType: ptr("image/jpeg"), Caption: ptr("This one")},
			Image: &gen.InboundMedia{Id: "1479537139650973", MimeType: ptr("image/jpeg"), Caption: ptr("This one"),
				Sha256: ptr("SOY9f9a9t1Xvhc8uQx3n4Z9eB7yXv1+7S2r7n4xq0nQ=")}}}
	edited := gen.MessageEditedEvent{Id: "evt_example_message_edited", Event: "message.edited", CreatedAt: now,
		Mode: ptr(gen.MessageEditedEventMode("test")),
		Data: gen.MessageEditedData{MessageId: 1002, ConversationId: 77, ContactId: 501, ChatMessageId: "wamid.example",
			Type: "text", Text: ptr("Is it in navy blue?"), EditedAt: now}}
	deleted := gen.MessageDeletedEvent{Id: "evt_example_message_deleted", Event: "message.deleted", CreatedAt: now,
		Mode: ptr(gen.MessageDeletedEventMode("test")),
		Data: gen.MessageDeletedData{MessageId: 1002, ConversationId: 77, ContactId: 501, ChatMessageId: "wamid.example",
			DeletedAt: now}}
	contactWithoutNumber := gen.ContactCreatedWithoutNumberEvent{Id: "evt_example_contact_created_without_number",
		Event: "contact.created_without_number", CreatedAt: now, Mode: ptr(gen.ContactCreatedWithoutNumberEventMode("test")),
		Data: gen.ContactCreatedWithoutNumberData{ContactId: 502, UserId: "BR.13491208655302741918", Username: ptr("ana.makes"),
			Name: "Ana Lima"}}
	updated := gen.ContactUpdatedEvent{Id: "evt_example_contact_updated", Event: "contact.updated", CreatedAt: now,
		Mode: ptr(gen.ContactUpdatedEventMode("test")),
		Data: gen.ContactUpdatedData{ContactId: 501, Reason: gen.ContactNumberChanged, Mobile: ptr("5511987650000"),
			UserId:   ptr("BR.20587361049913285544"),
			Previous: gen.ContactIdentifiers{Mobile: ptr("5511987654321"), UserId: ptr("BR.13491208655302741918")}}}
	resume := now.Add(14 * time.Hour)
	paused := gen.BroadcastPausedEvent{Id: "evt_example_broadcast_paused", Event: "broadcast.paused", CreatedAt: now,
		Mode: ptr(gen.BroadcastPausedEventMode("test")),
		Data: gen.BroadcastPausedData{BroadcastId: 12, Name: "November sale", CampaignId: 31, Reason: "portfolio_limit", ResumeAt: &resume}}
	completed := gen.BroadcastCompletedEvent{Id: "evt_example_broadcast_completed", Event: "broadcast.completed", CreatedAt: now,
		Mode: ptr(gen.BroadcastCompletedEventMode("test")),
		Data: gen.BroadcastCompletedData{BroadcastId: 12, Name: "November sale", CampaignId: 31, Counts: map[string]int{"sent": 1998, "failed": 2}}}
	out := make([]gen.WebhookEvent, 12)
	for i, set := range []func(*gen.WebhookEvent) error{
		func(w *gen.WebhookEvent) error { return w.FromMessageReceivedEvent(received) },
		func(w *gen.WebhookEvent) error { return w.FromMessageSentEvent(sent) },
		func(w *gen.WebhookEvent) error { return w.FromMessageStatusEvent(status) },
		func(w *gen.WebhookEvent) error { return w.FromContactCreatedEvent(contact) },
		func(w *gen.WebhookEvent) error { return w.FromWebhookTestEvent(test) },
		func(w *gen.WebhookEvent) error { return w.FromMessageReceivedWithoutNumberEvent(withoutNumber) },
		func(w *gen.WebhookEvent) error { return w.FromMessageEditedEvent(edited) },
		func(w *gen.WebhookEvent) error { return w.FromMessageDeletedEvent(deleted) },
		func(w *gen.WebhookEvent) error { return w.FromContactCreatedWithoutNumberEvent(contactWithoutNumber) },
		func(w *gen.WebhookEvent) error { return w.FromContactUpdatedEvent(updated) },
		func(w *gen.WebhookEvent) error { return w.FromBroadcastPausedEvent(paused) },
		func(w *gen.WebhookEvent) error { return w.FromBroadcastCompletedEvent(completed) },
	} {
		if err := set(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }
