package server_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/platform/whatsapp"
	"gateway/server"
	"gateway/server/servertest"
	"gateway/server/servertest/wait"
	"gateway/server/worker"
	"gateway/store"
)

// A send is never made twice, whatever fails (issue 8, item 1), and an opted-out person is
// never messaged under another form of their number (item 3).

// outcomeData is the part of GET /messages/{id} these tests read.
type outcomeData struct {
	MessageID      int64  `json:"message_id"`
	ChatMessageID  string `json:"chat_message_id"`
	Status         string `json:"status"`
	OutcomeUnknown *bool  `json:"outcome_unknown"`
	History        []struct {
		Status string `json:"status"`
	} `json:"history"`
}

// errOutcome is the error envelope of a send whose outcome is unknown.
type errOutcome struct {
	Code           string `json:"code"`
	Message        string `json:"message"`
	MessageID      int64  `json:"message_id"`
	OutcomeUnknown bool   `json:"outcome_unknown"`
}

func getOutcome(t testing.TB, env *servertest.Env, key string, id int64) (int, outcomeData) {
	t.Helper()
	r := env.Do(servertest.Request{Method: http.MethodGet, Path: fmt.Sprintf("/v1/messages/%d", id), Key: key})
	var m outcomeData
	if r.Status == http.StatusOK {
		mustOK(t, r, &m)
	}
	return r.Status, m
}

func decodeOutcome(t testing.TB, r *servertest.Response) errOutcome {
	t.Helper()
	var e errOutcome
	r.JSON(t, &e)
	return e
}

// countingPlatform counts platform calls, and can hold them (a process stuck, or dead, in the
// platform call).
type countingPlatform struct {
	server.Platform
	calls atomic.Int32
	hold  chan struct{} // when non-nil, the first SendTemplate waits for it to close, then fails
}

func (p *countingPlatform) SendTemplate(ctx context.Context, token, pnid string, m whatsapp.TemplateSend) (whatsapp.SendResult, error) {
	if p.calls.Add(1) == 1 && p.hold != nil {
		<-p.hold
		return whatsapp.SendResult{}, context.Canceled
	}
	return p.Platform.SendTemplate(ctx, token, pnid, m)
}

// The platform does not answer in time, but accepted the send. The 502 says the outcome is
// unknown, GET shows the message as sent with outcome_unknown (never failed), a retry with the
// same key is a 409 saying the outcome is being confirmed and never calls the platform, and the
// platform's status reports, which echo our message id as callback data, adopt the wamid: the
// message ends with it and its statuses, and the retry then replays the send.
// Before the fix the message was recorded failed, and its status reports were parked forever.
func TestSendTimeoutOutcomeUnknownIsAdopted(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{Options: server.Options{SendTimeout: 300 * time.Millisecond},
		Simulator: &simulator.Config{SentDelay: 300 * time.Millisecond, DeliveredDelay: 400 * time.Millisecond, ReadDelay: 500 * time.Millisecond}})
	env.Sim.Script("15551234567", simulator.Outcome{Hang: 1500 * time.Millisecond})
	body := map[string]any{"destination": "15551234567", "template_name": "welcome"}
	r := send(env, a.Live, body, "Idempotency-Key", "k-timeout")
	mustFail(t, r, http.StatusBadGateway, "platform_unavailable")
	e := decodeOutcome(t, r)
	if !e.OutcomeUnknown || e.MessageID == 0 {
		t.Fatalf("the 502 does not say the outcome is unknown: %s", r.Body)
	}
	status, m := getOutcome(t, env, a.Live, e.MessageID)
	if status != http.StatusOK || m.Status != "sent" || m.OutcomeUnknown == nil || !*m.OutcomeUnknown {
		t.Fatalf("GET while the outcome is unknown: %d %+v", status, m)
	}
	r = send(env, a.Live, body, "Idempotency-Key", "k-timeout")
	mustFail(t, r, http.StatusConflict, "idempotency_in_progress")
	if e2 := decodeOutcome(t, r); !e2.OutcomeUnknown || e2.MessageID != e.MessageID {
		t.Fatalf("retry while unknown: %s", r.Body)
	}
	wait.For(t, func() bool {
		_, m = getOutcome(t, env, a.Live, e.MessageID)
		return m.Status == "read"
	}, 10*time.Second, "the status reports to adopt the send")
	sent := env.Sim.Sent()
	if len(sent) != 1 || sent[0].BizOpaqueCallbackData != fmt.Sprint(e.MessageID) {
		t.Fatalf("platform sends %+v, want one carrying callback data %d", sent, e.MessageID)
	}
	if m.ChatMessageID != sent[0].Wamid || m.OutcomeUnknown != nil || len(m.History) != 3 {
		t.Fatalf("adopted message %+v, want wamid %s and three statuses", m, sent[0].Wamid)
	}
	r = send(env, a.Live, body, "Idempotency-Key", "k-timeout")
	var d sendData
	mustOK(t, r, &d)
	if d.MessageID != e.MessageID || d.ChatMessageID != sent[0].Wamid || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry after adoption: %s", r.Body)
	}
	if n := len(env.Sim.Sent()); n != 1 {
		t.Fatalf("%d platform sends, want 1", n)
	}
	if n := len(events(t, env, a.Account.ID, "message.sent")); n != 1 {
		t.Fatalf("%d message.sent events, want 1", n)
	}
}

