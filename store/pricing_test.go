package store_test

import (
	"context"
	"testing"

	"gateway/store"
)

// A status report's pricing is kept on the message (a later report without pricing, or with
// part of it, keeps what is stored) and carried by its message.status event.
func TestApplyStatusKeepsPricing(t *testing.T) {
	f := newInboundFixture(t)
	id := f.message(t, "pending", "wamid.P")
	r := report("wamid.P", "sent", 1)
	r.Pricing = &store.Pricing{Type: "free_customer_service", Category: "service", Model: "PMP"}
	if res := f.apply(t, r); !res.Changed {
		t.Fatalf("%+v", res)
	}
	f.apply(t, report("wamid.P", "delivered", 2))
	r = report("wamid.P", "read", 3)
	r.Pricing = &store.Pricing{Category: "utility"}
	f.apply(t, r)
	var p struct {
		Type     *string `db:"pricing_type"`
		Category *string `db:"pricing_category"`
		Model    *string `db:"pricing_model"`
	}
	if err := f.st.DB().Get(&p, `SELECT pricing_type, pricing_category, pricing_model FROM messages WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if p.Type == nil || *p.Type != "free_customer_service" || *p.Category != "utility" || *p.Model != "PMP" {
		t.Fatalf("stored pricing %v %v %v", p.Type, p.Category, p.Model)
	}
	m, err := f.st.MessageByID(context.Background(), f.accountID, id)
	if err != nil || m.Pricing == nil || *m.Pricing != (store.Pricing{Type: "free_customer_service", Category: "utility", Model: "PMP"}) {
		t.Fatalf("MessageByID pricing %+v %v", m.Pricing, err)
	}
	evs := f.statusEvents(t, id)
	if len(evs) != 3 {
		t.Fatalf("%d events", len(evs))
	}
	sent, _ := evs[0]["pricing"].(map[string]any)
	if sent["type"] != "free_customer_service" || sent["category"] != "service" || sent["model"] != "PMP" {
		t.Fatalf("sent event %v", evs[0])
	}
	if _, ok := evs[1]["pricing"]; ok {
		t.Fatalf("delivered event without pricing in the report: %v", evs[1])
	}
	if read, _ := evs[2]["pricing"].(map[string]any); read["category"] != "utility" || len(read) != 1 {
		t.Fatalf("read event %v", evs[2])
	}
}

// A report parked before its message is recorded keeps its pricing until it is applied.
func TestParkedStatusKeepsPricing(t *testing.T) {
	f := newInboundFixture(t)
	id := f.message(t, "pending", "")
	r := report("wamid.PP", "delivered", 2)
	r.Pricing = &store.Pricing{Type: "regular", Category: "marketing", Model: "PMP"}
	if res := f.apply(t, r); !res.Parked {
		t.Fatalf("%+v", res)
	}
	f.recordPlatformID(t, id, "wamid.PP")
	if err := f.st.ApplyParkedStatuses(context.Background(), f.accountID, "wamid.PP"); err != nil {
		t.Fatal(err)
	}
	var category *string
	if err := f.st.DB().Get(&category, `SELECT pricing_category FROM messages WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if category == nil || *category != "marketing" {
		t.Fatalf("pricing category %v", category)
	}
	evs := f.statusEvents(t, id)
	if p, _ := evs[len(evs)-1]["pricing"].(map[string]any); p["type"] != "regular" {
		t.Fatalf("events %v", evs)
	}
}
