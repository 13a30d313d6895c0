package benchfloor_test

import (
	"context"
	"testing"

	"gateway/store/benchfloor"
	"gateway/store/storetest"
)

// The seeder inserts its contacts with their triggers on, also when it skips the triggers of
// the messages (tests run as a superuser, so it does): the contacts' count and name index are
// the triggers' own rows, so the listing counts and finds seeded contacts like any other, and
// a top-up adds only the missing messages and contacts.
func TestSeedDataContactsCountedAndIndexed(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	a, err := st.CreateAccount(ctx, "bench", "bench@example.com", "bench-1")
	if err != nil {
		t.Fatal(err)
	}
	f := benchfloor.New(st)
	defer f.Close()
	tmpl := benchfloor.Template{PlatformID: "1", Name: "order_confirmation", Language: "en_US", Category: "UTILITY", BodyParams: 2}
	for _, step := range []struct{ messages, contacts int64 }{{12, 3}, {20, 4}} {
		seed, err := f.SeedData(ctx, a.ID, tmpl, step.messages, nil)
		if err != nil {
			t.Fatal(err)
		}
		if seed.Seeded != step.messages {
			t.Fatalf("seeded %d messages, want %d", seed.Seeded, step.messages)
		}
		var got struct {
			Contacts int64 `db:"contacts"`
			Counted  int64 `db:"counted"`
			Suffixes int64 `db:"suffixes"`
			Expected int64 `db:"expected"`
		}
		if err := st.DB().GetContext(ctx, &got, `SELECT
				(SELECT count(*) FROM contacts WHERE account_id = $1) AS contacts,
				(SELECT coalesce(sum(n), 0) FROM contact_counts WHERE account_id = $1) AS counted,
				(SELECT count(*) FROM contact_name_suffixes WHERE account_id = $1) AS suffixes,
				(SELECT count(*) FROM contacts c, contact_name_suffix_rows(c.name) WHERE c.account_id = $1) AS expected`,
			a.ID); err != nil {
			t.Fatal(err)
		}
		if got.Contacts != step.contacts || got.Counted != step.contacts || got.Suffixes != got.Expected || got.Expected == 0 {
			t.Errorf("after seeding %d messages: %+v; want %d contacts, all counted, and every name suffix indexed",
				step.messages, got, step.contacts)
		}
	}
}
