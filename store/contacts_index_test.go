package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"gateway/migrations"
	"gateway/store"
	"gateway/store/storetest"
)

// TestContactListingIndexes checks that the count and the name suffixes the listing reads stay
// in step with the contacts through creations (concurrent ones too), renames and deletions:
// every total equals a plain count over the contacts.
func TestContactListingIndexes(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	a := newContactsAccount(t, s, "acme")
	b := newContactsAccount(t, s, "beta")

	plain := func(accountID int64, term string) int {
		t.Helper()
		var n int
		q, args := `SELECT count(*) FROM contacts WHERE account_id = $1`, []any{accountID}
		if term = strings.TrimSpace(term); term != "" {
			digits := strings.Map(func(r rune) rune {
				if r >= '0' && r <= '9' {
					return r
				}
				return -1
			}, term)
			if !store.IsPhoneFragment(term) {
				digits = ""
			}
			q += ` AND (strpos(lower(name), lower($2)) > 0 OR ($3 <> '' AND strpos(mobile, $3) > 0))`
			args = append(args, term, digits)
		}
		if err := s.DB().Get(&n, q, args...); err != nil {
			t.Fatal(err)
		}
		return n
	}
	check := func(step string, terms ...string) {
		t.Helper()
		for _, acct := range []int64{a.ID, b.ID} {
			for _, term := range append(terms, "") {
				p, err := s.ListContacts(ctx, acct, term, 1000, 0)
				if err != nil {
					t.Fatalf("%s: search %q: %v", step, term, err)
				}
				if want := plain(acct, term); p.Total != want || len(p.Contacts) != want {
					t.Errorf("%s: account %d search %q: total %d, %d rows; a plain count says %d", step, acct, term, p.Total, len(p.Contacts), want)
				}
			}
		}
	}

	// 40 concurrent creations in one account, and a few in the other.
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("Ana Souza %d", i)
			if i%2 == 0 {
				name = fmt.Sprintf("Bartholomew Featherstonehaugh-Smythe %d", i) // longer than the 16 kept characters
			}
			_, _, err := s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: fmt.Sprintf("55119876%05d", i), Name: &name})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"Ana Souza", "Anaïs Ölund"} {
		if _, _, err := s.UpsertContact(ctx, b.ID, store.ContactInput{Mobile: "4477009001" + fmt.Sprint(len(n)), Name: &n}); err != nil {
			t.Fatal(err)
		}
	}
	terms := []string{"souza", "ANA S", "za 1", "featherstonehaugh-smythe 1", "ugh-smythe 38", "eatherstonehaugh-", "ölund",
		"98760", "5511987600012", "a", "zz", "smythe 4"}
	check("created", terms...)

	// Renames (through the upsert) move the suffixes; a name emptied has none.
	for i, name := range []string{"Zed Quux", "", "Ana Souza Renamed"} {
		if _, _, err := s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: fmt.Sprintf("55119876%05d", i), Name: &name}); err != nil {
			t.Fatal(err)
		}
	}
	check("renamed", append(terms, "quux", "renamed")...)

	// Deletions (the contacts have no messages) lower the count and drop the suffixes.
	if _, err := s.DB().Exec(`DELETE FROM contacts WHERE account_id = $1 AND mobile LIKE '5511987600%'`, a.ID); err != nil {
		t.Fatal(err)
	}
	check("deleted", append(terms, "quux", "renamed")...)
	var orphans int
	if err := s.DB().Get(&orphans, `SELECT count(*) FROM contact_name_suffixes s
		WHERE NOT EXISTS (SELECT 1 FROM contacts c WHERE c.id = s.contact_id)`); err != nil {
		t.Fatal(err)
	}
	if orphans != 0 {
		t.Errorf("%d name suffixes of deleted contacts remain", orphans)
	}
}

