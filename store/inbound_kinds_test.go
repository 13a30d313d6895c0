package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

func TestServiceWindow(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "window")
	who := store.Identity{Mobile: "4915112345678"}
	if _, err := st.ServiceWindowOf(ctx, a.ID, who); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown person: %v", err)
	}
	ad := inbound("wamid.W1", "4915112345678", "Ann", "from the ad")
	ad.Referral = json.RawMessage(`{"source_type":"ad","ctwa_clid":"c1"}`)
	ad.Window = 72 * time.Hour
	res, err := st.RecordInbound(ctx, a.ID, ad)
	if err != nil || !res.WindowExpiresAt.Equal(t0.Add(72*time.Hour)) {
		t.Fatalf("%+v %v", res, err)
	}
	later := inbound("wamid.W2", "4915112345678", "Ann", "later")
	later.SentAt = t0.Add(time.Hour)
	if res, err = st.RecordInbound(ctx, a.ID, later); err != nil || !res.WindowExpiresAt.Equal(t0.Add(72*time.Hour)) {
		t.Fatalf("an ordinary message shortened the ad's window: %+v %v", res, err)
	}
	w, err := st.ServiceWindowOf(ctx, a.ID, who)
	if err != nil || w.ContactID != res.ContactID || !w.OpenAt(t0.Add(71*time.Hour)) || w.OpenAt(t0.Add(72*time.Hour)) {
		t.Fatalf("%+v %v", w, err)
	}
	much := inbound("wamid.W3", "4915112345678", "Ann", "much later")
	much.SentAt = t0.Add(100 * time.Hour)
	if res, err = st.RecordInbound(ctx, a.ID, much); err != nil || !res.WindowExpiresAt.Equal(t0.Add(124*time.Hour)) {
		t.Fatalf("%+v %v", res, err)
	}
	var ref json.RawMessage
	if err := st.DB().Get(&ref, `SELECT data->'referral' FROM events WHERE account_id = $1 AND data->>'message_id' = $2::text`,
		a.ID, "1"); err == nil && len(ref) == 0 {
		t.Fatal("no referral")
	}
}

func TestRecordInboundReplyForwardedAndContent(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "reply")
	first, err := st.RecordInbound(ctx, a.ID, inbound("wamid.Q1", "4915112345678", "Ann", "first"))
	if err != nil {
		t.Fatal(err)
	}
	in := inbound("wamid.Q2", "4915112345678", "Ann", "")
	in.Type = "location"
	in.Content = json.RawMessage(`{"latitude":52.5,"longitude":13.4,"name":"Mitte"}`)
	in.EventFields = json.RawMessage(`{"location":{"latitude":52.5,"longitude":13.4,"name":"Mitte"}}`)
	in.ReplyToPlatformID = "wamid.Q1"
	in.Forwarded = true
	in.UserID = "US.5"
	if _, err := st.RecordInbound(ctx, a.ID, in); err != nil {
		t.Fatal(err)
	}
	in = inbound("wamid.Q3", "4915112345678", "Ann", "quoting a stranger")
	in.ReplyToPlatformID = "wamid.unknown"
	in.FrequentlyForwarded = true
	if _, err := st.RecordInbound(ctx, a.ID, in); err != nil {
		t.Fatal(err)
	}
	mr := eventsOfType(t, st, a.ID, store.EventMessageReceived)
	if len(mr) != 3 {
		t.Fatalf("%d events", len(mr))
	}
	loc := mr[1]
	reply, _ := loc["reply_to"].(map[string]any)
	if loc["type"] != "location" || loc["location"].(map[string]any)["name"] != "Mitte" || reply["message_id"] != float64(first.MessageID) ||
		reply["platform_message_id"] != "wamid.Q1" || loc["forwarded"] != true || loc["user_id"] != "US.5" {
		t.Fatalf("%v", loc)
	}
	if _, ok := loc["frequently_forwarded"]; ok {
		t.Fatalf("%v", loc)
	}
	stranger := mr[2]["reply_to"].(map[string]any)
	if _, ok := stranger["message_id"]; ok || stranger["platform_message_id"] != "wamid.unknown" || mr[2]["frequently_forwarded"] != true {
		t.Fatalf("%v", mr[2])
	}
	var row struct {
		Type      string          `db:"type"`
		Content   json.RawMessage `db:"content"`
		ReplyTo   *int64          `db:"reply_to_message_id"`
		Forwarded bool            `db:"forwarded"`
		Sender    json.RawMessage `db:"sender"`
	}
	if err := st.DB().Get(&row, `SELECT type, content, reply_to_message_id, forwarded, sender FROM messages
		WHERE account_id = $1 AND platform_message_id = 'wamid.Q2'`, a.ID); err != nil {
		t.Fatal(err)
	}
	var sender map[string]string
	_ = json.Unmarshal(row.Sender, &sender)
	if row.Type != "location" || row.ReplyTo == nil || *row.ReplyTo != first.MessageID || !row.Forwarded ||
		sender["user_id"] != "US.5" || sender["wa_id"] != "4915112345678" {
		t.Fatalf("%+v", row)
	}
}
