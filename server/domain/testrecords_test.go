package domain

import (
	"context"
	"log/slog"
	"testing"

	"gateway/store"
)

// The fixture contacts are listed as the store lists contacts: one known only by a user id is
// left out unless asked for, a user id finds its contact, a name or a number fragment searches
// the rest.
func TestFixtureContactsListing(t *testing.T) {
	ctx := context.Background()
	list := func(o store.ContactListOptions) store.ContactPage {
		t.Helper()
		if o.Limit == 0 {
			o.Limit = 50
		}
		p, err := TestRecords{}.Contacts(ctx, 1, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Contacts) > o.Limit {
			t.Fatalf("page of %d over limit %d", len(p.Contacts), o.Limit)
		}
		return p
	}
	plain := list(store.ContactListOptions{})
	for _, c := range plain.Contacts {
		if c.Mobile == "" {
			t.Fatalf("v1 listing holds %+v", c)
		}
	}
	all := list(store.ContactListOptions{WithoutMobile: true})
	if all.Total != plain.Total+1 || all.Contacts[0].Mobile != "" || all.Contacts[0].UserID == "" {
		t.Fatalf("opt-in listing %+v (plain %d)", all, plain.Total)
	}
	hidden := all.Contacts[0].UserID
	if p := list(store.ContactListOptions{Search: hidden}); p.Total != 0 {
		t.Fatalf("user id search without opt-in %+v", p)
	}
	if p := list(store.ContactListOptions{Search: hidden, WithoutMobile: true}); p.Total != 1 || p.Contacts[0].UserID != hidden {
		t.Fatalf("user id search %+v", p)
	}
	if p := list(store.ContactListOptions{Search: "GB.2208417733201945561"}); p.Total != 1 || p.Contacts[0].Mobile != "447700900123" {
		t.Fatalf("user id search of a contact with a number %+v", p)
	}
	if p := list(store.ContactListOptions{Search: "souza"}); p.Total != 1 || p.Contacts[0].Name != "Ana Souza" {
		t.Fatalf("name search %+v", p)
	}
	if p := list(store.ContactListOptions{Search: "9876543"}); p.Total != 1 || p.Contacts[0].Mobile != "5511987654321" {
		t.Fatalf("number search %+v", p)
	}
	if p := list(store.ContactListOptions{Search: "@lucia"}); p.Total != 0 {
		t.Fatalf("username search reached a contact without mobile: %+v", p)
	}
	if p := list(store.ContactListOptions{Search: "@lucia", WithoutMobile: true}); p.Total != 1 {
		t.Fatalf("username search with opt-in %+v", p)
	}
	if p := list(store.ContactListOptions{Limit: 1, Offset: 1}); p.Total != plain.Total || len(p.Contacts) != 1 ||
		p.Contacts[0].ID != plain.Contacts[1].ID {
		t.Fatalf("second page %+v", p)
	}
}

// A platform status becomes the store's report: played is read, the first error is kept, the
// callback data names our message, the pricing passes through; a report without an id or with
// an unknown status is ignored and counted.
func TestStatusReport(t *testing.T) {
	var counted []string
	s := &Statuses{Log: slog.New(slog.DiscardHandler), Observe: func(o string) { counted = append(counted, o) }}
	pricing := &store.Pricing{Type: "regular", Category: "utility", Model: "PMP"}
	r, ok := s.report(context.Background(), 1, PlatformStatus{ID: "wamid.1", Status: "played", CallbackData: "42",
		At: fixtureTime(2026, 1, 2, 3).UTC(), Pricing: pricing})
	if !ok || r.Status != "read" || r.CallbackMessageID != 42 || r.Pricing != pricing || !r.OccurredAt.Equal(*fixtureTime(2026, 1, 2, 3)) {
		t.Fatalf("played: %+v %v", r, ok)
	}
	r, ok = s.report(context.Background(), 1, PlatformStatus{ID: "wamid.2", Status: "failed", At: *fixtureTime(2026, 1, 2, 3),
		Error: &StatusError{Code: 131047, Message: "Re-engagement message"}})
	if !ok || r.ErrorCode == nil || *r.ErrorCode != 131047 || r.ErrorTitle != "Re-engagement message" || r.ErrorDetails != "" {
		t.Fatalf("failed: %+v %v", r, ok)
	}
	for _, st := range []PlatformStatus{{Status: "read"}, {ID: "wamid.3", Status: "deleted"}} {
		if _, ok := s.report(context.Background(), 1, st); ok {
			t.Fatalf("%+v applied", st)
		}
	}
	if len(counted) != 2 || counted[0] != "ignored" || counted[1] != "ignored" {
		t.Fatalf("counted %v", counted)
	}
}