// TestContactsIndexedPerStatement: new contacts are counted and name-indexed once per statement
// (migration 000031). Statements that insert many contacts across accounts (names that repeat a
// term, longer than the 16 kept characters, empty, not ASCII), an upsert that inserts some rows
// and updates others, and a batch of sends must leave each account's count equal to its
// contacts and the suffix rows equal to contact_name_suffix_rows of each contact's name.
func TestContactsIndexedPerStatement(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	a := newContactsAccount(t, s, "acme")
	b := newContactsAccount(t, s, "beta")
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := s.DB().ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string) {
		t.Helper()
		for _, acct := range []int64{a.ID, b.ID} {
			var counted, plain int
			if err := s.DB().GetContext(ctx, &counted, `SELECT COALESCE(sum(n), 0) FROM contact_counts WHERE account_id = $1`, acct); err != nil {
				t.Fatal(err)
			}
			if err := s.DB().GetContext(ctx, &plain, `SELECT count(*) FROM contacts WHERE account_id = $1`, acct); err != nil {
				t.Fatal(err)
			}
			if counted != plain {
				t.Errorf("%s: account %d counts %d contacts, has %d", step, acct, counted, plain)
			}
		}
		var extra, missing int
		if err := s.DB().GetContext(ctx, &extra, `SELECT count(*) FROM (
				SELECT account_id, suffix, contact_id, created_at, first_len FROM contact_name_suffixes
				EXCEPT ALL
				SELECT c.account_id, r.suffix, c.id, c.created_at, r.first_len FROM contacts c, contact_name_suffix_rows(c.name) r) x`); err != nil {
			t.Fatal(err)
		}
		if err := s.DB().GetContext(ctx, &missing, `SELECT count(*) FROM (
				SELECT c.account_id, r.suffix, c.id, c.created_at, r.first_len FROM contacts c, contact_name_suffix_rows(c.name) r
				EXCEPT ALL
				SELECT account_id, suffix, contact_id, created_at, first_len FROM contact_name_suffixes) x`); err != nil {
			t.Fatal(err)
		}
		if extra != 0 || missing != 0 {
			t.Errorf("%s: %d suffix rows too many, %d missing", step, extra, missing)
		}
	}

	exec(`INSERT INTO contacts (account_id, mobile, name)
		SELECT CASE WHEN g % 3 = 0 THEN $2::bigint ELSE $1::bigint END, (5511900000000 + g)::text,
			CASE g % 4 WHEN 0 THEN 'Ana Santana ' || g WHEN 1 THEN 'Bartholomew Featherstonehaugh ' || g
				WHEN 2 THEN '' ELSE 'Zoë' END
		FROM generate_series(1, 30) g`, a.ID, b.ID)
	check("many in one statement")

	// Three of these mobiles exist in the account (the update renames them), four are new.
	exec(`INSERT INTO contacts (account_id, mobile, name)
		SELECT $1::bigint, (5511900000000 + g)::text, 'Zed ' || g FROM generate_series(26, 35) g WHERE g % 3 <> 0
		ON CONFLICT (account_id, mobile) DO UPDATE SET name = EXCLUDED.name`, a.ID)
	check("upsert")

	var ws []store.SendBegin
	for i := range 6 {
		acct := a.ID
		if i%2 == 1 {
			acct = b.ID
		}
		ws = append(ws, store.SendBegin{AccountID: acct, SendInput: sendIn(fmt.Sprintf("5511901%06d", i), fmt.Sprintf("Send User %d", i), "New")})
	}
	ws = append(ws, store.SendBegin{AccountID: a.ID, SendInput: sendIn("5511900000001", "Not Renamed", "New")}) // an existing contact
	recs, err := s.BeginSends(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if r.ContactCreated != (i < 6) {
			t.Fatalf("send %d: contact created %v", i, r.ContactCreated)
		}
	}
	check("a batch of sends")

	exec(`DELETE FROM contacts c WHERE account_id = $1 AND mobile LIKE '55119000000%'
		AND NOT EXISTS (SELECT 1 FROM conversations v WHERE v.account_id = c.account_id AND v.contact_id = c.id)`, a.ID)
	check("deleted")
}

// TestContactNameSuffixRowsAsBefore: migration 000032 rewrote contact_name_suffix_rows for speed
// and keeps the suffixes already written, so it must return exactly the rows of 000021's
// definition (read from its migration) for every name: terms that repeat and overlap,
// names past the 16 kept characters, letters whose lower case is another length, the empty name.
func TestContactNameSuffixRowsAsBefore(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	tx, err := s.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// 000021's definition, read from its migration, as a temporary function.
	src, err := migrations.FS.ReadFile("000021_name_first_occurrence.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	def, _, ok := strings.Cut(string(src), "\n$$;")
	_, def, found := strings.Cut(def, "CREATE FUNCTION contact_name_suffix_rows(")
	if !ok || !found {
		t.Fatal("no contact_name_suffix_rows in migration 000021")
	}
	if _, err := tx.ExecContext(ctx, "CREATE FUNCTION pg_temp.suffix_rows_000021("+def+"\n$$"); err != nil {
		t.Fatal(err)
	}
	// Fixed names, then 3,000 built from a few overlapping words.
	const names = `SELECT unnest(ARRAY['', 'a', 'aa', 'aaaaaaaaaaaaaaaaaaaaaaaa', 'abab ab abab', 'Ana Santana Banana',
			'Bartholomew Featherstonehaugh-Smythe', 'ÖLUND Öl', 'İstanbul İz', 'ΣΟΦΊΑ σοφία', 'x y x y x y x y x y x y x y',
			'Mississippi Mississippi']) AS name
		UNION ALL
		SELECT concat_ws(' ', w[1 + g % 7], w[1 + (g / 7) % 7], w[1 + (g / 49) % 7], CASE WHEN g % 3 = 0 THEN g::text END)
		FROM generate_series(1, 3000) g,
			(SELECT ARRAY['Ana', 'Santana', 'na', 'Anna', 'Nan', 'Banana', 'Featherstonehaugh'] AS w) words`
	var total, differ int
	if err := tx.GetContext(ctx, &total, `SELECT count(*) FROM (`+names+`) n, contact_name_suffix_rows(n.name)`); err != nil {
		t.Fatal(err)
	}
	if err := tx.GetContext(ctx, &differ, `SELECT count(*) FROM (
			(SELECT n.name, r.* FROM (`+names+`) n, contact_name_suffix_rows(n.name) r
			 EXCEPT ALL SELECT n.name, r.* FROM (`+names+`) n, pg_temp.suffix_rows_000021(n.name) r)
			UNION ALL
			(SELECT n.name, r.* FROM (`+names+`) n, pg_temp.suffix_rows_000021(n.name) r
			 EXCEPT ALL SELECT n.name, r.* FROM (`+names+`) n, contact_name_suffix_rows(n.name) r)) d`); err != nil {
		t.Fatal(err)
	}
	if total < 30000 || differ != 0 {
		t.Errorf("%d suffix rows, %d differ from 000021's", total, differ)
	}
}
