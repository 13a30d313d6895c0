package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"gateway/server/servertest/wait"
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
	wait.For(t, func() bool {
		var n int
		if err := db.Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}, 10*time.Second, "the status report to wait on the parked row")
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
				if _, err := f.st.DB().Exec(`UPDATE messages SET platform_message_id = $2, status = 'sent', sent_at = COALESCE(sent_at, now())
					WHERE id = $1`, ids[i], pid); err != nil {
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

// A status change writes its message.status event only for an account with an enabled webhook
// endpoint, which is the only way an event is ever read (applyStatusSQL): in one statement,
// the message of an account with an enabled endpoint gets its event and one delivery, those
// of an account without endpoints and of one whose endpoint is disabled get none; all three
// messages move and keep their times alike.
func TestStatusEventsOnlyWhereDelivered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	hooked, bare, off := newInboundFixtureOn(t, st, "hooked"), newInboundFixtureOn(t, st, "bare"), newInboundFixtureOn(t, st, "off")
	if _, err := st.DB().Exec(`DELETE FROM webhook_endpoints WHERE account_id = $1`, bare.accountID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().Exec(`UPDATE webhook_endpoints SET enabled = false WHERE account_id = $1`, off.accountID); err != nil {
		t.Fatal(err)
	}
	fixtures := []*inboundFixture{hooked, bare, off}
	var ws []store.StatusWrite
	ids := make([]int64, len(fixtures))
	for i, f := range fixtures {
		ids[i] = f.message(t, "sent", "wamid.E")
		ws = append(ws, store.StatusWrite{AccountID: f.accountID, Report: report("wamid.E", "delivered", 5)})
	}
	as, err := st.ApplyStatusWrites(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range fixtures {
		if !as[i].Found || !as[i].Changed || as[i].Fans != (i == 0) {
			t.Errorf("account %d: %+v", i, as[i])
		}
		if s := f.state(t, ids[i]); s.Status != "delivered" {
			t.Errorf("account %d: status %s", i, s.Status)
		}
		if h := f.history(t, ids[i]); len(h) != 2 || h["delivered"].IsZero() {
			t.Errorf("account %d: history %v", i, h)
		}
		want := 0
		if i == 0 {
			want = 1
		}
		if evs := f.statusEvents(t, ids[i]); len(evs) != want {
			t.Errorf("account %d: %d message.status events, want %d", i, len(evs), want)
		}
		var deliveries int
		if err := st.DB().Get(&deliveries, `SELECT count(*) FROM webhook_deliveries WHERE account_id = $1`, f.accountID); err != nil {
			t.Fatal(err)
		}
		if deliveries != want {
			t.Errorf("account %d: %d deliveries, want %d", i, deliveries, want)
		}
	}
}

// TestApplyStatusNoOpWritesNothing: a report that changes nothing (a duplicate, or a lower
// status already reported) writes no row anywhere, not even the raw webhook body; a report that
// changes the message stores its body with the change, and a lower status reported for the
// first time keeps its history row (and its body).
func TestApplyStatusNoOpWritesNothing(t *testing.T) {
	t.Parallel()
	f := newInboundFixture(t)
	ctx := context.Background()
	id := f.message(t, "pending", "")
	f.recordPlatformID(t, id, "wamid.N")
	rows := func() string {
		t.Helper()
		var n struct {
			Raw     int `db:"raw"`
			History int `db:"history"`
			Events  int `db:"events"`
			Parked  int `db:"parked"`
		}
		if err := f.st.DB().Get(&n, `SELECT (SELECT count(*) FROM platform_webhooks) AS raw,
			(SELECT count(*) FROM (`+storetest.History+`) h WHERE message_id = $1) AS history,
			(SELECT count(*) FROM events WHERE account_id = $2) AS events,
			(SELECT count(*) FROM parked_statuses WHERE account_id = $2) AS parked`, id, f.accountID); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("raw %d history %d events %d parked %d", n.Raw, n.History, n.Events, n.Parked)
	}
	apply := func(status string, sec int) store.StatusResult {
		t.Helper()
		res, err := f.st.ApplyStatusRecordingWebhook(ctx, f.accountID, report("wamid.N", status, sec), []byte(`{"status":"`+status+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if got := rows(); got != "raw 0 history 1 events 0 parked 0" {
		t.Fatalf("start: %s", got)
	}
	if res := apply("read", 3); !res.Found || !res.Changed {
		t.Fatalf("read: %+v", res)
	}
	if got := rows(); got != "raw 1 history 2 events 1 parked 0" {
		t.Fatalf("after read: %s", got)
	}
	for _, r := range []struct {
		status string
		sec    int
	}{{"read", 3}, {"read", 9}, {"sent", 1}} {
		if res := apply(r.status, r.sec); !res.Found || res.Changed {
			t.Fatalf("%s again: %+v", r.status, res)
		}
		if got := rows(); got != "raw 1 history 2 events 1 parked 0" {
			t.Fatalf("after a no-op %s: %s (it wrote)", r.status, got)
		}
	}
	// delivered after read: no change, but its first report is kept in the history.
	if res := apply("delivered", 2); !res.Found || res.Changed {
		t.Fatalf("late delivered: %+v", res)
	}
	if got := rows(); got != "raw 2 history 3 events 1 parked 0" {
		t.Fatalf("after a late delivered: %s", got)
	}
	if res := apply("delivered", 2); res.Changed {
		t.Fatalf("late delivered again: %+v", res)
	}
	if got := rows(); got != "raw 2 history 3 events 1 parked 0" {
		t.Fatalf("after a late delivered again: %s (it wrote)", got)
	}
}
