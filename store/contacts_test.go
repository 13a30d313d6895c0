package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

func newContactsAccount(t testing.TB, s *store.Store, name string) store.Account {
	t.Helper()
	a, err := s.CreateAccount(context.Background(), name, name+"@example.com", fmt.Sprintf("%s-%p", name, &name))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func contactStrPtr(s string) *string { return &s }

func TestUpsertContact(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	a := newContactsAccount(t, s, "acme")

	c, created, err := s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "5511987654321", Name: contactStrPtr("Ana Souza"), Note: contactStrPtr("VIP")})
	if err != nil || !created || c.ID == 0 || c.AccountID != a.ID || c.Name != "Ana Souza" || c.Note != "VIP" || c.Blocked || c.CreatedAt.IsZero() {
		t.Fatalf("create: %+v %t %v", c, created, err)
	}
	// nil fields keep their values.
	u, created, err := s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "5511987654321"})
	if err != nil || created || u.ID != c.ID || u.Name != "Ana Souza" || u.Note != "VIP" || !u.CreatedAt.Equal(c.CreatedAt) {
		t.Fatalf("update with nothing: %+v %t %v", u, created, err)
	}
	// Given fields replace them, empty strings included.
	u, _, err = s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "5511987654321", Name: contactStrPtr("Ana S."), Note: contactStrPtr("")})
	if err != nil || u.Name != "Ana S." || u.Note != "" {
		t.Fatalf("update: %+v %v", u, err)
	}
	// Created without a name or note: empty strings.
	n, created, err := s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "15551234567"})
	if err != nil || !created || n.Name != "" || n.Note != "" {
		t.Fatalf("bare create: %+v %t %v", n, created, err)
	}
	// The database refuses what the API must never let through.
	if _, _, err := s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "+5511987654321"}); err == nil {
		t.Fatal("a non-normalised mobile was stored")
	}
	long := make([]byte, 501)
	for i := range long {
		long[i] = 'x'
	}
	if _, _, err := s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "15557654321", Note: contactStrPtr(string(long))}); err == nil {
		t.Fatal("a 501-character note was stored")
	}
	var events int
	if err := s.DB().Get(&events, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'contact.created'`, a.ID); err != nil || events != 2 {
		t.Fatalf("%d contact.created events, want 2 (%v)", events, err)
	}
}

func TestUpsertContactConcurrent(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	a := newContactsAccount(t, s, "acme")

	const n = 32
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, ids := 0, map[int64]bool{}
	errs := make(chan error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			c, ok, err := s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "447700900123", Name: contactStrPtr(fmt.Sprint("Caller ", i))})
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if ok {
				created++
			}
			ids[c.ID] = true
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if created != 1 || len(ids) != 1 {
		t.Fatalf("%d creations, %d ids; want 1 and 1", created, len(ids))
	}
	var contacts, events int
	s.DB().Get(&contacts, `SELECT count(*) FROM contacts WHERE account_id = $1`, a.ID)
	s.DB().Get(&events, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'contact.created'`, a.ID)
	if contacts != 1 || events != 1 {
		t.Fatalf("%d contacts and %d events, want 1 and 1", contacts, events)
	}
}

