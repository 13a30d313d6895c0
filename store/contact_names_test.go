package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// suffixDiff counts the account's suffix rows that contact_name_suffix_rows of its contacts
// with a mobile does not give (extra) and those it gives that are not there (missing).
func suffixDiff(t *testing.T, s *store.Store, accountID int64) (extra, missing int) {
	t.Helper()
	want := `SELECT c.account_id, r.suffix, c.id, c.created_at, r.first_len FROM contacts c, contact_name_suffix_rows(c.name) r
		WHERE c.account_id = $1 AND c.mobile IS NOT NULL`
	have := `SELECT account_id, suffix, contact_id, created_at, first_len FROM contact_name_suffixes WHERE account_id = $1`
	if err := s.DB().Get(&extra, `SELECT count(*) FROM (`+have+` EXCEPT ALL `+want+`) x`, accountID); err != nil {
		t.Fatal(err)
	}
	if err := s.DB().Get(&missing, `SELECT count(*) FROM (`+want+` EXCEPT ALL `+have+`) x`, accountID); err != nil {
		t.Fatal(err)
	}
	return extra, missing
}

// importContacts stages rows for numbers first..first+n-1 (every fourth name repeats a term,
// every tenth is empty) and confirms them.
func importContacts(t *testing.T, s *store.Store, accountID int64, first, n int) store.ImportResult {
	t.Helper()
	ctx := context.Background()
	id, err := s.CreateImport(ctx, accountID, "imported", nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]store.ImportRow, n)
	for i := range rows {
		r := store.ImportRow{Line: i + 2, Mobile: fmt.Sprintf("55119%08d", first+i)}
		switch i % 10 {
		case 0:
		case 4:
			r.FirstName, r.LastName = "Ana", fmt.Sprintf("Santana Ana %d", first+i)
		default:
			r.FirstName, r.LastName = "Zoë", fmt.Sprintf("Featherstonehaugh-Bartholomew %d", first+i)
		}
		rows[i] = r
	}
	if err := s.AddImportRows(ctx, accountID, id, rows); err != nil {
		t.Fatal(err)
	}
	res, err := s.ConfirmImport(ctx, accountID, id, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// drainNames indexes the account's backlog in batches of batch until none is left.
func drainNames(t *testing.T, s *store.Store, accountID int64, batch int) {
	t.Helper()
	for {
		n, err := s.IndexContactNames(context.Background(), accountID, batch)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

func searchTotal(t *testing.T, s *store.Store, accountID int64, term string) int {
	t.Helper()
	p, err := s.ListContacts(context.Background(), accountID, term, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p.Total
}

// A small import's contacts are in the name search at once. A large one's (10,000 rows or more)
// are listed and counted at once and wait in the backlog; a rename, a delete and a cleared
// mobile meanwhile are kept; once the indexer has drained the backlog the name index is
// exactly contact_name_suffix_rows of every contact with a mobile, and the search finds them.
// Another account's backlog is untouched by this one's batches.
func TestLargeImportJoinsNameSearchAfterwards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	a := newContactsAccount(t, s, "acme")
	b := newContactsAccount(t, s, "beta")

	if res := importContacts(t, s, a.ID, 0, 100); res.Created != 100 {
		t.Fatalf("small import: %+v", res)
	}
	if waiting, err := s.NameBacklog(ctx, a.ID); err != nil || waiting {
		t.Fatalf("a small import left a backlog (%v)", err)
	}
	if n := searchTotal(t, s, a.ID, "santana"); n != 10 {
		t.Fatalf("search after a small import: %d, want 10", n)
	}

	// 10,000 rows: 50 of them the small import's numbers (updated, renamed at once), the rest new.
	res := importContacts(t, s, a.ID, 50, 10_000)
	if res.Created != 9950 || res.Updated != 50 || res.Tagged != 9950 {
		t.Fatalf("large import: %+v, want 9,950 created, 50 updated, 9,950 newly tagged", res)
	}
	importContacts(t, s, b.ID, 0, 10_000)
	if waiting, err := s.NameBacklog(ctx, a.ID); err != nil || !waiting {
		t.Fatalf("a large import left no backlog (%v)", err)
	}
	if p, err := s.ListContacts(ctx, a.ID, "", 1, 0); err != nil || p.Total != 10_050 {
		t.Fatalf("listing after a large import: %d contacts (%v), want 10,050", p.Total, err)
	}
	// The 50 updated contacts were renamed in the index at once; the new ones wait.
	if n := searchTotal(t, s, a.ID, "santana"); n != 10 {
		t.Fatalf("search before the indexer: %d, want the 10 indexed before", n)
	}

	var renamed, deleted, cleared int64
	for _, q := range []struct {
		dst *int64
		sql string
	}{
		{&renamed, `UPDATE contacts SET firstname = 'Renamed', lastname = 'Santana' WHERE account_id = $1 AND mobile = '5511900005000' RETURNING id`},
		{&deleted, `DELETE FROM contacts WHERE account_id = $1 AND mobile = '5511900005001' RETURNING id`},
		{&cleared, `UPDATE contacts SET mobile = NULL, user_id = 'BR.1' WHERE account_id = $1 AND mobile = '5511900005002' RETURNING id`},
	} {
		if err := s.DB().Get(q.dst, q.sql, a.ID); err != nil {
			t.Fatal(err)
		}
	}

	drainNames(t, s, a.ID, 3000)
	if waiting, _ := s.NameBacklog(ctx, a.ID); waiting {
		t.Fatal("the drained account still has a backlog")
	}
	if waiting, _ := s.NameBacklog(ctx, b.ID); !waiting {
		t.Fatal("the other account's backlog was taken")
	}
	if extra, missing := suffixDiff(t, s, a.ID); extra != 0 || missing != 0 {
		t.Fatalf("after the indexer: %d suffix rows too many, %d missing", extra, missing)
	}
	// About a thousand names hold "Santana"; the search counts what the names say.
	var want int
	if err := s.DB().Get(&want, `SELECT count(*) FROM contacts WHERE account_id = $1 AND mobile IS NOT NULL AND name ILIKE '%santana%'`, a.ID); err != nil {
		t.Fatal(err)
	}
	if n := searchTotal(t, s, a.ID, "santana"); n != want || want < 1000 {
		t.Fatalf("search after the indexer: %d, want %d", n, want)
	}
	accounts, err := s.NameBacklogAccounts(ctx, 10)
	if err != nil || len(accounts) != 1 || accounts[0] != b.ID {
		t.Fatalf("backlog accounts %v (%v), want [%d]", accounts, err, b.ID)
	}
}

// A rename that commits while the indexer's batch holds the contact waits for it and then
// replaces what it wrote; an indexer batch that meets an uncommitted rename waits for it and
// then writes the new name (or nothing, for rows the rename wrote). Either way the index ends
// exactly as the names are.
func TestNameIndexerAndRenameInEitherOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	a := newContactsAccount(t, s, "acme")
	importContacts(t, s, a.ID, 0, 10_000)

	// Indexer first: its batch is held open in a transaction while a rename waits.
	tx, err := s.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`SELECT contact_names_index_backlog($1, 100)`, a.ID); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var renameErr error
	wg.Go(func() {
		_, renameErr = s.DB().Exec(`UPDATE contacts SET firstname = 'First', lastname = 'Rename' WHERE account_id = $1 AND mobile = '5511900000001'`, a.ID)
	})
	time.Sleep(200 * time.Millisecond) // the rename is waiting for the batch's lock
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if renameErr != nil {
		t.Fatal(renameErr)
	}

	// Rename first: it is held open while a batch that includes its contact waits.
	tx, err = s.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`UPDATE contacts SET firstname = 'Second', lastname = 'Rename' WHERE account_id = $1 AND mobile = '5511900000200'`, a.ID); err != nil {
		t.Fatal(err)
	}
	var indexErr error
	wg.Go(func() { _, indexErr = s.IndexContactNames(ctx, a.ID, 200) })
	time.Sleep(200 * time.Millisecond)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if indexErr != nil {
		t.Fatal(indexErr)
	}
	drainNames(t, s, a.ID, 5000)
	if extra, missing := suffixDiff(t, s, a.ID); extra != 0 || missing != 0 {
		t.Fatalf("%d suffix rows too many, %d missing", extra, missing)
	}
	for _, term := range []string{"first rename", "second rename"} {
		if n := searchTotal(t, s, a.ID, term); n != 1 {
			t.Errorf("search %q: %d, want 1", term, n)
		}
	}
}
