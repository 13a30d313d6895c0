package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

func answerIn(now time.Time) store.SendInput {
	return store.SendInput{Type: "text", Answer: true, Now: now, CampaignName: "API",
		Content: json.RawMessage(`{"text":{"body":"hi"}}`)}
}

// An answer (a non-template send) is recorded only while the person's service window is open:
// never for a person who is not a contact (no contact is created), not for one whose window
// closed (WindowExpiresAt says when), and then like any send, with its type on the message and
// in message.sent. A user id finds the contact by user id, never as a number.
func TestBeginSendAnswerNeedsAnOpenWindow(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	wrote := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

	// Nobody wrote: closed, nothing written.
	in := answerIn(wrote)
	in.Mobile = "15551234567"
	rec, err := st.BeginSend(ctx, a.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.WindowClosed || rec.WindowExpiresAt != nil || rec.ContactID != 0 || rec.MessageID != 0 {
		t.Fatalf("unknown person: %+v", rec)
	}
	if n := count(t, st, `SELECT count(*) FROM contacts WHERE account_id = $1`, a.ID); n != 0 {
		t.Fatalf("%d contacts created by a refused answer", n)
	}

	// The customer writes (a username-only user: a user id and no number).
	if _, err := st.RecordInbound(ctx, a.ID, store.InboundMessage{PlatformMessageID: "wamid.IN1", UserID: "US.1349120865",
		Username: "ana", Type: "text", SentAt: wrote, Content: json.RawMessage(`{"body":"hello"}`)}); err != nil {
		t.Fatal(err)
	}
	in = answerIn(wrote.Add(23 * time.Hour))
	in.UserID = "US.1349120865"
	in.Content = json.RawMessage(`{"text":{"body":"hi"},"user_id":"US.1349120865"}`)
	rec, err = st.BeginSend(ctx, a.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	if rec.WindowClosed || rec.Blocked || rec.MessageID == 0 || rec.ContactCreated || rec.ContactID == 0 {
		t.Fatalf("open window: %+v", rec)
	}
	var typ, dest string
	if err := st.DB().QueryRow(`SELECT type, destination FROM messages WHERE account_id = $1 AND id = $2`, a.ID, rec.MessageID).Scan(&typ, &dest); err != nil {
		t.Fatal(err)
	}
	if typ != "text" || dest != "US.1349120865" {
		t.Fatalf("message type %q destination %q", typ, dest)
	}
	if err := st.RecordSent(ctx, a.ID, rec.MessageID, "wamid.OUT1", "", wrote.Add(23*time.Hour)); err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	var raw []byte
	if err := st.DB().QueryRow(`SELECT data FROM events WHERE account_id = $1 AND type = 'message.sent'`, a.ID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(raw, &data)
	if data["type"] != "text" || data["user_id"] != "US.1349120865" || data["template"] != "" {
		t.Fatalf("message.sent data %s", raw)
	}

	// 24 hours after the message the window is closed, and the record says when it closed.
	in.Now = wrote.Add(24 * time.Hour)
	rec, err = st.BeginSend(ctx, a.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.WindowClosed || rec.WindowExpiresAt == nil || !rec.WindowExpiresAt.Equal(wrote.Add(24*time.Hour)) || rec.MessageID != 0 {
		t.Fatalf("closed window: %+v", rec)
	}

	// A template to the same user id needs no window.
	tpl := sendIn("", "", "API")
	tpl.UserID = "US.1349120865"
	rec, err = st.BeginSend(ctx, a.ID, tpl)
	if err != nil || rec.MessageID == 0 || rec.ContactCreated {
		t.Fatalf("template to a user id: %+v, %v", rec, err)
	}
}

// A template to a user id the account does not know creates a contact with the user id and no
// mobile, announced as contact.created_without_number (never a contact.created without mobile).
func TestBeginSendTemplateToNewUserID(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	in := sendIn("", "Bea", "API")
	in.UserID = "BR.ENT.99887766"
	rec, err := st.BeginSend(ctx, a.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.ContactCreated || rec.MessageID == 0 {
		t.Fatalf("%+v", rec)
	}
	if n := count(t, st, `SELECT count(*) FROM contacts WHERE account_id = $1 AND user_id = 'BR.ENT.99887766' AND mobile IS NULL AND name = 'Bea'`, a.ID); n != 1 {
		t.Fatalf("%d contacts with the user id", n)
	}
	if n := count(t, st, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'contact.created_without_number'
		AND data->>'user_id' = 'BR.ENT.99887766'`, a.ID); n != 1 {
		t.Fatalf("%d contact.created_without_number", n)
	}
	if n := count(t, st, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'contact.created'`, a.ID); n != 0 {
		t.Fatalf("%d contact.created", n)
	}
	// Two sends to one user id never share a batch; a user id and a number do.
	ka := store.SendKeysOf(a.ID, in)
	kb := store.SendKeysOf(a.ID, store.SendInput{Mobile: "15551234567"})
	if len(ka) != 1 || ka[0] == kb[0] {
		t.Fatalf("keys %v %v", ka, kb)
	}
}