// failRecordingTrigger makes the database refuse to record any platform message id: the
// fault "the platform accepted, then the database failed".
const failRecordingTrigger = `CREATE FUNCTION fail_recording() RETURNS trigger LANGUAGE plpgsql AS
	$$BEGIN RAISE EXCEPTION 'injected fault: database unavailable'; END$$;
	CREATE TRIGGER fail_recording BEFORE UPDATE ON messages FOR EACH ROW
	WHEN (NEW.platform_message_id IS NOT NULL) EXECUTE FUNCTION fail_recording()`

// The platform accepts, then the database fails to record the send. The send retries recording
// for RecordRetry, then answers 502 with the outcome unknown; the key stays held, so the client's
// retry is a 409 and never a second platform call; once the database is back the send is
// recorded (in the background, or by a status report) and the retry replays it.
// Before the fix the send answered 500, released the key, and the retry sent again.
func TestSendRecordingFailsNeverSendsTwice(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{Options: server.Options{RecordRetry: 300 * time.Millisecond}})
	if _, err := env.Store.DB().Exec(failRecordingTrigger); err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"destination": "15551234567", "template_name": "welcome"}
	r := send(env, a.Live, body, "Idempotency-Key", "k-record")
	mustFail(t, r, http.StatusBadGateway, "platform_unavailable")
	e := decodeOutcome(t, r)
	if !e.OutcomeUnknown || e.MessageID == 0 {
		t.Fatalf("502 without the unknown outcome: %s", r.Body)
	}
	r = send(env, a.Live, body, "Idempotency-Key", "k-record")
	if r.Status != http.StatusConflict {
		t.Fatalf("retry while the database fails: %d %s", r.Status, r.Body)
	}
	if n := len(env.Sim.Sent()); n != 1 {
		t.Fatalf("%d platform sends, want exactly 1", n)
	}
	if _, err := env.Store.DB().Exec(`DROP TRIGGER fail_recording ON messages`); err != nil {
		t.Fatal(err)
	}
	wantWamid := env.Sim.Sent()[0].Wamid
	wait.For(t, func() bool {
		_, m := getOutcome(t, env, a.Live, e.MessageID)
		return m.ChatMessageID == wantWamid
	}, 10*time.Second, "the accepted send to be recorded once the database is back")
	r = send(env, a.Live, body, "Idempotency-Key", "k-record")
	var d sendData
	mustOK(t, r, &d)
	if d.ChatMessageID != wantWamid || d.MessageID != e.MessageID {
		t.Fatalf("retry after recovery: %s", r.Body)
	}
	if n := len(env.Sim.Sent()); n != 1 {
		t.Fatalf("%d platform sends, want exactly 1", n)
	}
}

