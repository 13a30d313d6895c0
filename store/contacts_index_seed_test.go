package store_test

import (
	"context"
	"strings"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

// The contact benchmark's seeder inserts its contacts with their triggers off and fills the
// contact index itself (store.BenchIndexContactsSQL); on contacts the triggers indexed (names
// empty, repeated, accented, longer than 16 characters, shared between accounts), the seeder's
// statements make the same counts per account and the same suffix rows.
func TestBenchSeedIndexAgreesWithTriggers(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	db := st.DB()
	a := newAccount(t, st, "seed-a")
	b := newAccount(t, st, "seed-b")
	names := []string{"", "Ana", "Ana Santana", "anana", "José Ñúñez", "Maria da Graça Albuquerque Sobrinho", "a a a a",
		"O'Brien", "ZZZZZZZZZZZZZZZZZZZZ", "Li"}
	for i, n := range names {
		for _, acct := range []int64{a.ID, b.ID} {
			if _, err := db.ExecContext(ctx, `INSERT INTO contacts (account_id, mobile, name) VALUES ($1, $2, $3)`,
				acct, 15550000000+int64(i), n); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO contacts (account_id, mobile, name)
		SELECT $1, 15560000000 + g, 'Bench ' || g FROM generate_series(1, 20) g`, a.ID); err != nil {
		t.Fatal(err)
	}
	type index struct {
		Counts   []string
		Suffixes []string
	}
	read := func() index {
		t.Helper()
		var x index
		if err := db.SelectContext(ctx, &x.Counts, `SELECT account_id || ':' || sum(n) FROM contact_counts
			GROUP BY account_id ORDER BY 1`); err != nil {
			t.Fatal(err)
		}
		if err := db.SelectContext(ctx, &x.Suffixes, `SELECT concat_ws('|', account_id, suffix, contact_id, created_at, first_len)
			FROM contact_name_suffixes ORDER BY 1`); err != nil {
			t.Fatal(err)
		}
		return x
	}
	byTriggers := read()
	if len(byTriggers.Counts) != 2 || len(byTriggers.Suffixes) < 100 {
		t.Fatalf("the triggers indexed too little: %d counts, %d suffix rows", len(byTriggers.Counts), len(byTriggers.Suffixes))
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM contact_counts; DELETE FROM contact_name_suffixes`); err != nil {
		t.Fatal(err)
	}
	for _, q := range store.BenchIndexContactsSQL {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	bySeeder := read()
	if d := storetest.LineDiff(strings.Join(byTriggers.Counts, "\n"), strings.Join(bySeeder.Counts, "\n"), 10); d != "" {
		t.Errorf("contact counts differ (- triggers, + seeder):\n%s", d)
	}
	if d := storetest.LineDiff(strings.Join(byTriggers.Suffixes, "\n"), strings.Join(bySeeder.Suffixes, "\n"), 20); d != "" {
		t.Errorf("suffix rows differ (- triggers, + seeder):\n%s", d)
	}
}
