package store_test

import (
	"context"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

// The writers of events decide whether to wake the dispatchers with fansOutOf, a Go copy of the
// fan-out trigger's condition (events_fan_out: one delivery per enabled endpoint of the event's
// account). For every kind of account the copy says true exactly when the trigger makes a
// delivery of the account's event: no endpoint, only disabled ones, an enabled one, enabled and
// disabled together, and an account whose only enabled endpoint belongs to another account.
func TestFansOutOfAgreesWithFanOutTrigger(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	db := s.DB()
	other := whAccount(t, s, "other")
	if _, err := s.CreateWebhookEndpoint(ctx, other.ID, "https://example.com/other", whSecret); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		endpoints []bool // enabled, per endpoint of the account
	}{
		{"none", nil},
		{"disabled", []bool{false}},
		{"two-disabled", []bool{false, false}},
		{"enabled", []bool{true}},
		{"enabled-and-disabled", []bool{false, true}},
		{"two-enabled", []bool{true, true}},
	}
	for _, c := range cases {
		a := whAccount(t, s, c.name)
		for i, on := range c.endpoints {
			w, err := s.CreateWebhookEndpoint(ctx, a.ID, "https://example.com/"+c.name+"/"+string(rune('a'+i)), whSecret)
			if err != nil {
				t.Fatal(err)
			}
			if !on {
				if _, err := s.SetWebhookEndpointEnabled(ctx, a.ID, w.ID, false, store.DisabledOperator); err != nil {
					t.Fatal(err)
				}
			}
		}
		var got struct {
			Fans       bool
			Deliveries int
		}
		if err := db.GetContext(ctx, &got.Fans, `WITH e AS (
				INSERT INTO events (account_id, type, data) VALUES ($1, 'webhook.test', '{}') RETURNING account_id)
			SELECT `+store.FansOutOf("e.account_id")+` FROM e`, a.ID); err != nil {
			t.Fatal(err)
		}
		// The trigger's deliveries are visible to the statements after the one that wrote the event.
		if err := db.GetContext(ctx, &got.Deliveries, `SELECT count(*) FROM webhook_deliveries WHERE account_id = $1`, a.ID); err != nil {
			t.Fatal(err)
		}
		if got.Fans != (got.Deliveries > 0) {
			t.Errorf("%s: fansOutOf says %t, the trigger made %d deliveries", c.name, got.Fans, got.Deliveries)
		}
	}
}

// The contact search narrows a long term by its first store.SuffixLen characters; that must be
// the length at which contact_name_suffix_rows cuts a suffix, and first_len's "no earlier
// occurrence" value one more.
func TestSuffixLenAgreesWithSQL(t *testing.T) {
	db := storetest.New(t).DB()
	var got struct {
		Longest int `db:"longest"`
		Never   int `db:"never"`
	}
	if err := db.Get(&got, `SELECT max(length(suffix)) AS longest, max(first_len) AS never
		FROM contact_name_suffix_rows('abcdefghijklmnopqrstuvwxyz abcdefghijklmnopqrstuvwxyz')`); err != nil {
		t.Fatal(err)
	}
	if got.Longest != store.SuffixLen || got.Never != store.SuffixLen+1 {
		t.Errorf("contact_name_suffix_rows cuts at %d and marks no earlier occurrence %d; suffixLen is %d",
			got.Longest, got.Never, store.SuffixLen)
	}
}
