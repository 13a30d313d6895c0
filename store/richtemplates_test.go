package store_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// The buttons and unsupported parts parsed at sync time come back from the listing and from
// SendTarget; a changed button list is an update, an equal one is not.
func TestSyncTemplatesKeepsButtons(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	in := tplIn("100", "promo", "en_US", "APPROVED", "MARKETING", 1)
	in.HeaderFormat = "IMAGE"
	in.Buttons = store.TemplateButtons{{Index: 0, Type: "URL", Text: "Shop", TakesValue: true}, {Index: 1, Type: "QUICK_REPLY", Text: "Stop", TakesValue: true}}
	odd := tplIn("200", "carousel", "en_US", "APPROVED", "MARKETING", 0)
	odd.Unsupported = []string{"CAROUSEL"}
	if _, err := st.SyncTemplates(ctx, a.ID, []store.TemplateInput{in, odd}); err != nil {
		t.Fatal(err)
	}
	ts, err := st.ApprovedTemplates(ctx, a.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || !reflect.DeepEqual([]string(ts[0].Unsupported), []string{"CAROUSEL"}) || len(ts[0].Buttons) != 0 ||
		!reflect.DeepEqual(ts[1].Buttons, in.Buttons) || len(ts[1].Unsupported) != 0 {
		t.Fatalf("listed %+v", ts)
	}
	res, _ := st.SyncTemplates(ctx, a.ID, []store.TemplateInput{in, odd})
	if res.Unchanged != 2 {
		t.Fatalf("same listing: %+v", res)
	}
	in.Buttons = in.Buttons[:1]
	if res, _ := st.SyncTemplates(ctx, a.ID, []store.TemplateInput{in, odd}); res.Updated != 1 {
		t.Fatalf("one button less: %+v", res)
	}
	if _, err := st.ConnectNumber(ctx, store.Connection{AccountID: a.ID, WabaID: "w", PhoneNumberID: "p", PhoneNumber: "15550001111",
		DisplayName: "Acme", AccessToken: "t"}); err != nil {
		t.Fatal(err)
	}
	_, got, err := st.SendTarget(ctx, a.ID, 0, "promo", "")
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0].Buttons, in.Buttons) || got[0].HeaderFormat != "IMAGE" {
		t.Fatalf("send target %+v %v", got, err)
	}
}

// client_reference is kept on the message and lands in message.sent and message.status; a send
// without one has none anywhere.
func TestClientReferenceInEvents(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	// Status events are written only where an endpoint will deliver them.
	if _, err := st.CreateWebhookEndpoint(ctx, a.ID, "https://example.com/acme", whSecret); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	with := sendIn("15551234567", "Ana", "API")
	with.ClientReference = "crm-7781"
	r1, err := st.BeginSend(ctx, a.ID, with)
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := st.BeginSend(ctx, a.ID, sendIn("15551234568", "Bo", "API"))
	for i, r := range []store.SendRecord{r1, r2} {
		wamid := []string{"wamid.A", "wamid.B"}[i]
		if err := st.RecordSent(ctx, a.ID, r.MessageID, wamid, "", now); err != nil {
			t.Fatal(err)
		}
		if _, err := st.ApplyStatus(ctx, a.ID, store.StatusReport{PlatformMessageID: wamid, Status: "delivered", OccurredAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := st.MessageByID(ctx, a.ID, r1.MessageID)
	if err != nil || m.ClientReference == nil || *m.ClientReference != "crm-7781" {
		t.Fatalf("message %+v %v", m, err)
	}
	if m, _ := st.MessageByID(ctx, a.ID, r2.MessageID); m.ClientReference != nil {
		t.Fatalf("no reference given, got %q", *m.ClientReference)
	}
	for _, typ := range []string{"message.sent", "message.status"} {
		evs, err := st.EventsByAccount(ctx, a.ID, typ, 10)
		if err != nil || len(evs) != 2 {
			t.Fatalf("%s: %d events, %v", typ, len(evs), err)
		}
		for _, ev := range evs {
			var d map[string]any
			json.Unmarshal(ev.Data, &d)
			ref, has := d["client_reference"]
			if mine := d["message_id"] == float64(r1.MessageID); mine != has || (mine && ref != "crm-7781") {
				t.Fatalf("%s data %s", typ, ev.Data)
			}
		}
	}
	tm, err := st.RecordTestSend(ctx, a.ID, store.TestSendInput{Destination: "15551234567", TemplateName: "otp_login_code",
		Delivery: "simulated", PlatformMessageID: "wamid.test.X", CreatedAt: now, ConversationID: 1, ContactID: 1, ClientReference: "t-1"})
	if err != nil || tm.ClientReference == nil || *tm.ClientReference != "t-1" {
		t.Fatalf("test send %+v %v", tm, err)
	}
	if got, _ := st.TestMessageByID(ctx, a.ID, tm.ID); got.ClientReference == nil || *got.ClientReference != "t-1" {
		t.Fatalf("test message %+v", got)
	}
}
