package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"gateway/store"
	"gateway/store/storetest"
)

// inboxSearchNames are the contacts' names of TestInboxNameSearchIsILIKE: repeats in other
// cases, accents, letters whose lower case is another letter's, LIKE's wildcards and escape,
// a term twice in one name, names longer than the suffix index keeps, an empty name.
var inboxSearchNames = []string{
	"Ana Souza", "ana souza", "ANA SOUZA", "Anaïs Dubois", "José Álvarez", "JOSÉ ÁLVAREZ", "Zoë O'Brien",
	"Ødegaard Østergaard", "Müller", "MÜLLER-Lüdenscheid", "100% Organic Farm", "50%_off store", "snake_case_name",
	`back\slash`, "Ben Okafor", "Okafor Okafor", "aaaaaaaaaaaaaaaaaaaaaaaa", "Maximilian Alexander von Habsburg-Lothringen",
	"Customer 4242", "Customer 42420", "", "İstanbul Şirketi", "Straße", "ΣΊΣΥΦΟΣ", "🍕 Pizza Place", "Mixed CaSe nAmE",
}

// inboxSearchUsernames are the usernames some of those contacts have.
var inboxSearchUsernames = []string{"ana.s", "Okafor_fan", "pizza100%", "zoe_o", "MAXI", "user.4242", `x\y`}

// inboxSearchTerms are the searched terms: whole names, parts in other cases, one and two
// characters, wildcards, terms longer than 16 characters, usernames, and terms nothing matches.
var inboxSearchTerms = []string{
	"ana", "ANA", "a", "an", "Ana Souza", "souza", "josé", "JOSÉ", "jose", "ÁLVAREZ", "ø", "Ø", "ü", "ÜLLER",
	"100%", "%", "_", "50%_", "%_o", "_off", `\`, `back\s`, "okafor", "OKAFOR OKA", "afor o", "Maximilian Alexander",
	"alexander von habsburg", "aaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaaaaaaaaa", "customer 4242", "Customer 42",
	"ana.s", ".s", "fan", "FAN", "pizza100%", "zoe_", "maxi", "user.", `x\y`, "istanbul", "i̇stanbul", "şir", "ß", "σ",
	"ςίσυφος", "🍕", "🍕 pizza", "mixed case", "'brien", "nobody", "x", "q",
}

// The inbox's search by name or username lists exactly the conversations the plain ILIKE on
// the contact's name or username lists, in each view, page by page, whichever way a page is
// found: the same data set is searched as narrow (every term joins its contacts), with the
// walk of the view (every term walks first), and with a walk of 2 conversations (most walks
// fall back to every match). It does not run in parallel: it sets those bounds for the package.
func TestInboxNameSearchIsILIKE(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	acc, err := st.CreateAccount(ctx, "acme", "a@example.com", "acme-1")
	if err != nil {
		t.Fatal(err)
	}
	mate, err := st.CreateUser(ctx, acc.ID, "mate@example.com", "x", store.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	// 5 contacts for each name: a fifth known only by a user id, a third with a username; most
	// with a conversation in the inbox (activity times repeat, so the id breaks ties), some
	// resolved, some assigned, some with a closed window; some with a conversation the customer
	// never wrote in, some with none.
	db := st.DB()
	n := 5 * len(inboxSearchNames)
	for i := range n {
		name := inboxSearchNames[i%len(inboxSearchNames)]
		var mobile, userID, username any
		if i%5 == 0 {
			userID = fmt.Sprintf("US.%d", 1000+i)
		} else {
			mobile = fmt.Sprintf("1555%07d", i)
		}
		if i%3 == 0 {
			username = inboxSearchUsernames[i%len(inboxSearchUsernames)]
		}
		var contact int64
		if err := db.GetContext(ctx, &contact, `INSERT INTO contacts (account_id, mobile, user_id, username, name)
			VALUES ($1, $2, $3, $4, $5) RETURNING id`, acc.ID, mobile, userID, username, name); err != nil {
			t.Fatal(err)
		}
		if i%11 == 10 {
			continue
		}
		at := t0.Add(time.Duration(i*37%90) * time.Minute)
		var activity, assignee, resolved any = at, nil, nil
		if i%13 == 12 {
			activity = nil
		}
		if i%4 == 1 {
			assignee = mate.ID
		}
		if i%6 == 0 {
			resolved = at
		}
		window := at.Add(24 * time.Hour)
		if i%3 == 1 {
			window = at.Add(-time.Minute)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO conversations (account_id, contact_id, last_inbound_at,
				window_expires_at, last_activity_at, assigned_user_id, resolved_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, acc.ID, contact, at, window, activity, assignee, resolved); err != nil {
			t.Fatal(err)
		}
	}
	views := []store.InboxFilter{
		{View: store.InboxAll}, {View: store.InboxMine, UserID: mate.ID}, {View: store.InboxUnassigned},
		{View: store.InboxWindowOpen}, {View: store.InboxResolved},
	}
	// list pages through a view with the filter's limit and returns the conversation ids.
	list := func(f store.InboxFilter) []int64 {
		t.Helper()
		f.Now = t0.Add(2 * time.Hour)
		var ids []int64
		for range 1000 {
			p, err := st.ListInbox(ctx, acc.ID, f)
			if err != nil {
				t.Fatalf("%+v: %v", f, err)
			}
			for _, r := range p.Rows {
				ids = append(ids, r.ConversationID)
			}
			if p.Next.ID == 0 {
				return ids
			}
			f.Before = p.Next
		}
		t.Fatalf("%+v: more than 1000 pages", f)
		return nil
	}
	escape := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	matched := 0
	for _, way := range []struct{ narrow, walk int }{{2000, 2000}, {0, 2000}, {0, 2}} {
		restore := store.SetInboxNameSearch(way.narrow, way.walk)
		for _, view := range views {
			all := list(store.InboxFilter{View: view.View, UserID: view.UserID, Limit: 200})
			for _, term := range inboxSearchTerms {
				if store.LooksLikeUserID(term) || store.IsPhoneFragment(term) {
					t.Fatalf("%q is not a name term", term)
				}
				// The old search: the view's conversations whose contact's name or username is
				// ILIKE the escaped term between two %.
				var hits []int64
				if err := db.SelectContext(ctx, &hits, `SELECT v.id FROM conversations v JOIN contacts k
						ON k.account_id = v.account_id AND k.id = v.contact_id
					WHERE v.account_id = $1 AND v.id = ANY ($2) AND (k.name ILIKE $3 OR k.username ILIKE $3)`,
					acc.ID, pq.Array(all), "%"+escape.Replace(term)+"%"); err != nil {
					t.Fatal(err)
				}
				want := []int64{}
				for _, id := range all {
					if slices.Contains(hits, id) {
						want = append(want, id)
					}
				}
				matched += len(want)
				for _, limit := range []int{3, 50} {
					f := store.InboxFilter{View: view.View, UserID: view.UserID, Search: " " + term + " ", Limit: limit}
					if got := append([]int64{}, list(f)...); !slices.Equal(got, want) {
						t.Errorf("%+v, %s, %q, pages of %d: %v, want %v", way, view.View, term, limit, got, want)
					}
				}
			}
		}
		restore()
	}
	if matched == 0 {
		t.Fatal("no term matched any conversation")
	}
}
