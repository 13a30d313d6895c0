package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"gateway/server/servertest"
)

// A platform webhook never loops on a poison item: each status, inbound
// message and template update of a batch is applied on its own; one that cannot be stored
// (U+0000 in an inbound text or profile name, a timestamp out of range, a value PostgreSQL
// refuses) is kept in platform_dead_letters with its error, the rest of the batch is applied,
// and the answer is 200, so Meta does not retry the delivery for days.
func TestPlatformWebhookPoisonItems(t *testing.T) {
	env := servertest.New(t, servertest.Config{})
	tn := pwNewTenant(t, env, "Acme Ltd")
	m1 := pwSeedMessage(t, env, tn, "wamid.P1", "sent")
	m2 := pwSeedMessage(t, env, tn, "wamid.P2", "sent")
	pwSeedTemplate(t, env, tn.Account.ID, "111", "first_template")
	pwSeedTemplate(t, env, tn.Account.ID, "222", "second_template")
	pnid := tn.Conn.PhoneNumberID
	body := fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":%q,"changes":[
		{"field":"messages","value":{"messaging_product":"whatsapp","metadata":{"phone_number_id":%q},"statuses":[
			{"id":"wamid.P1","status":"delivered","timestamp":"1767268800","recipient_id":"15551234567"},
			{"id":"wamid.P2","status":"read","timestamp":"99999999999999","recipient_id":"15551234567"},
			{"id":"wamid.P1","status":"read","timestamp":"1767268801","recipient_id":"15551234567"}]}},
		{"field":"messages","value":{"messaging_product":"whatsapp","metadata":{"phone_number_id":%q},
			"contacts":[{"profile":{"name":"Uno"},"wa_id":"15550000001"},{"profile":{"name":"Bad\u0000Name"},"wa_id":"15550000002"},
				{"profile":{"name":"Tres"},"wa_id":"15550000003"}],
			"messages":[
				{"from":"15550000001","id":"wamid.IN1","timestamp":"1767268800","type":"text","text":{"body":"nul \u0000 here"}},
				{"from":"15550000002","id":"wamid.IN2","timestamp":"1767268800","type":"text","text":{"body":"fine"}},
				{"from":"15550000003","id":"wamid.IN3","timestamp":"1767268800","type":"text","text":{"body":"hello"}}]}},
		{"field":"message_template_status_update","value":{"event":"PAUSED","message_template_id":111}},
		{"field":"message_template_status_update","value":{"event":"PAUSED\u0000","message_template_id":222}}
	]}]}`, tn.Conn.WabaID, pnid, pnid)
	pwPostOK(t, env, []byte(body))

	if s := pwMessageStatus(t, env, m1); s != "read" {
		t.Errorf("the good statuses beside a poison one: %s", s)
	}
	if s := pwMessageStatus(t, env, m2); s != "sent" {
		t.Errorf("the poison status: %s", s)
	}
	if n := pwCount(t, env, `SELECT count(*) FROM messages WHERE platform_message_id = 'wamid.IN3'`); n != 1 {
		t.Errorf("the good inbound message beside poison ones: %d", n)
	}
	if n := pwCount(t, env, `SELECT count(*) FROM messages WHERE platform_message_id IN ('wamid.IN1', 'wamid.IN2')`); n != 0 {
		t.Errorf("poison inbound messages stored: %d", n)
	}
	if s := pwTemplateStatus(t, env, tn.Account.ID, "111"); s != "PAUSED" {
		t.Errorf("the good template update: %s", s)
	}
	if s := pwTemplateStatus(t, env, tn.Account.ID, "222"); s != "APPROVED" {
		t.Errorf("the poison template update: %s", s)
	}
	if n := pwCount(t, env, `SELECT count(*) FROM platform_webhooks`); n != 1 {
		t.Errorf("raw deliveries stored: %d", n)
	}
	var letters []struct {
		Kind      string `db:"kind"`
		AccountID *int64 `db:"account_id"`
		WebhookID *int64 `db:"webhook_id"`
		Item      []byte `db:"item"`
		Error     string `db:"error"`
	}
	if err := env.Store.DB().Select(&letters, `SELECT kind, account_id, webhook_id, item, error FROM platform_dead_letters ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, l := range letters {
		kinds[l.Kind]++
		if l.Error == "" || len(l.Item) == 0 || l.AccountID == nil || *l.AccountID != tn.Account.ID || l.WebhookID == nil {
			t.Errorf("dead letter %+v", l)
		}
	}
	if kinds["status"] != 1 || kinds["message"] != 2 || kinds["template_status"] != 1 || len(letters) != 4 {
		t.Fatalf("dead letters by kind %v", kinds)
	}

	// A delivery that is one poison status (the one-statement path) is dead-lettered too.
	m3 := pwSeedMessage(t, env, tn, "wamid.P3", "sent")
	pwPostOK(t, env, pwStatuses(t, tn.Conn, pwStatus("wamid.P3", "delivered", 99999999999999)))
	if s := pwMessageStatus(t, env, m3); s != "sent" {
		t.Errorf("poison single status: %s", s)
	}
	if n := pwCount(t, env, `SELECT count(*) FROM platform_dead_letters WHERE kind = 'status'`); n != 2 {
		t.Errorf("status dead letters: %d", n)
	}
	if n := pwCount(t, env, `SELECT count(*) FROM platform_webhooks`); n != 2 {
		t.Errorf("raw deliveries stored: %d", n)
	}
}

// When the raw delivery itself cannot be stored the answer is a 500, so Meta retries.
func TestPlatformWebhookRawNotStored(t *testing.T) {
	env := servertest.New(t, servertest.Config{})
	tn := pwNewTenant(t, env, "Acme Ltd")
	pwSeedMessage(t, env, tn, "wamid.R1", "sent")
	if _, err := env.Store.DB().Exec(`ALTER TABLE platform_webhooks ADD CONSTRAINT refuse_all CHECK (id < 0)`); err != nil {
		t.Fatal(err)
	}
	body := pwStatuses(t, tn.Conn, pwStatus("wamid.R1", "delivered", 1767268800), pwStatus("wamid.R1", "read", 1767268801))
	r := env.Do(servertest.Request{Method: http.MethodPost, Path: "/platform/webhook", Body: body,
		Header: map[string]string{"X-Hub-Signature-256": pwSign(body)}})
	if r.Status != http.StatusInternalServerError {
		t.Fatalf("raw delivery not stored: %d %s", r.Status, r.Body)
	}
}