func TestListContacts(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	a := newContactsAccount(t, s, "acme")
	b := newContactsAccount(t, s, "beta")

	var ids []int64
	for _, p := range []struct{ mobile, name string }{
		{"5511987654321", "Ana Souza"},
		{"447700900123", "Oliver Smith"},
		{"15551234567", "Maria Garcia"},
		{"4915123456789", "Jonas Schmidt"},
		{"34612345000", "Percent 100% Under_score"},
		{"33612345678", `Back\slash`},
	} {
		c, _, err := s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: p.mobile, Name: contactStrPtr(p.name)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
		// B has the same numbers and names, so any leak shows.
		if _, _, err := s.UpsertContact(ctx, b.ID, store.ContactInput{Mobile: p.mobile, Name: contactStrPtr(p.name)}); err != nil {
			t.Fatal(err)
		}
	}
	// Newest first, even when created in the same instant: push the first one into the future.
	if _, err := s.DB().Exec(`UPDATE contacts SET created_at = now() + interval '1 hour' WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	p, err := s.ListContacts(ctx, a.ID, "", 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{ids[0], ids[5], ids[4], ids[3], ids[2], ids[1]}
	if p.Total != 6 || fmt.Sprint(pageContactIDs(p)) != fmt.Sprint(want) {
		t.Fatalf("list %v total %d, want %v", pageContactIDs(p), p.Total, want)
	}
	for _, c := range p.Contacts {
		if c.AccountID != a.ID {
			t.Fatalf("contact of account %d listed for %d", c.AccountID, a.ID)
		}
	}
	// Offset and limit.
	p, err = s.ListContacts(ctx, a.ID, "", 4, 4)
	if err != nil || p.Total != 6 || fmt.Sprint(pageContactIDs(p)) != fmt.Sprint(want[4:]) {
		t.Fatalf("offset 4: %v total %d %v", pageContactIDs(p), p.Total, err)
	}
	p, err = s.ListContacts(ctx, a.ID, "", 4, 60)
	if err != nil || p.Total != 6 || p.Contacts == nil || len(p.Contacts) != 0 {
		t.Fatalf("past the end: %+v %v", p, err)
	}
	// An unknown account has nothing, as an empty (non-nil) list.
	p, err = s.ListContacts(ctx, 999999, "", 50, 0)
	if err != nil || p.Total != 0 || p.Contacts == nil || len(p.Contacts) != 0 {
		t.Fatalf("unknown account: %+v %v", p, err)
	}

	for q, want := range map[string]int{
		"souza": 1, "SOUZA": 1, " oli ": 1, "ar": 1, "s": 5,
		"98765": 1, "+55 11": 1, "1234": 4, "00": 2, // 447700900123, 34612345000
		"%": 1, "_": 1, "100%": 1, `\`: 1, `\s`: 1, "%%": 0, "a%a": 0, "o_i": 0,
		"zzz": 0, "": 6, "   ": 6,
	} {
		p, err := s.ListContacts(ctx, a.ID, q, 50, 0)
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		if p.Total != want || len(p.Contacts) != want {
			t.Errorf("search %q: total %d, %d rows; want %d", q, p.Total, len(p.Contacts), want)
		}
		for _, c := range p.Contacts {
			if c.AccountID != a.ID {
				t.Fatalf("search %q returned account %d's contact", q, c.AccountID)
			}
		}
	}
}

func pageContactIDs(p store.ContactPage) []int64 {
	var ids []int64
	for _, c := range p.Contacts {
		ids = append(ids, c.ID)
	}
	return ids
}

func TestSetContactBlocked(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	a := newContactsAccount(t, s, "acme")
	b := newContactsAccount(t, s, "beta")
	if _, _, err := s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "5511987654321"}); err != nil {
		t.Fatal(err)
	}
	// Another account cannot block A's contact, even knowing the number.
	if _, err := s.SetContactBlocked(ctx, b.ID, "5511987654321", true); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("B blocking A's contact: %v, want ErrNotFound", err)
	}
	c, err := s.SetContactBlocked(ctx, a.ID, "5511987654321", true)
	if err != nil || !c.Blocked {
		t.Fatalf("block: %+v %v", c, err)
	}
	// An upsert keeps the block.
	u, _, err := s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "5511987654321", Name: contactStrPtr("Ana")})
	if err != nil || !u.Blocked {
		t.Fatalf("upsert unblocked the contact: %+v %v", u, err)
	}
	if c, err = s.SetContactBlocked(ctx, a.ID, "5511987654321", false); err != nil || c.Blocked {
		t.Fatalf("unblock: %+v %v", c, err)
	}
}

// Blocking, and the person lookup, go through every form of the number and the aliases: the
// admin's `contact block` with the Brazilian form with the 9 blocks the contact stored without
// it, and a wa_id alias finds its contact. Before the fix only the exact mobile matched.
func TestContactByMobileForms(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	a := newContactsAccount(t, s, "acme")
	b := newContactsAccount(t, s, "beta")
	c, _, err := s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "551187654321"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetContactBlocked(ctx, b.ID, "5511987654321", true); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("B blocking A's contact under another form: %v, want ErrNotFound", err)
	}
	got, err := s.SetContactBlocked(ctx, a.ID, "5511987654321", true)
	if err != nil || got.ID != c.ID || !got.Blocked {
		t.Fatalf("block under the other form: %+v %v, want contact %d blocked", got, err, c.ID)
	}
	if got, err = s.ContactByMobile(ctx, a.ID, "5511987654321"); err != nil || got.ID != c.ID || !got.Blocked {
		t.Fatalf("lookup under the other form: %+v %v", got, err)
	}
	// An upsert under the other form updates the same contact.
	u, created, err := s.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "5511987654321", Name: contactStrPtr("Ana")})
	if err != nil || created || u.ID != c.ID || u.Mobile != "551187654321" || !u.Blocked {
		t.Fatalf("upsert under the other form: %+v created=%v %v", u, created, err)
	}
	// An alias (a wa_id the platform reported) resolves too; another account's alias does not.
	if _, err := s.DB().Exec(`INSERT INTO contact_aliases (account_id, alias, contact_id) VALUES ($1, '4915790356237', $2)`, a.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	if got, err = s.ContactByMobile(ctx, a.ID, "4915790356237"); err != nil || got.ID != c.ID {
		t.Fatalf("lookup by alias: %+v %v", got, err)
	}
	if _, err = s.ContactByMobile(ctx, b.ID, "4915790356237"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("B's lookup of A's alias: %v", err)
	}
	if got, err = s.SetContactBlocked(ctx, a.ID, "4915790356237", false); err != nil || got.ID != c.ID || got.Blocked {
		t.Fatalf("unblock by alias: %+v %v", got, err)
	}
}