// A process that dies between its platform call and the recording leaves the key in flight.
// Five minutes later a retry must not take the key over and send again: it is a 409 saying the
// outcome is being confirmed. The reconciler marks the orphaned send outcome_unknown (GET shows
// it), and a status report naming it in its callback data adopts the wamid.
// Before the fix the retry took the key over after AbandonAfter and sent a second time.
func TestSendDeadProcessKeyNeverTakenOver(t *testing.T) {
	t.Parallel()
	cp := &countingPlatform{hold: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(cp.hold) }) }
	env, a := sendEnv(t, servertest.Config{WrapPlatform: func(p server.Platform) server.Platform {
		cp.Platform = p
		return cp
	}})
	t.Cleanup(release)
	body := map[string]any{"destination": "15551234567", "template_name": "welcome"}
	first := make(chan struct{})
	go func() {
		defer close(first)
		req := servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Key: a.Live, Body: body,
			Header: map[string]string{"Idempotency-Key": "k-dead"}}
		env.DoConcurrent(req) // the "dead" process: stuck in its platform call
	}()
	wait.For(t, func() bool { return cp.calls.Load() == 1 }, 5*time.Second, "the first send to reach the platform")
	// Six minutes pass (AbandonAfter is five).
	db := env.Store.DB()
	if _, err := db.Exec(`UPDATE idempotency_keys SET created_at = created_at - interval '6 minutes' WHERE account_id = $1`, a.Account.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE messages SET created_at = created_at - interval '6 minutes' WHERE account_id = $1`, a.Account.ID); err != nil {
		t.Fatal(err)
	}
	r := send(env, a.Live, body, "Idempotency-Key", "k-dead")
	mustFail(t, r, http.StatusConflict, "idempotency_in_progress")
	e := decodeOutcome(t, r)
	if !e.OutcomeUnknown || e.MessageID == 0 {
		t.Fatalf("retry of a dead send: %s", r.Body)
	}
	if n := cp.calls.Load(); n != 1 {
		t.Fatalf("%d platform calls, want exactly 1", n)
	}

	// The reconciler marks the orphan; GET shows it as outcome unknown.
	rec := worker.NewReconciler(env.Store, worker.ReconcileConfig{})
	n, err := rec.RunOnce(context.Background())
	if err != nil || n.Orphaned != 1 {
		t.Fatalf("reconcile: %+v %v, want one orphaned send", n, err)
	}
	if status, m := getOutcome(t, env, a.Live, e.MessageID); status != http.StatusOK || m.OutcomeUnknown == nil || !*m.OutcomeUnknown {
		t.Fatalf("GET of the orphaned send: %d %+v", status, m)
	}
	// The platform's report for it (it had accepted the send) adopts the wamid.
	conn := tenantConn(a)
	st := pwStatus("wamid.ADOPTED1", "delivered", time.Now().Unix())
	st["biz_opaque_callback_data"] = fmt.Sprint(e.MessageID)
	pwPostOK(t, env, pwStatuses(t, conn, st))
	if status, m := getOutcome(t, env, a.Live, e.MessageID); status != http.StatusOK || m.ChatMessageID != "wamid.ADOPTED1" ||
		m.Status != "delivered" || m.OutcomeUnknown != nil {
		t.Fatalf("GET after the status report: %d %+v", status, m)
	}
	// Another account's message id in the callback data adopts nothing.
	other := env.NewTenant("Other Ltd")
	oconn := env.ConnectNumber(other)
	st = pwStatus("wamid.FOREIGN1", "sent", time.Now().Unix())
	st["biz_opaque_callback_data"] = fmt.Sprint(e.MessageID)
	pwPostOK(t, env, pwStatuses(t, oconn, st))
	if status, m := getOutcome(t, env, a.Live, e.MessageID); status != http.StatusOK || m.ChatMessageID != "wamid.ADOPTED1" {
		t.Fatalf("a foreign report changed the message: %+v", m)
	}
	release()
	<-first
}

// The reconciler adopts through the callback data a parked report whose send was still
// pending when the report came, and reports its figures.
func TestReconcileAdoptsParkedByCallbackData(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	tn := pwNewTenant(t, env, "Acme Ltd")
	id := pwSeedMessage(t, env, tn, "", "pending")
	db := env.Store.DB()
	if _, err := db.Exec(`INSERT INTO parked_statuses (account_id, platform_message_id, status, occurred_at, callback_message_id)
		VALUES ($1, 'wamid.P1', 'delivered', now(), $2), ($1, 'wamid.P1', 'sent', now() - interval '1 second', $2)`,
		tn.Account.ID, id); err != nil {
		t.Fatal(err)
	}
	figures := make(chan worker.ReconcileCounts, 10)
	rec := worker.NewReconciler(env.Store, worker.ReconcileConfig{OnPass: func(n worker.ReconcileCounts) { figures <- n }})
	n, err := rec.RunOnce(context.Background())
	if err != nil || n.Adopted != 1 {
		t.Fatalf("reconcile: %+v %v", n, err)
	}
	if got := pwMessageStatus(t, env, id); got != "delivered" {
		t.Fatalf("status %q, want delivered", got)
	}
	if c := pwCount(t, env, `SELECT count(*) FROM parked_statuses`); c != 0 {
		t.Fatalf("%d parked reports left", c)
	}
	// The loop hands every pass's figures to OnPass (the /metrics hook).
	if err := rec.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()
	select {
	case n := <-figures:
		if n != (worker.ReconcileCounts{}) {
			t.Fatalf("second pass did %+v, want nothing", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no pass reported its figures")
	}
}

// ---- item 3: one person, several forms of their number ----

// A STOP from one form of a Brazilian, Mexican or Argentinian number blocks sends to the other
// form. Before the fix the send created a second, unblocked contact and went out.
func TestSendBlockedUnderAnotherForm(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	pnid := tenantConn(a).PhoneNumberID
	for _, c := range []struct{ stopFrom, sendTo string }{
		{"551187654321", "5511987654321"}, // Brazil: STOP without the 9, send with it
		{"5521987654321", "552187654321"}, // and the reverse
		{"5215512345678", "525512345678"}, // Mexico
		{"5491112345678", "541112345678"}, // Argentina
	} {
		if _, err := env.Sim.InjectInboundMessage(simulator.Inbound{PhoneNumberID: pnid, From: c.stopFrom, Name: "Ana", Type: "text", Payload: map[string]any{"body": "STOP"}}); err != nil {
			t.Fatal(err)
		}
		wait.For(t, func() bool {
			return dbInt(t, env, `SELECT count(*) FROM contacts c WHERE account_id = $1 AND blocked AND (mobile = $2 OR EXISTS (
				SELECT 1 FROM contact_aliases l WHERE l.account_id = c.account_id AND l.contact_id = c.id AND l.alias = $2))`,
				a.Account.ID, c.stopFrom) == 1
		}, 5*time.Second, "the STOP to be recorded")
		r := send(env, a.Live, map[string]any{"destination": c.sendTo, "template_name": "welcome"})
		mustFail(t, r, http.StatusConflict, "contact_blocked")
	}
	if n := len(env.Sim.Sent()); n != 0 {
		t.Fatalf("%d sends reached the platform", n)
	}
	// POST /contacts with the other form updates the same person, and creates no second contact.
	before := dbInt(t, env, `SELECT count(*) FROM contacts WHERE account_id = $1`, a.Account.ID)
	r := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: a.Live,
		Body: map[string]any{"mobile": "+55 11 98765-4321", "note": "VIP"}})
	var up struct {
		ContactID int64  `json:"contact_id"`
		Created   bool   `json:"created"`
		Mobile    string `json:"mobile"`
	}
	mustOK(t, r, &up)
	if up.Created || up.Mobile != "551187654321" {
		t.Fatalf("POST /contacts with another form: %s", r.Body)
	}
	if after := dbInt(t, env, `SELECT count(*) FROM contacts WHERE account_id = $1`, a.Account.ID); after != before {
		t.Fatalf("%d contacts, want %d", after, before)
	}
}

// A STOP that arrives while a send is between its contact check and the platform call does not
// stop that send (the documented window), but wins for every later send, under any form.
func TestSendStopDuringSendWinsForLaterSends(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	pnid := tenantConn(a).PhoneNumberID
	env.Sim.Script("5511987654321", simulator.Outcome{Hang: 700 * time.Millisecond})
	done := make(chan *servertest.Response, 1)
	go func() {
		r, _ := env.DoConcurrent(servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Key: a.Live,
			Body: map[string]any{"destination": "5511987654321", "template_name": "welcome"}})
		done <- r
	}()
	wait.For(t, func() bool { return len(env.Sim.Sent()) == 1 }, 5*time.Second, "the first send to reach the platform")
	if _, err := env.Sim.InjectInboundMessage(simulator.Inbound{PhoneNumberID: pnid, From: "551187654321", Name: "Ana", Type: "text", Payload: map[string]any{"body": "stop"}}); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r == nil || r.Status != http.StatusOK {
		t.Fatalf("the send in flight: %+v", r)
	}
	for _, to := range []string{"5511987654321", "551187654321"} {
		mustFail(t, send(env, a.Live, map[string]any{"destination": to, "template_name": "welcome"}), http.StatusConflict, "contact_blocked")
	}
	if n := len(env.Sim.Sent()); n != 1 {
		t.Fatalf("%d platform sends, want 1", n)
	}
}

// tenantConn is the connection servertest.Env.ConnectNumber made for the tenant.
func tenantConn(tn servertest.Tenant) store.Connection {
	id := tn.Account.ID
	return store.Connection{AccountID: id, WabaID: fmt.Sprintf("waba-%d", id), PhoneNumberID: fmt.Sprintf("1065403522%05d", id)}
}

// Template status updates are applied by event time (entry.time): a late APPROVED after a
// PAUSED does not make the template sendable again. Before the fix the last delivery won.
func TestPlatformWebhookTemplateStatusByEventTime(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	tn := pwNewTenant(t, env, "Acme Ltd")
	pwSeedTemplate(t, env, tn.Account.ID, "1689556908129835", "abandoned_cart")
	update := func(event string, at int64) []byte {
		return []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":%q,"time":%d,"changes":[{"field":"message_template_status_update",`+
			`"value":{"event":%q,"message_template_id":1689556908129835,"message_template_name":"abandoned_cart","message_template_language":"en_US","reason":"NONE"}}]}]}`,
			tn.Conn.WabaID, at, event))
	}
	const t0 = 1751247548
	for _, s := range []struct {
		event string
		at    int64
		want  string
	}{
		{"PAUSED", t0 + 60, "PAUSED"},
		{"APPROVED", t0, "PAUSED"}, // late: happened before the pause
		{"REINSTATED", t0 + 120, "APPROVED"},
		{"PAUSED", t0 + 90, "APPROVED"}, // late again
	} {
		pwPostOK(t, env, update(s.event, s.at))
		if got := pwTemplateStatus(t, env, tn.Account.ID, "1689556908129835"); got != s.want {
			t.Fatalf("%s at %d: status %s, want %s", s.event, s.at, got, s.want)
		}
	}
}

