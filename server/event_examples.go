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
	out := make([]gen.WebhookEvent, 5)
	for i, set := range []func(*gen.WebhookEvent) error{
		func(w *gen.WebhookEvent) error { return w.FromMessageReceivedEvent(received) },
		func(w *gen.WebhookEvent) error { return w.FromMessageSentEvent(sent) },
		func(w *gen.WebhookEvent) error { return w.FromMessageStatusEvent(status) },
		func(w *gen.WebhookEvent) error { return w.FromContactCreatedEvent(contact) },
		func(w *gen.WebhookEvent) error { return w.FromWebhookTestEvent(test) },
	} {
		if err := set(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }
