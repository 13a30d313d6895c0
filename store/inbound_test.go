package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

func TestRecordPlatformWebhook(t *testing.T) {
	st := storetest.New(t)
	id, err := st.RecordPlatformWebhook(context.Background(), []byte(`{"object":"whatsapp_business_account"}`))
	if err != nil || id == 0 {
		t.Fatalf("%d %v", id, err)
	}
	var body []byte
	if err := st.DB().Get(&body, `SELECT body FROM platform_webhooks WHERE id = $1`, id); err != nil || string(body) != `{"object":"whatsapp_business_account"}` {
		t.Fatalf("%s %v", body, err)
	}
}

func inbound(wamid, from, name, text string) store.InboundMessage {
	content, _ := json.Marshal(map[string]any{"from": from, "id": wamid, "type": "text", "text": map[string]string{"body": text}})
	fields, _ := json.Marshal(map[string]string{"text": text})
	return store.InboundMessage{PlatformMessageID: wamid, From: from, ProfileName: name, Type: "text",
		SentAt: t0, Destination: "15550001111", Content: content, EventFields: fields}
}

type contactRow struct {
	ID      int64  `db:"id"`
	Mobile  string `db:"mobile"`
	Name    string `db:"name"`
	Blocked bool   `db:"blocked"`
}

func contactsOf(t *testing.T, st *store.Store, accountID int64) []contactRow {
	t.Helper()
	var rows []contactRow
	if err := st.DB().Select(&rows, `SELECT id, mobile, name, blocked FROM contacts WHERE account_id = $1 ORDER BY id`, accountID); err != nil {
		t.Fatal(err)
	}
	return rows
}

func aliasesOf(t *testing.T, st *store.Store, accountID int64) map[string]int64 {
	t.Helper()
	var rows []struct {
		Alias     string `db:"alias"`
		ContactID int64  `db:"contact_id"`
	}
	if err := st.DB().Select(&rows, `SELECT alias, contact_id FROM contact_aliases WHERE account_id = $1`, accountID); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Alias] = r.ContactID
	}
	return out
}

func TestRecordInboundNewContactAndDuplicate(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a, err := st.CreateAccount(ctx, "acme", "a@example.com", "acme-1")
	if err != nil {
		t.Fatal(err)
	}
	in := inbound("wamid.IN1", "4915112345678", "Jonas", "Hallo")
	res, err := st.RecordInbound(ctx, a.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Duplicate || !res.ContactCreated || res.MessageID == 0 || res.ConversationID == 0 {
		t.Fatalf("result %+v", res)
	}
	cs := contactsOf(t, st, a.ID)
	if len(cs) != 1 || cs[0].Mobile != "4915112345678" || cs[0].Name != "Jonas" || cs[0].ID != res.ContactID {
		t.Fatalf("contacts %+v", cs)
	}
	var msg struct {
		Direction string    `db:"direction"`
		Status    string    `db:"status"`
		Type      string    `db:"type"`
		SentAt    time.Time `db:"sent_at"`
		Content   string    `db:"content"`
	}
	if err := st.DB().Get(&msg, `SELECT direction, status, type, sent_at, content::text FROM messages WHERE id = $1`, res.MessageID); err != nil {
		t.Fatal(err)
	}
	if msg.Direction != "in" || msg.Status != "received" || msg.Type != "text" || !msg.SentAt.Equal(t0) || msg.Content == "{}" {
		t.Fatalf("message %+v", msg)
	}
	var lastInbound time.Time
	if err := st.DB().Get(&lastInbound, `SELECT last_inbound_at FROM conversations WHERE id = $1`, res.ConversationID); err != nil || !lastInbound.Equal(t0) {
		t.Fatalf("last_inbound_at %v %v", lastInbound, err)
	}
	evs, err := st.EventsByAccount(ctx, a.ID, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	// Both events share the transaction's timestamp, so their order is not defined.
	if len(evs) == 2 && evs[0].Type == "message.received" {
		evs[0], evs[1] = evs[1], evs[0]
	}
	if len(evs) != 2 || evs[0].Type != "contact.created" || evs[1].Type != "message.received" {
		t.Fatalf("events %+v", evs)
	}
	var recv map[string]any
	json.Unmarshal(evs[1].Data, &recv)
	want := map[string]any{"message_id": float64(res.MessageID), "conversation_id": float64(res.ConversationID),
		"contact_id": float64(res.ContactID), "from": "4915112345678", "name": "Jonas", "type": "text", "text": "Hallo"}
	if fmt.Sprint(recv) != fmt.Sprint(want) {
		t.Fatalf("message.received data %v, want %v", recv, want)
	}

	// The same wamid again: nothing.
	res2, err := st.RecordInbound(ctx, a.ID, in)
	if err != nil || !res2.Duplicate {
		t.Fatalf("%+v %v", res2, err)
	}
	// A second message from the same number: same contact and conversation, no contact.created;
	// last_inbound_at never moves back.
	in3 := inbound("wamid.IN3", "4915112345678", "Jonas", "Noch was")
	in3.SentAt = t0.Add(-time.Hour)
	res3, err := st.RecordInbound(ctx, a.ID, in3)
	if err != nil || res3.ContactCreated || res3.ContactID != res.ContactID || res3.ConversationID != res.ConversationID {
		t.Fatalf("%+v %v", res3, err)
	}
	if err := st.DB().Get(&lastInbound, `SELECT last_inbound_at FROM conversations WHERE id = $1`, res.ConversationID); err != nil || !lastInbound.Equal(t0) {
		t.Fatalf("last_inbound_at %v %v", lastInbound, err)
	}
	evs, _ = st.EventsByAccount(ctx, a.ID, "", 100)
	if len(evs) != 3 {
		t.Fatalf("%d events", len(evs))
	}
}

func TestRecordInboundConcurrentDuplicates(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a, _ := st.CreateAccount(ctx, "acme", "a@example.com", "acme-1")
	var wg sync.WaitGroup
	results := make(chan store.InboundResult, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := st.RecordInbound(ctx, a.ID, inbound("wamid.SAME", "15559876543", "Kim", "hi"))
			if err != nil {
				t.Error(err)
			}
			results <- res
		}()
	}
	wg.Wait()
	close(results)
	recorded := 0
	for r := range results {
		if !r.Duplicate {
			recorded++
		}
	}
	if recorded != 1 {
		t.Fatalf("%d recorded", recorded)
	}
	evs, _ := st.EventsByAccount(ctx, a.ID, "", 100)
	if len(evs) != 2 {
		t.Fatalf("events %+v", evs)
	}
}

func TestRecordInboundAliases(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a, _ := st.CreateAccount(ctx, "acme", "a@example.com", "acme-1")
	mx, _, err := st.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "525512345678"})
	if err != nil {
		t.Fatal(err)
	}
	br, _, err := st.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "5531987654321"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		wamid, from string
		forms       []string
		want        int64
	}{
		{"wamid.MX1", "5215512345678", []string{"525512345678"}, mx.ID},
		{"wamid.MX2", "5215512345678", []string{"525512345678"}, mx.ID}, // now through the alias
		{"wamid.BR1", "553187654321", []string{"5531987654321"}, br.ID},
	}
	for _, c := range cases {
		in := inbound(c.wamid, c.from, "Profile", "hola")
		in.FromForms = c.forms
		res, err := st.RecordInbound(ctx, a.ID, in)
		if err != nil {
			t.Fatal(err)
		}
		if res.ContactID != c.want || res.ContactCreated {
			t.Fatalf("%s: %+v, want contact %d", c.wamid, res, c.want)
		}
	}
	al := aliasesOf(t, st, a.ID)
	if len(al) != 2 || al["5215512345678"] != mx.ID || al["553187654321"] != br.ID {
		t.Fatalf("aliases %v", al)
	}
	cs := contactsOf(t, st, a.ID)
	if len(cs) != 2 || cs[0].Mobile != "525512345678" || cs[0].Name != "Profile" {
		t.Fatalf("contacts %+v (an empty name takes the profile name; the mobile stays)", cs)
	}
	// The alias is matched directly, without forms, too.
	res, err := st.RecordInbound(ctx, a.ID, inbound("wamid.MX3", "5215512345678", "", "x"))
	if err != nil || res.ContactID != mx.ID {
		t.Fatalf("%+v %v", res, err)
	}
	// An exact mobile match wins over a form of another contact.
	exact, _, _ := st.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "5491112345678"})
	st.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "541112345678"})
	in := inbound("wamid.AR1", "5491112345678", "", "x")
	in.FromForms = []string{"541112345678"}
	if res, err := st.RecordInbound(ctx, a.ID, in); err != nil || res.ContactID != exact.ID {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestRecordInboundBlock(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a, _ := st.CreateAccount(ctx, "acme", "a@example.com", "acme-1")
	yes, no := true, false
	for i, step := range []struct {
		block *bool
		want  bool
	}{{&yes, true}, {nil, true}, {&yes, true}, {&no, false}, {nil, false}} {
		in := inbound(fmt.Sprintf("wamid.B%d", i), "15551112222", "Lee", "x")
		in.Block = step.block
		if _, err := st.RecordInbound(ctx, a.ID, in); err != nil {
			t.Fatal(err)
		}
		if cs := contactsOf(t, st, a.ID); len(cs) != 1 || cs[0].Blocked != step.want {
			t.Fatalf("step %d: %+v", i, cs)
		}
	}
	// A duplicate STOP changes nothing.
	in := inbound("wamid.B0", "15551112222", "Lee", "STOP")
	in.Block = &yes
	if res, err := st.RecordInbound(ctx, a.ID, in); err != nil || !res.Duplicate {
		t.Fatalf("%+v %v", res, err)
	}
	if cs := contactsOf(t, st, a.ID); cs[0].Blocked {
		t.Fatal("a duplicate STOP blocked the contact")
	}
}

func TestRecordInboundValidates(t *testing.T) {
	st := storetest.New(t)
	if _, err := st.RecordInbound(context.Background(), 1, store.InboundMessage{From: "15551112222"}); err == nil {
		t.Fatal("no platform id accepted")
	}
}

// A known sender's message is one statement (store/inbound_senders.go keeps the contact); a
// redelivery stores nothing; a contact changed behind the store's back is read again, so the
// next message still fills its name; a STOP still blocks.
func TestRecordInboundKnownSenderAfterTheContactChanged(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a, _ := st.CreateAccount(ctx, "acme", "a@example.com", "acme-1")
	first, err := st.RecordInbound(ctx, a.ID, inbound("wamid.K1", "15559876543", "Kim", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	second := inbound("wamid.K2", "15559876543", "Kim", "still there?")
	second.Body = []byte(`{"delivery":"K2"}`)
	res, err := st.RecordInbound(ctx, a.ID, second)
	if err != nil || res.Duplicate || res.ContactID != first.ContactID || res.ConversationID != first.ConversationID {
		t.Fatalf("%+v %v", res, err)
	}
	var stored int
	if err := st.DB().Get(&stored, `SELECT count(*) FROM platform_webhooks WHERE body = $1`, second.Body); err != nil || stored != 1 {
		t.Fatalf("%d deliveries stored, %v", stored, err)
	}
	if res, err := st.RecordInbound(ctx, a.ID, second); err != nil || !res.Duplicate {
		t.Fatalf("the redelivery: %+v %v", res, err)
	}
	if err := st.DB().Get(&stored, `SELECT count(*) FROM platform_webhooks WHERE body = $1`, second.Body); err != nil || stored != 1 {
		t.Fatalf("%d deliveries stored after the redelivery, %v", stored, err)
	}
	// The contact kept for the sender has a name; the row no longer has one.
	if _, err := st.DB().Exec(`UPDATE contacts SET name = '' WHERE id = $1`, first.ContactID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordInbound(ctx, a.ID, inbound("wamid.K3", "15559876543", "Kim", "hello again")); err != nil {
		t.Fatal(err)
	}
	if cs := contactsOf(t, st, a.ID); len(cs) != 1 || cs[0].Name != "Kim" || cs[0].Blocked {
		t.Fatalf("contacts %+v", cs)
	}
	stop := inbound("wamid.K4", "15559876543", "Kim", "STOP")
	block := true
	stop.Block = &block
	if _, err := st.RecordInbound(ctx, a.ID, stop); err != nil {
		t.Fatal(err)
	}
	if cs := contactsOf(t, st, a.ID); len(cs) != 1 || !cs[0].Blocked {
		t.Fatalf("contacts %+v", cs)
	}
	evs, _ := st.EventsByAccount(ctx, a.ID, "", 100)
	if len(evs) != 5 { // contact.created and four message.received
		t.Fatalf("%d events", len(evs))
	}
}
