package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"gateway/store"
	"gateway/store/storetest"
)

// inboundFixture is an account with one contact and conversation, for status tests.
type inboundFixture struct {
	st        *store.Store
	accountID int64
	contactID int64
	convID    int64
}

func newInboundFixture(t *testing.T) *inboundFixture {
	t.Helper()
	st := storetest.New(t)
	return newInboundFixtureOn(t, st, "acme")
}

func newInboundFixtureOn(t *testing.T, st *store.Store, name string) *inboundFixture {
	t.Helper()
	ctx := context.Background()
	a, err := st.CreateAccount(ctx, name, name+"@example.com", fmt.Sprintf("%s-%d", name, time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	f := &inboundFixture{st: st, accountID: a.ID}
	db := st.DB()
	if err := db.GetContext(ctx, &f.contactID, `INSERT INTO contacts (account_id, mobile, name) VALUES ($1, '15551234567', 'Ana') RETURNING id`, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.GetContext(ctx, &f.convID, `INSERT INTO conversations (account_id, contact_id) VALUES ($1, $2) RETURNING id`, a.ID, f.contactID); err != nil {
		t.Fatal(err)
	}
	return f
}

// message inserts an outbound message with the given status and platform id ("" for none yet).
func (f *inboundFixture) message(t *testing.T, status, platformID string) int64 {
	t.Helper()
	var pid *string
	if platformID != "" {
		pid = &platformID
	}
	var id int64
	err := f.st.DB().GetContext(context.Background(), &id, `INSERT INTO messages (account_id, contact_id, conversation_id, direction, type,
		destination, template_name, platform_message_id, status, sent_at)
		VALUES ($1, $2, $3, 'out', 'template', '15551234567', 'order_confirmation', $4, $5, now()) RETURNING id`,
		f.accountID, f.contactID, f.convID, pid, status)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (f *inboundFixture) recordPlatformID(t *testing.T, messageID int64, platformID string) {
	t.Helper()
	if _, err := f.st.DB().Exec(`UPDATE messages SET platform_message_id = $3, status = 'sent' WHERE account_id = $1 AND id = $2`,
		f.accountID, messageID, platformID); err != nil {
		t.Fatal(err)
	}
}

type messageState struct {
	Status       string  `db:"status"`
	ErrorCode    *int    `db:"error_code"`
	ErrorTitle   *string `db:"error_title"`
	ErrorDetails *string `db:"error_details"`
}

func (f *inboundFixture) state(t *testing.T, messageID int64) messageState {
	t.Helper()
	var s messageState
	if err := f.st.DB().Get(&s, `SELECT status, error_code, error_title, error_details FROM messages WHERE id = $1`, messageID); err != nil {
		t.Fatal(err)
	}
	return s
}

// statusEvents returns the data of the message's message.status events, oldest first.
func (f *inboundFixture) statusEvents(t *testing.T, messageID int64) []map[string]any {
	t.Helper()
	evs, err := f.st.EventsByAccount(context.Background(), f.accountID, "message.status", 10000)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, e := range evs {
		var d map[string]any
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d["message_id"] == float64(messageID) {
			out = append(out, d)
		}
	}
	return out
}

func (f *inboundFixture) history(t *testing.T, messageID int64) map[string]time.Time {
	t.Helper()
	var rows []struct {
		Status     string    `db:"status"`
		OccurredAt time.Time `db:"occurred_at"`
	}
	if err := f.st.DB().Select(&rows, `SELECT status, occurred_at FROM message_statuses WHERE account_id = $1 AND message_id = $2`,
		f.accountID, messageID); err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Time{}
	for _, r := range rows {
		out[r.Status] = r.OccurredAt
	}
	return out
}

func (f *inboundFixture) parked(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.st.DB().Get(&n, `SELECT count(*) FROM parked_statuses WHERE account_id = $1`, f.accountID); err != nil {
		t.Fatal(err)
	}
	return n
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func report(pid, status string, sec int) store.StatusReport {
	return store.StatusReport{PlatformMessageID: pid, Status: status, OccurredAt: t0.Add(time.Duration(sec) * time.Second)}
}

func (f *inboundFixture) apply(t *testing.T, r store.StatusReport) store.StatusResult {
	t.Helper()
	res, err := f.st.ApplyStatus(context.Background(), f.accountID, r)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestStatusRank(t *testing.T) {
	want := map[string]int{"pending": 0, "sent": 1, "delivered": 2, "read": 3, "failed": 9, "received": -1, "played": -1, "": -1}
	for s, r := range want {
		if got := store.StatusRank(s); got != r {
			t.Errorf("StatusRank(%q) = %d, want %d", s, got, r)
		}
	}
}

func TestApplyStatusMonotonic(t *testing.T) {
	f := newInboundFixture(t)
	id := f.message(t, "pending", "wamid.A")
	steps := []struct {
		status  string
		changed bool
		want    string
	}{
		{"delivered", true, "delivered"}, // delivered before sent
		{"sent", false, "delivered"},     // late
		{"delivered", false, "delivered"},
		{"read", true, "read"},
		{"delivered", false, "read"},
		{"read", false, "read"},
	}
	for i, s := range steps {
		res := f.apply(t, report("wamid.A", s.status, 10+i))
		if !res.Found || res.Changed != s.changed || res.Parked {
			t.Fatalf("step %d %s: %+v, want changed=%t", i, s.status, res, s.changed)
		}
		if got := f.state(t, id).Status; got != s.want {
			t.Fatalf("step %d: status %s, want %s", i, got, s.want)
		}
	}
	evs := f.statusEvents(t, id)
	if len(evs) != 2 || evs[0]["status"] != "delivered" || evs[1]["status"] != "read" {
		t.Fatalf("events %v", evs)
	}
	if evs[0]["chat_message_id"] != "wamid.A" || evs[0]["conversation_id"] != float64(f.convID) ||
		evs[0]["timestamp"] != t0.Add(10*time.Second).Format(time.RFC3339) || evs[0]["error"] != nil {
		t.Fatalf("event data %v", evs[0])
	}
	// History: every distinct status once, with the timestamp of its first report.
	h := f.history(t, id)
	if len(h) != 3 || !h["sent"].Equal(t0.Add(11*time.Second)) || !h["delivered"].Equal(t0.Add(10*time.Second)) {
		t.Fatalf("history %v", h)
	}
}

func TestApplyStatusReadWithoutDelivered(t *testing.T) {
	f := newInboundFixture(t)
	id := f.message(t, "sent", "wamid.R")
	f.apply(t, report("wamid.R", "read", 1))
	if got := f.state(t, id).Status; got != "read" {
		t.Fatalf("status %s", got)
	}
	if res := f.apply(t, report("wamid.R", "delivered", 0)); res.Changed {
		t.Fatal("delivered after read changed the message")
	}
	if n := len(f.statusEvents(t, id)); n != 1 {
		t.Fatalf("%d events", n)
	}
}

func TestApplyStatusFailedKeepsErrorAndIsTerminal(t *testing.T) {
	f := newInboundFixture(t)
	id := f.message(t, "sent", "wamid.F")
	f.apply(t, report("wamid.F", "delivered", 1))
	code := 131026
	r := report("wamid.F", "failed", 2)
	r.ErrorCode, r.ErrorTitle, r.ErrorDetails = &code, "Message undeliverable", "Receiver is incapable of receiving this message"
	if res := f.apply(t, r); !res.Changed {
		t.Fatal("failed after delivered did not apply")
	}
	for _, s := range []string{"read", "sent", "delivered", "failed"} {
		if res := f.apply(t, report("wamid.F", s, 3)); res.Changed {
			t.Fatalf("%s left failed", s)
		}
	}
	st := f.state(t, id)
	if st.Status != "failed" || st.ErrorCode == nil || *st.ErrorCode != code || *st.ErrorTitle != r.ErrorTitle || *st.ErrorDetails != r.ErrorDetails {
		t.Fatalf("state %+v", st)
	}
	evs := f.statusEvents(t, id)
	if len(evs) != 2 {
		t.Fatalf("events %v", evs)
	}
	e, _ := evs[1]["error"].(map[string]any)
	if evs[1]["status"] != "failed" || e["code"] != float64(code) || e["title"] != r.ErrorTitle || e["details"] != r.ErrorDetails {
		t.Fatalf("failed event %v", evs[1])
	}
	// A failure without error details still moves the status; the event has no error.
	id2 := f.message(t, "sent", "wamid.F2")
	f.apply(t, report("wamid.F2", "failed", 1))
	if st := f.state(t, id2); st.Status != "failed" || st.ErrorCode != nil {
		t.Fatalf("state %+v", st)
	}
	if evs := f.statusEvents(t, id2); len(evs) != 1 || evs[0]["error"] != nil {
		t.Fatalf("events %v", evs)
	}
}

func TestApplyStatusRejectsUnknownStatus(t *testing.T) {
	f := newInboundFixture(t)
	for _, s := range []string{"", "pending", "received", "played", "deleted"} {
		if _, err := f.st.ApplyStatus(context.Background(), f.accountID, report("wamid.X", s, 0)); err == nil {
			t.Errorf("status %q accepted", s)
		}
	}
	if f.parked(t) != 0 {
		t.Fatal("an invalid status was parked")
	}
}

func TestApplyStatusTenancy(t *testing.T) {
	a := newInboundFixture(t)
	b := newInboundFixtureOn(t, a.st, "globex")
	id := a.message(t, "sent", "wamid.T")
	// B reports a status for A's platform id: A's message is untouched; it parks under B.
	if res := b.apply(t, report("wamid.T", "read", 1)); res.Found || !res.Parked {
		t.Fatalf("result %+v", res)
	}
	if st := a.state(t, id); st.Status != "sent" {
		t.Fatalf("A's message moved to %s", st.Status)
	}
	if a.parked(t) != 0 || b.parked(t) != 1 {
		t.Fatal("parked under the wrong account")
	}
	if err := a.st.ApplyParkedStatuses(context.Background(), a.accountID, "wamid.T"); err != nil {
		t.Fatal(err)
	}
	if b.parked(t) != 1 || a.state(t, id).Status != "sent" {
		t.Fatal("A applied B's parked status")
	}
}

func TestApplyParkedStatuses(t *testing.T) {
	f := newInboundFixture(t)
	ctx := context.Background()
	code := 131047
	failed := report("wamid.P", "failed", 4)
	failed.ErrorCode, failed.ErrorTitle = &code, "Re-engagement message"
	// Reports before the send is recorded (the message is pending, without a platform id).
	id := f.message(t, "pending", "")
	for _, r := range []store.StatusReport{report("wamid.P", "read", 3), report("wamid.P", "sent", 1),
		report("wamid.P", "read", 3), report("wamid.P", "delivered", 2)} {
		if res := f.apply(t, r); !res.Parked || res.Found || res.Changed {
			t.Fatalf("result %+v", res)
		}
	}
	if n := f.parked(t); n != 3 {
		t.Fatalf("%d parked, want 3 (duplicates parked once)", n)
	}
	// Nothing applies while the id is unknown; the reports stay parked.
	if err := f.st.ApplyParkedStatuses(ctx, f.accountID, "wamid.P"); err != nil {
		t.Fatal(err)
	}
	if n := f.parked(t); n != 3 {
		t.Fatalf("%d parked after an early ApplyParkedStatuses", n)
	}
	f.recordPlatformID(t, id, "wamid.P")
	if err := f.st.ApplyParkedStatuses(ctx, f.accountID, "wamid.P"); err != nil {
		t.Fatal(err)
	}
	if st := f.state(t, id); st.Status != "read" {
		t.Fatalf("status %s", st.Status)
	}
	if n := f.parked(t); n != 0 {
		t.Fatalf("%d still parked", n)
	}
	// The message was recorded as sent: delivered and read are the real changes, in rank order.
	evs := f.statusEvents(t, id)
	if len(evs) != 2 || evs[0]["status"] != "delivered" || evs[1]["status"] != "read" {
		t.Fatalf("events %v", evs)
	}
	if h := f.history(t, id); len(h) != 3 || !h["read"].Equal(t0.Add(3*time.Second)) {
		t.Fatalf("history %v", h)
	}
	// Again: nothing to do.
	if err := f.st.ApplyParkedStatuses(ctx, f.accountID, "wamid.P"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.statusEvents(t, id)); n != 2 {
		t.Fatalf("%d events after a second call", n)
	}
	// A parked failure keeps its error when applied.
	id2 := f.message(t, "pending", "")
	failed.PlatformMessageID = "wamid.P2"
	f.apply(t, failed)
	f.recordPlatformID(t, id2, "wamid.P2")
	if err := f.st.ApplyParkedStatuses(ctx, f.accountID, "wamid.P2"); err != nil {
		t.Fatal(err)
	}
	if st := f.state(t, id2); st.Status != "failed" || st.ErrorCode == nil || *st.ErrorCode != code || *st.ErrorTitle != failed.ErrorTitle {
		t.Fatalf("state %+v", st)
	}
}

// TestApplyStatusParkRace forces the interleaving the re-check exists for: a status report
// takes its snapshot before the send records the platform id, the send's ApplyParkedStatuses
// runs before the parked row is committed, and only then does the park commit. The status path
// must notice the message and apply the report itself.
func TestApplyStatusParkRace(t *testing.T) {
	f := newInboundFixture(t)
	ctx := context.Background()
	db := f.st.DB()
	id := f.message(t, "pending", "")

	// A transaction holding an uncommitted parked row with the same key makes the status
	// path's park wait (on the unique key) after its snapshot was taken.
	blocker, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Rollback()
	if _, err := blocker.Exec(`INSERT INTO parked_statuses (account_id, platform_message_id, status, occurred_at) VALUES ($1, 'wamid.RACE', 'delivered', now())`,
		f.accountID); err != nil {
		t.Fatal(err)
	}
	type out struct {
		res store.StatusResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := f.st.ApplyStatus(ctx, f.accountID, report("wamid.RACE", "delivered", 5))
		done <- out{res, err}
	}()
	waitForLockWait(t, db)

	// The send records its platform id and looks for parked reports: none is visible yet.
	f.recordPlatformID(t, id, "wamid.RACE")
	if err := f.st.ApplyParkedStatuses(ctx, f.accountID, "wamid.RACE"); err != nil {
		t.Fatal(err)
	}
	if st := f.state(t, id); st.Status != "sent" {
		t.Fatalf("status %s before the park committed", st.Status)
	}
	// Let the park proceed.
	if err := blocker.Rollback(); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	if !o.res.Parked || !o.res.Found || !o.res.Changed {
		t.Fatalf("result %+v", o.res)
	}
	if st := f.state(t, id); st.Status != "delivered" {
		t.Fatalf("status %s: the parked report was lost", st.Status)
	}
	if n := f.parked(t); n != 0 {
		t.Fatalf("%d still parked", n)
	}
	if n := len(f.statusEvents(t, id)); n != 1 {
		t.Fatalf("%d events", n)
	}
}

// waitForLockWait polls, with a deadline, until a backend of this database waits on a lock.
func waitForLockWait(t *testing.T, db *sqlx.DB) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := db.Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the status report never waited on the parked row")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestApplyStatusConcurrent(t *testing.T) {
	f := newInboundFixture(t)
	ctx := context.Background()
	const n = 20
	ids := make([]int64, n)
	for i := range ids {
		status, pid := "sent", fmt.Sprintf("wamid.C%d", i)
		if i%2 == 1 {
			status, pid = "pending", "" // recorded while the reports arrive
		}
		ids[i] = f.message(t, status, pid)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n*20)
	for i := range ids {
		pid := fmt.Sprintf("wamid.C%d", i)
		for _, s := range []string{"sent", "delivered", "read", "delivered", "read", "sent"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := f.st.ApplyStatus(ctx, f.accountID, report(pid, s, store.StatusRank(s))); err != nil {
					errs <- err
				}
			}()
		}
		if i%2 == 1 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := f.st.DB().Exec(`UPDATE messages SET platform_message_id = $2, status = 'sent' WHERE id = $1`, ids[i], pid); err != nil {
					errs <- err
					return
				}
				if err := f.st.ApplyParkedStatuses(ctx, f.accountID, pid); err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, id := range ids {
		if st := f.state(t, id); st.Status != "read" {
			t.Errorf("message %d: status %s", i, st.Status)
		}
		// Events rise strictly in rank and there is at most one per rank above the start.
		evs := f.statusEvents(t, id)
		if len(evs) == 0 || len(evs) > 2 {
			t.Errorf("message %d: %d events", i, len(evs))
		}
		for j := 1; j < len(evs); j++ {
			if store.StatusRank(evs[j]["status"].(string)) <= store.StatusRank(evs[j-1]["status"].(string)) {
				t.Errorf("message %d: events not rising: %v", i, evs)
			}
		}
		if h := f.history(t, id); len(h) != 3 {
			t.Errorf("message %d: history %v", i, h)
		}
	}
	if n := f.parked(t); n != 0 {
		t.Fatalf("%d still parked", n)
	}
}

func TestReconcileParkedStatuses(t *testing.T) {
	f := newInboundFixture(t)
	ctx := context.Background()
	f.apply(t, report("wamid.Q", "delivered", 1))
	f.apply(t, report("wamid.Unknown", "delivered", 1))
	// Recorded without anyone calling ApplyParkedStatuses.
	id := f.message(t, "sent", "wamid.Q")
	n, err := f.st.ReconcileParkedStatuses(ctx, 100)
	if err != nil || n != 1 {
		t.Fatalf("reconciled %d, %v", n, err)
	}
	if st := f.state(t, id); st.Status != "delivered" {
		t.Fatalf("status %s", st.Status)
	}
	if n := f.parked(t); n != 1 {
		t.Fatalf("%d parked, want the unknown one", n)
	}
}

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

func TestJoinSandbox(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a, _ := st.CreateAccount(ctx, "acme", "a@example.com", "acme-42")
	id, err := st.JoinSandbox(ctx, "ACME-42", "15551112222", t0)
	if err != nil || id != a.ID {
		t.Fatalf("%d %v", id, err)
	}
	if _, err := st.JoinSandbox(ctx, "acme-42", "15551112222", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.JoinSandbox(ctx, "acme-42", "15551112222", t0.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	var joined time.Time
	if err := st.DB().Get(&joined, `SELECT joined_at FROM sandbox_participants WHERE account_id = $1 AND phone = '15551112222'`, a.ID); err != nil || !joined.Equal(t0.Add(time.Hour)) {
		t.Fatalf("joined_at %v %v", joined, err)
	}
	if _, err := st.JoinSandbox(ctx, "nope", "15551112222", t0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown code: %v", err)
	}
}

func TestTemplateStatusByPlatformID(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a, _ := st.CreateAccount(ctx, "acme", "a@example.com", "acme-1")
	b, _ := st.CreateAccount(ctx, "globex", "b@example.com", "globex-1")
	for _, acc := range []int64{a.ID, b.ID} {
		if _, err := st.ConnectNumber(ctx, store.Connection{AccountID: acc, WabaID: "waba-1", PhoneNumberID: fmt.Sprint("pn-", acc),
			PhoneNumber: "15550000000", DisplayName: "x", AccessToken: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := st.AccountIDsByWabaID(ctx, "waba-1")
	if err != nil || len(ids) != 2 {
		t.Fatalf("%v %v", ids, err)
	}
	if ids, _ := st.AccountIDsByWabaID(ctx, "waba-2"); len(ids) != 0 {
		t.Fatalf("%v", ids)
	}
	if _, err := st.DB().Exec(`INSERT INTO templates (account_id, platform_id, name, language, status, category_id) VALUES
		($1, '111', 'welcome', 'en_US', 'APPROVED', 1), ($2, '111', 'welcome', 'en_US', 'APPROVED', 1)`, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.UpdateTemplateStatusByPlatformID(ctx, a.ID, "111", "PAUSED"); err != nil {
		t.Fatal(err)
	}
	var statuses []string
	st.DB().Select(&statuses, `SELECT status FROM templates ORDER BY account_id`)
	if fmt.Sprint(statuses) != "[PAUSED APPROVED]" {
		t.Fatalf("%v", statuses)
	}
	if err := st.UpdateTemplateStatusByPlatformID(ctx, a.ID, "222", "PAUSED"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("%v", err)
	}
}
