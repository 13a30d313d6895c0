package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

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
	// An enabled endpoint, so that status changes write their events (applyStatusSQL).
	if _, err := st.CreateWebhookEndpoint(ctx, a.ID, "https://example.com/"+name, whSecret); err != nil {
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
	// Every writer of a status writes its time with it (RecordSent, ApplyStatus): a message past
	// pending has its sent time, and its status's.
	err := f.st.DB().GetContext(context.Background(), &id, `INSERT INTO messages (account_id, contact_id, conversation_id, direction, type,
		destination, template_name, platform_message_id, status, sent_at, delivered_at, read_at, failed_at)
		VALUES ($1, $2, $3, 'out', 'template', '15551234567', 'order_confirmation', $4, $5,
			CASE WHEN $5 <> 'pending' THEN now() END, CASE WHEN $5 = 'delivered' THEN now() END,
			CASE WHEN $5 = 'read' THEN now() END, CASE WHEN $5 = 'failed' THEN now() END) RETURNING id`,
		f.accountID, f.contactID, f.convID, pid, status)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (f *inboundFixture) recordPlatformID(t *testing.T, messageID int64, platformID string) {
	t.Helper()
	// As RecordSent does: the status and its time together.
	if _, err := f.st.DB().Exec(`UPDATE messages SET platform_message_id = $3, status = 'sent', sent_at = COALESCE(sent_at, now())
		WHERE account_id = $1 AND id = $2`,
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
	if err := f.st.DB().Select(&rows, `SELECT status, occurred_at FROM (`+storetest.History+`) h WHERE account_id = $1 AND message_id = $2`,
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

// TestStatusRankAgreesWithSQL checks that the Go rank and the SQL function status_rank give
// the same rank to every status, the unknown ones included: every status the SQL function
// names and every status a message may hold (read from the database, so that a status added to
// either is compared too), and unknown and misspelt ones.
func TestStatusRankAgreesWithSQL(t *testing.T) {
	db := storetest.New(t).DB()
	var known []string
	if err := db.Select(&known, `SELECT m[1] FROM pg_proc p,
			regexp_matches(p.prosrc, 'WHEN\s+''([^'']*)''', 'g') m WHERE p.proname = 'status_rank'
		UNION SELECT m[1] FROM pg_constraint c,
			regexp_matches(pg_get_constraintdef(c.oid), '''([^'']*)''::text', 'g') m
			WHERE c.conname = 'messages_status_check'`); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"pending", "sent", "delivered", "read", "failed", "received"} {
		if !slices.Contains(known, s) {
			t.Fatalf("status %q not found in status_rank or messages_status_check (found %q): the query reading them is stale", s, known)
		}
	}
	for _, s := range append(known, "deleted", "played", "warning", "", "SENT", " sent", "sent ", "Read", "failed\x00") {
		var got int
		if err := db.Get(&got, `SELECT status_rank($1)`, s); err != nil {
			// a NUL byte is no valid text in PostgreSQL; the Go side must still call it unknown
			if strings.ContainsRune(s, 0) {
				if r := store.StatusRank(s); r != -1 {
					t.Errorf("StatusRank(%q) = %d, want -1", s, r)
				}
				continue
			}
			t.Fatal(err)
		}
		if want := store.StatusRank(s); got != want {
			t.Errorf("status_rank(%q) = %d in SQL, StatusRank = %d in Go", s, got, want)
		}
	}
	var null int
	if err := db.Get(&null, `SELECT status_rank(NULL)`); err != nil || null != -1 {
		t.Errorf("status_rank(NULL) = %d, %v; want -1 like an unknown status", null, err)
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
