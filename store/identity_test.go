package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

type eventRow struct {
	Type string          `db:"type"`
	Data json.RawMessage `db:"data"`
}

func eventsOfType(t *testing.T, st *store.Store, accountID int64, typ string) []map[string]any {
	t.Helper()
	var rows []eventRow
	if err := st.DB().Select(&rows, `SELECT type, data FROM events WHERE account_id = $1 AND type = $2 ORDER BY created_at, id`,
		accountID, typ); err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		if err := json.Unmarshal(r.Data, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func userOnly(wamid, userID, username, text string) store.InboundMessage {
	in := inbound(wamid, "", "Hidden", text)
	in.UserID, in.Username = userID, username
	return in
}

func TestRecordInboundUsernameOnlySender(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "hidden")
	res, err := st.RecordInbound(ctx, a.ID, userOnly("wamid.U1", "US.1349120865530274", "@jo", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.ContactCreated || res.EventType != store.EventMessageReceivedWithoutNumber {
		t.Fatalf("result %+v", res)
	}
	if n := len(eventsOfType(t, st, a.ID, store.EventContactCreated)); n != 0 {
		t.Fatalf("%d contact.created events for a contact without mobile", n)
	}
	if n := len(eventsOfType(t, st, a.ID, store.EventMessageReceived)); n != 0 {
		t.Fatalf("%d message.received events without from", n)
	}
	cc := eventsOfType(t, st, a.ID, store.EventContactCreatedWithoutNumber)
	if len(cc) != 1 || cc[0]["user_id"] != "US.1349120865530274" || cc[0]["username"] != "@jo" || cc[0]["mobile"] != nil {
		t.Fatalf("contact.created_without_number %v", cc)
	}
	mr := eventsOfType(t, st, a.ID, store.EventMessageReceivedWithoutNumber)
	if len(mr) != 1 || mr[0]["user_id"] != "US.1349120865530274" || mr[0]["username"] != "@jo" || mr[0]["text"] != "hi" {
		t.Fatalf("message.received_without_number %v", mr)
	}
	if _, ok := mr[0]["from"]; ok {
		t.Fatalf("from in %v", mr[0])
	}
	// A second message finds the same contact.
	res2, err := st.RecordInbound(ctx, a.ID, userOnly("wamid.U2", "US.1349120865530274", "@jo", "again"))
	if err != nil || res2.ContactID != res.ContactID || res2.ContactCreated {
		t.Fatalf("%+v %v", res2, err)
	}

	// Listings leave it out unless asked; a user id search finds it when asked.
	page, err := st.ListContacts(ctx, a.ID, "", 50, 0)
	if err != nil || page.Total != 0 || len(page.Contacts) != 0 {
		t.Fatalf("v1 listing %+v %v", page, err)
	}
	page, err = st.ListContactsWith(ctx, a.ID, store.ContactListOptions{Limit: 50, WithoutMobile: true})
	if err != nil || page.Total != 1 || len(page.Contacts) != 1 || page.Contacts[0].UserID != "US.1349120865530274" ||
		page.Contacts[0].Mobile != "" {
		t.Fatalf("opt-in listing %+v %v", page, err)
	}
	page, err = st.ListContacts(ctx, a.ID, "US.1349120865530274", 50, 0)
	if err != nil || page.Total != 0 {
		t.Fatalf("v1 user id search %+v %v", page, err)
	}
	page, err = st.ListContactsWith(ctx, a.ID, store.ContactListOptions{Search: "US.1349120865530274", Limit: 50, WithoutMobile: true})
	if err != nil || page.Total != 1 || page.Contacts[0].ID != res.ContactID {
		t.Fatalf("opt-in user id search %+v %v", page, err)
	}
	c, err := st.ContactByUserID(ctx, a.ID, "US.1349120865530274")
	if err != nil || c.ID != res.ContactID || c.Username != "@jo" {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestRecordInboundLinksNumberToUserID(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "link")
	first, err := st.RecordInbound(ctx, a.ID, userOnly("wamid.L1", "US.77", "", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	in := inbound("wamid.L2", "4915112345678", "Jonas", "now with my number")
	in.UserID = "US.77"
	res, err := st.RecordInbound(ctx, a.ID, in)
	if err != nil || res.ContactID != first.ContactID || res.EventType != store.EventMessageReceived {
		t.Fatalf("%+v %v", res, err)
	}
	up := eventsOfType(t, st, a.ID, store.EventContactUpdated)
	if len(up) != 1 || up[0]["reason"] != store.ContactLinked || up[0]["mobile"] != "4915112345678" ||
		up[0]["previous"].(map[string]any)["mobile"] != nil {
		t.Fatalf("contact.updated %v", up)
	}
	// Now counted and listed by v1.
	page, err := st.ListContacts(ctx, a.ID, "", 50, 0)
	if err != nil || page.Total != 1 || len(page.Contacts) != 1 || page.Contacts[0].UserID != "US.77" {
		t.Fatalf("%+v %v", page, err)
	}
	page, err = st.ListContacts(ctx, a.ID, "US.77", 50, 0)
	if err != nil || page.Total != 1 {
		t.Fatalf("user id search %+v %v", page, err)
	}
	// A message with only the number finds the same person, and reports from.
	res, err = st.RecordInbound(ctx, a.ID, inbound("wamid.L3", "4915112345678", "Jonas", "x"))
	if err != nil || res.ContactID != first.ContactID {
		t.Fatalf("%+v %v", res, err)
	}
	// A message with only the user id reports the known number as from.
	res, err = st.RecordInbound(ctx, a.ID, userOnly("wamid.L4", "US.77", "", "y"))
	if err != nil || res.EventType != store.EventMessageReceived {
		t.Fatalf("%+v %v", res, err)
	}
	mr := eventsOfType(t, st, a.ID, store.EventMessageReceived)
	if last := mr[len(mr)-1]; last["from"] != "4915112345678" || last["user_id"] != "US.77" {
		t.Fatalf("%v", last)
	}
}

func TestRecordInboundMergesTwoContactsOfOnePerson(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "merge")
	byNumber, err := st.RecordInbound(ctx, a.ID, inbound("wamid.M1", "4915112345678", "", "by number"))
	if err != nil {
		t.Fatal(err)
	}
	byUser, err := st.RecordInbound(ctx, a.ID, userOnly("wamid.M2", "US.88", "@m", "STOP"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().Exec(`UPDATE contacts SET blocked = true WHERE id = $1`, byUser.ContactID); err != nil {
		t.Fatal(err)
	}
	in := inbound("wamid.M3", "4915112345678", "", "both")
	in.UserID = "US.88"
	res, err := st.RecordInbound(ctx, a.ID, in)
	if err != nil || res.ContactID != byNumber.ContactID {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := st.ContactByID(ctx, a.ID, byUser.ContactID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("merged contact still there: %v", err)
	}
	c, err := st.ContactByID(ctx, a.ID, byNumber.ContactID)
	if err != nil || !c.Blocked || c.UserID != "US.88" || c.Username != "@m" || c.Mobile != "4915112345678" {
		t.Fatalf("kept contact %+v %v", c, err)
	}
	var n int
	if err := st.DB().Get(&n, `SELECT count(*) FROM messages WHERE account_id = $1 AND contact_id = $2`, a.ID, byNumber.ContactID); err != nil || n != 3 {
		t.Fatalf("%d messages on the kept contact, %v", n, err)
	}
	if err := st.DB().Get(&n, `SELECT count(*) FROM conversations WHERE account_id = $1`, a.ID); err != nil || n != 1 {
		t.Fatalf("%d conversations, %v", n, err)
	}
	up := eventsOfType(t, st, a.ID, store.EventContactUpdated)
	if len(up) != 1 || up[0]["reason"] != store.ContactMerged || up[0]["merged_contact_id"] != float64(byUser.ContactID) {
		t.Fatalf("%v", up)
	}
}

// Concurrent first messages of one person (by user id, some also with the number) make one
// contact, whatever the order in which they commit.
func TestRecordInboundConcurrentFirstMessagesOfOnePerson(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "concurrent-identity")
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			in := userOnly(fmt.Sprintf("wamid.C%d", i), "US.42", "", "hi")
			if i%2 == 1 {
				in.From = "4915112345678"
			}
			_, err := st.RecordInbound(ctx, a.ID, in)
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	var contacts, messages int
	if err := st.DB().Get(&contacts, `SELECT count(*) FROM contacts WHERE account_id = $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.DB().Get(&messages, `SELECT count(*) FROM messages WHERE account_id = $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	if contacts != 1 || messages != n {
		t.Fatalf("%d contacts, %d messages", contacts, messages)
	}
	c, err := st.ContactByUserID(ctx, a.ID, "US.42")
	if err != nil || c.Mobile != "4915112345678" {
		t.Fatalf("%+v %v", c, err)
	}
}

// A first message creates its contact under its identifiers' locks, not the whole account's:
// while a transaction holds the lock of one new sender's number (as that sender's own first
// message would), another new sender's first message is recorded, and the held sender's
// waits, then finds the contact created meanwhile instead of making a second one.
func TestRecordInboundFirstMessagesOfDifferentPeopleDoNotWait(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "parallel-identity")
	const held, other = "447700900001", "447700900002"
	tx, err := st.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock_shared(1668247158, ($1::bigint % 2147483647)::int),
		pg_advisory_xact_lock(hashtextextended('identity:' || $1::bigint || ':m:' || $2, 0))`, a.ID, held); err != nil {
		t.Fatal(err)
	}
	var made int64
	if err := tx.GetContext(ctx, &made, `INSERT INTO contacts (account_id, mobile, name) VALUES ($1, $2, 'Made meanwhile') RETURNING id`,
		a.ID, held); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := st.RecordInbound(ctx, a.ID, inbound("wamid.P1", held, "Held", "hi"))
		waited <- err
	}()
	// The other sender's message goes through while the lock is held (a deadline, not a
	// speed goal: the old account-wide lock made it wait for the transaction above).
	octx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := st.RecordInbound(octx, a.ID, inbound("wamid.P2", other, "Other", "hi"))
	if err != nil || !res.ContactCreated {
		t.Fatalf("the other sender's first message: %+v %v", res, err)
	}
	select {
	case err := <-waited:
		t.Fatalf("the held sender's message did not wait for its number's lock: %v", err)
	default:
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	var contacts []contactRow
	if err := st.DB().Select(&contacts, `SELECT id, mobile, name, blocked FROM contacts WHERE account_id = $1 AND mobile = $2`,
		a.ID, held); err != nil {
		t.Fatal(err)
	}
	if len(contacts) != 1 || contacts[0].ID != made {
		t.Fatalf("contacts of the held number: %+v (made %d)", contacts, made)
	}
}
