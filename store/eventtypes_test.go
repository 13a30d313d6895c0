package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

// An endpoint receives only the types it chose; a new one the v1 types. What it misses is
// counted per type; a message from a sender without a known number reaches only an endpoint
// that opted in to message.received_without_number.
func TestWebhookEndpointEventTypes(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	a := whAccount(t, s, "types")
	v1, err := s.CreateWebhookEndpoint(ctx, a.ID, "https://example.com/v1", whSecret)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v1.EventTypes, store.V1EventTypes) {
		t.Fatalf("default types %v", v1.EventTypes)
	}
	opted, err := s.CreateWebhookEndpoint(ctx, a.ID, "https://example.com/opted", whSecret)
	if err != nil {
		t.Fatal(err)
	}
	opted, err = s.SetWebhookEndpointEventTypes(ctx, a.ID, opted.ID, []string{store.EventMessageReceived,
		store.EventMessageReceivedWithoutNumber, store.EventMessageReceived})
	if err != nil || !slices.Equal(opted.EventTypes, []string{store.EventMessageReceived, store.EventMessageReceivedWithoutNumber}) {
		t.Fatalf("%v %v", opted.EventTypes, err)
	}
	var te *store.EventTypesError
	if _, err := s.SetWebhookEndpointEventTypes(ctx, a.ID, opted.ID, []string{"message.bogus"}); !errors.As(err, &te) || te.Unknown != "message.bogus" {
		t.Fatalf("unknown type: %v", err)
	}
	if _, err := s.SetWebhookEndpointEventTypes(ctx, a.ID, opted.ID, nil); !errors.As(err, &te) {
		t.Fatalf("empty set: %v", err)
	}
	other := whAccount(t, s, "types-other")
	if _, err := s.SetWebhookEndpointEventTypes(ctx, other.ID, opted.ID, store.EventTypes); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another account's endpoint: %v", err)
	}

	if _, err := s.RecordInbound(ctx, a.ID, userOnly("wamid.T1", "US.1", "", "hidden")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordInbound(ctx, a.ID, userOnly("wamid.T2", "US.1", "", "hidden again")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordInbound(ctx, a.ID, inbound("wamid.T3", "4915112345678", "Ann", "visible")); err != nil {
		t.Fatal(err)
	}
	deliveries := func(endpointID int64) []string {
		var types []string
		if err := s.DB().Select(&types, `SELECT e.type FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
			WHERE d.account_id = $1 AND d.endpoint_id = $2 ORDER BY e.created_at, e.id`, a.ID, endpointID); err != nil {
			t.Fatal(err)
		}
		return types
	}
	if got := deliveries(v1.ID); !slices.Equal(got, []string{"contact.created", "message.received"}) {
		t.Fatalf("v1 endpoint got %v", got)
	}
	if got := deliveries(opted.ID); !slices.Equal(got, []string{store.EventMessageReceivedWithoutNumber,
		store.EventMessageReceivedWithoutNumber, store.EventMessageReceived}) {
		t.Fatalf("opted endpoint got %v", got)
	}
	missed, err := s.MissedEvents(ctx, a.ID, v1.ID)
	if err != nil || missed[store.EventMessageReceivedWithoutNumber] != 2 || missed[store.EventContactCreatedWithoutNumber] != 1 ||
		len(missed) != 2 {
		t.Fatalf("v1 missed %v %v", missed, err)
	}
	missed, err = s.MissedEvents(ctx, a.ID, opted.ID)
	if err != nil || missed[store.EventContactCreated] != 1 || missed[store.EventContactCreatedWithoutNumber] != 1 || len(missed) != 2 {
		t.Fatalf("opted missed %v %v", missed, err)
	}
	if missed, err := s.MissedEvents(ctx, other.ID, v1.ID); err != nil || len(missed) != 0 {
		t.Fatalf("another account reads %v %v", missed, err)
	}
}
