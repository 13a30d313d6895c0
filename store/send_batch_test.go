package store_test

import (
	"context"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

// TestBeginSendsBatch runs one statement of sends that share what they may share (an account, a
// new campaign, an existing contact reached under its mobile and under its alias) beside a
// blocked contact, another account and an Idempotency-Key, and requires each record to be what
// BeginSend would have written alone.
func TestBeginSendsBatch(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	b := newAccount(t, st, "beta")

	// A blocked contact and a contact with an alias, both without a conversation yet.
	if _, _, err := st.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "15550000003"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetContactBlocked(ctx, a.ID, "15550000003", true); err != nil {
		t.Fatal(err)
	}
	known, _, err := st.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "15550000004", Name: contactStrPtr("Kim")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().Exec(`INSERT INTO contact_aliases (account_id, alias, contact_id) VALUES ($1, '4915790000004', $2)`,
		a.ID, known.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.BeginIdempotent(ctx, a.ID, "key-1", []byte("fp")); err != nil {
		t.Fatal(err)
	}

	held := sendIn("15550000002", "Bo", "New")
	held.IdempotencyKey = "key-1"
	held.ClientReference = "ref-2"
	ws := []store.SendBegin{
		{AccountID: a.ID, SendInput: sendIn("15550000001", "Ana", "New")},
		{AccountID: a.ID, SendInput: held},
		{AccountID: b.ID, SendInput: sendIn("15550000001", "Ana", "New")},
		{AccountID: a.ID, SendInput: sendIn("15550000003", "Blocked", "New")},
		{AccountID: a.ID, SendInput: sendIn("15550000004", "Other", "API")},
		{AccountID: a.ID, SendInput: sendIn("4915790000004", "Alias", "API")},
	}
	recs, err := st.BeginSends(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(ws) {
		t.Fatalf("%d records for %d sends", len(recs), len(ws))
	}
	for i, want := range []bool{true, true, true, false, false, false} {
		if recs[i].ContactCreated != want {
			t.Fatalf("send %d: contact created %v, want %v (%+v)", i, recs[i].ContactCreated, want, recs[i])
		}
	}
	if r := recs[3]; !r.Blocked || r.MessageID != 0 || r.ConversationID != 0 || r.CampaignID != 0 {
		t.Fatalf("blocked send %+v", r)
	}
	// One new campaign for account a's two sends, another for b's.
	if recs[0].CampaignID == 0 || recs[0].CampaignID != recs[1].CampaignID || recs[2].CampaignID == recs[0].CampaignID {
		t.Fatalf("campaigns %d %d %d", recs[0].CampaignID, recs[1].CampaignID, recs[2].CampaignID)
	}
	if n := count(t, st, `SELECT count(*) FROM campaigns WHERE name = 'New' AND account_id IN ($1, $2)`, a.ID, b.ID); n != 2 {
		t.Fatalf("%d campaigns named New", n)
	}
	// The known contact, under its mobile and its alias: one contact, one new conversation.
	if recs[4].ContactID != known.ID || recs[5].ContactID != known.ID || recs[4].ConversationID == 0 ||
		recs[4].ConversationID != recs[5].ConversationID {
		t.Fatalf("known contact's sends %+v %+v (contact %d)", recs[4], recs[5], known.ID)
	}
	if n := count(t, st, `SELECT count(*) FROM conversations WHERE account_id = $1 AND contact_id = $2`, a.ID, known.ID); n != 1 {
		t.Fatalf("%d conversations of the known contact", n)
	}
	// Each message is its own send's: its account, contact, destination and client reference.
	ids := map[int64]bool{}
	for i, r := range recs {
		if r.Blocked {
			continue
		}
		if ids[r.MessageID] {
			t.Fatalf("message %d twice", r.MessageID)
		}
		ids[r.MessageID] = true
		m, err := st.MessageByID(ctx, ws[i].AccountID, r.MessageID)
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		ref := ""
		if m.ClientReference != nil {
			ref = *m.ClientReference
		}
		if m.ContactID != r.ContactID || m.Destination != ws[i].Mobile || m.Status != "pending" || ref != ws[i].ClientReference ||
			m.CampaignID == nil || *m.CampaignID != r.CampaignID || m.ConversationID != r.ConversationID {
			t.Fatalf("send %d: message %+v for record %+v", i, m, r)
		}
	}
	// contact.created once per new contact, with its own mobile and name.
	for i := range 3 {
		if n := count(t, st, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'contact.created'
			AND data->>'mobile' = $2 AND data->>'name' = $3 AND (data->>'contact_id')::bigint = $4`,
			ws[i].AccountID, ws[i].Mobile, ws[i].Name, recs[i].ContactID); n != 1 {
			t.Fatalf("send %d: %d contact.created events", i, n)
		}
	}
	// a's: the two contacts made before the batch and its two new ones; none for the sends that
	// found their contact.
	if n := count(t, st, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'contact.created'`, a.ID); n != 4 {
		t.Fatalf("%d contact.created events for a, want 4", n)
	}
	// The held key is bound to its own send's message.
	if n := count(t, st, `SELECT count(*) FROM idempotency_keys WHERE account_id = $1 AND key = 'key-1' AND message_id = $2`,
		a.ID, recs[1].MessageID); n != 1 {
		t.Fatal("the Idempotency-Key is not bound to its send's message")
	}
}

// TestBeginSendsRefusesOnePersonTwice requires a batch with two sends to one person (the same
// number, or two forms of it) to fail whole, writing nothing.
func TestBeginSendsRefusesOnePersonTwice(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	for _, pair := range [][2]string{{"15550000001", "15550000001"}, {"5511987654321", "551187654321"}} {
		_, err := st.BeginSends(ctx, []store.SendBegin{
			{AccountID: a.ID, SendInput: sendIn("15550000009", "Other", "API")},
			{AccountID: a.ID, SendInput: sendIn(pair[0], "Ana", "API")},
			{AccountID: a.ID, SendInput: sendIn(pair[1], "Ana", "API")},
		})
		if err == nil {
			t.Fatalf("%s and %s in one batch: no error", pair[0], pair[1])
		}
	}
	if n := count(t, st, `SELECT count(*) FROM messages WHERE account_id = $1`, a.ID); n != 0 {
		t.Fatalf("%d messages written by refused batches", n)
	}
	if n := count(t, st, `SELECT count(*) FROM contacts WHERE account_id = $1`, a.ID); n != 0 {
		t.Fatalf("%d contacts written by refused batches", n)
	}
}