// A retry whose wait for the in-flight send runs out while it is reading that send's message
// still answers with the message's outcome (409, outcome unknown, the message id), never with
// the bare "still in progress" that names no message. The message read is held behind a table
// lock until the wait is over. Before the fix the deadline was read twice, once before and once
// after that read, and a read that outlasted the deadline fell through to the bare 409: this is
// how TestSendDeadProcessKeyNeverTakenOver failed under a loaded machine.
func TestSendRetryWaitEndingDuringMessageReadNamesTheMessage(t *testing.T) {
	t.Parallel()
	cp := &countingPlatform{hold: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(cp.hold) }) }
	const idemWait = 300 * time.Millisecond
	env, a := sendEnv(t, servertest.Config{Options: server.Options{IdempotencyWait: idemWait},
		WrapPlatform: func(p server.Platform) server.Platform {
			cp.Platform = p
			return cp
		}})
	t.Cleanup(release)
	body := map[string]any{"destination": "15551234567", "template_name": "welcome"}
	first := make(chan struct{})
	go func() {
		defer close(first)
		env.DoConcurrent(servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Key: a.Live, Body: body,
			Header: map[string]string{"Idempotency-Key": "k-slow-read"}})
	}()
	wait.For(t, func() bool { return cp.calls.Load() == 1 }, 5*time.Second, "the first send to reach the platform")

	tx, err := env.Store.DB().Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`LOCK TABLE messages IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	unlocked := make(chan struct{})
	go func() {
		defer close(unlocked)
		time.Sleep(2 * idemWait)
		tx.Rollback()
	}()
	r := send(env, a.Live, body, "Idempotency-Key", "k-slow-read")
	<-unlocked
	mustFail(t, r, http.StatusConflict, "idempotency_in_progress")
	if e := decodeOutcome(t, r); !e.OutcomeUnknown || e.MessageID == 0 {
		t.Fatalf("a retry whose wait ended during the message read: %s", r.Body)
	}
	if n := cp.calls.Load(); n != 1 {
		t.Fatalf("%d platform calls, want exactly 1", n)
	}
	release()
	<-first
}
