package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

// TestContactSearchRepeatedTerm checks that a name holding the search term more than once,
// also farther apart than the 16 characters a suffix keeps, is counted and listed once: the
// listing's total and every page agree with a plain scan of the contacts, for every
// substring of the names as a term. The names are drawn from a small alphabet so terms
// repeat within a name and overlap themselves ("aaa" in "aaaa").
func TestContactSearchRepeatedTerm(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	a := newContactsAccount(t, s, "repeat")
	other := newContactsAccount(t, s, "other")

	names := []string{
		"Ana Santana", "Mari Mari", "Mariana Marino", "aaaa", "abab abab", "ANA ana Ana",
		"Bartholomew Featherstonehaugh Bart", // "bart" twice, 32 characters apart
		"ab ab ab ab ab ab ab ab ab ab ab ab ab", "Zoë Zoë", "",
	}
	rnd := rand.New(rand.NewPCG(13, 4))
	for range 60 {
		var b strings.Builder
		for range 4 + rnd.IntN(30) {
			b.WriteByte("ab ba"[rnd.IntN(5)])
		}
		names = append(names, b.String())
	}
	for i, n := range names {
		if _, _, err := s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: fmt.Sprintf("4470000%05d", i), Name: &n}); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 { // the same names elsewhere must not count here
			if _, _, err := s.UpsertContact(ctx, other.ID, store.ContactInput{Mobile: fmt.Sprintf("4470000%05d", i), Name: &n}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Distinct created_at for a meaningful order, and a rename to exercise the trigger's update.
	if _, err := s.DB().Exec(`UPDATE contacts SET created_at = now() - (id % 37) * interval '1 minute' WHERE account_id = $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	renamed := "Santana Ana Santana"
	if _, _, err := s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "447000000000", Name: &renamed}); err != nil {
		t.Fatal(err)
	}

	terms := map[string]bool{}
	for _, n := range append(names, renamed) {
		r := []rune(strings.ToLower(n))
		for i := range r {
			for k := i + 1; k <= len(r) && k-i <= 20; k++ {
				if term := strings.TrimSpace(string(r[i:k])); term != "" {
					terms[term] = true
				}
			}
		}
	}
	checked := 0
	for term := range terms {
		var want []int64
		if err := s.DB().Select(&want, `SELECT id FROM contacts WHERE account_id = $1 AND strpos(lower(name), lower($2)) > 0
			ORDER BY created_at DESC, id DESC`, a.ID, term); err != nil {
			t.Fatal(err)
		}
		for _, off := range []int{0, 3} {
			p, err := s.ListContacts(ctx, a.ID, term, 5, off)
			if err != nil {
				t.Fatalf("search %q: %v", term, err)
			}
			page := want[min(off, len(want)):min(off+5, len(want))]
			if p.Total != len(want) || fmt.Sprint(pageContactIDs(p)) != fmt.Sprint(nonNil(page)) {
				t.Fatalf("search %q offset %d: total %d page %v; a plain scan says %d and %v",
					term, off, p.Total, pageContactIDs(p), len(want), page)
			}
		}
		checked++
	}
	if checked < 500 {
		t.Fatalf("only %d terms checked", checked)
	}
}

// nonNil turns an empty slice into nil, as pageContactIDs returns for an empty page.
func nonNil(ids []int64) []int64 {
	if len(ids) == 0 {
		return nil
	}
	return ids
}
