package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// A batch of reports applied in one statement (ApplyStatusWrites, the group commit of the
// status path) leaves every account exactly as the same reports applied one by one do: the
// messages' statuses, times and errors, the events, the parked reports and the stored bodies,
// and each report's result.
func TestStatusWritesBatchEqualsOneByOne(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	code := 131026
	// Two accounts per side; the same messages and reports on each side.
	type side struct{ a, b *inboundFixture }
	build := func(name string) side {
		s := side{a: newInboundFixtureOn(t, st, name+"-a"), b: newInboundFixtureOn(t, st, name+"-b")}
		for _, f := range []*inboundFixture{s.a, s.b} {
			f.message(t, "sent", "wamid.1")
			f.message(t, "sent", "wamid.2")
			f.message(t, "delivered", "wamid.3")
			f.message(t, "sent", "wamid.4")
			f.message(t, "read", "wamid.5")
		}
		return s
	}
	writes := func(s side, tag string) []store.StatusWrite {
		failed := report("wamid.4", "failed", 7)
		failed.ErrorCode, failed.ErrorTitle = &code, "Undeliverable"
		body := func(i int) []byte { return []byte(fmt.Sprintf(`{"side":%q,"n":%d}`, tag, i)) }
		return []store.StatusWrite{
			{AccountID: s.a.accountID, Report: report("wamid.1", "delivered", 5), Body: body(1)},
			{AccountID: s.a.accountID, Report: report("wamid.2", "read", 6), Body: body(2)},
			{AccountID: s.a.accountID, Report: report("wamid.3", "sent", 1), Body: body(3)}, // nothing to do
			{AccountID: s.a.accountID, Report: failed, Body: body(4)},
			{AccountID: s.a.accountID, Report: report("wamid.5", "delivered", 4), Body: body(5)},       // late: its time only
			{AccountID: s.a.accountID, Report: report("wamid.unknown", "delivered", 5), Body: body(6)}, // parked
			{AccountID: s.b.accountID, Report: report("wamid.1", "read", 8), Body: body(7)},
			{AccountID: s.b.accountID, Report: report("wamid.2", "delivered", 3)}, // no body
		}
	}
	one, batch := build("one"), build("batch")

	var oneResults []store.StatusResult
	for _, w := range writes(one, "one") {
		apply := func() (store.StatusResult, error) {
			return st.ApplyStatusRecordingWebhook(ctx, w.AccountID, w.Report, w.Body)
		}
		if w.Body == nil {
			apply = func() (store.StatusResult, error) { return st.ApplyStatus(ctx, w.AccountID, w.Report) }
		}
		res, err := apply()
		if err != nil {
			t.Fatal(err)
		}
		oneResults = append(oneResults, res)
	}
	ws := writes(batch, "batch")
	applied, err := st.ApplyStatusWrites(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	var batchResults []store.StatusResult
	for i, a := range applied {
		res, err := st.SettleStatus(ctx, ws[i], a)
		if err != nil {
			t.Fatal(err)
		}
		batchResults = append(batchResults, res)
	}
	if !reflect.DeepEqual(oneResults, batchResults) {
		t.Fatalf("results differ:\none by one %+v\nbatch      %+v", oneResults, batchResults)
	}
	want := []bool{true, true, false, true, false, false, true, true} // Changed
	for i, r := range oneResults {
		if r.Changed != want[i] {
			t.Fatalf("report %d changed=%t, want %t (%+v)", i, r.Changed, want[i], r)
		}
	}

	state := func(f *inboundFixture) string {
		t.Helper()
		var msgs []struct {
			PID     string  `db:"platform_message_id"`
			Status  string  `db:"status"`
			Times   string  `db:"times"`
			Code    *int    `db:"error_code"`
			Title   *string `db:"error_title"`
			Details *string `db:"error_details"`
		}
		// The fixture's own times are its insert's now(): shown as "now", the reports' as they are.
		if err := st.DB().SelectContext(ctx, &msgs, `SELECT platform_message_id, status,
				concat_ws(' ', VARIADIC (SELECT array_agg(CASE WHEN x > now() - interval '1 hour' THEN 'now' ELSE x::text END)
					FROM unnest(ARRAY[sent_at, delivered_at, read_at, failed_at]) x)) AS times,
				error_code, error_title, error_details
			FROM messages WHERE account_id = $1 ORDER BY platform_message_id`, f.accountID); err != nil {
			t.Fatal(err)
		}
		var events []json.RawMessage
		if err := st.DB().SelectContext(ctx, &events, `SELECT data - 'message_id' - 'conversation_id' FROM events
			WHERE account_id = $1 ORDER BY data->>'chat_message_id', id`, f.accountID); err != nil {
			t.Fatal(err)
		}
		var parked []string
		if err := st.DB().SelectContext(ctx, &parked, `SELECT concat_ws(' ', platform_message_id, status, occurred_at)
			FROM parked_statuses WHERE account_id = $1 ORDER BY 1`, f.accountID); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, m := range msgs {
			fmt.Fprintf(&b, "%s %s [%s] %v %v %v\n", m.PID, m.Status, m.Times, derefAny(m.Code), derefAny(m.Title), derefAny(m.Details))
		}
		for _, e := range events {
			fmt.Fprintf(&b, "event %s\n", e)
		}
		fmt.Fprintf(&b, "parked %v\n", parked)
		return b.String()
	}
	for _, pair := range [][2]*inboundFixture{{one.a, batch.a}, {one.b, batch.b}} {
		if a, b := state(pair[0]), state(pair[1]); a != b {
			t.Fatalf("state differs:\none by one:\n%s\nbatch:\n%s", a, b)
		}
	}
	bodies := func(tag string) int {
		var n int
		if err := st.DB().GetContext(ctx, &n, `SELECT count(*) FROM platform_webhooks WHERE convert_from(body, 'UTF8') LIKE $1`,
			`%"side":"`+tag+`"%`); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Stored: every report that wrote something (5 changes or kept times, 1 parked); not the no-op.
	if o, b := bodies("one"), bodies("batch"); o != b || b != 6 {
		t.Fatalf("stored bodies: one by one %d, batch %d, want 6", o, b)
	}

	// Two reports of one message in one batch are refused, and nothing is written.
	dup := []store.StatusWrite{
		{AccountID: batch.b.accountID, Report: report("wamid.3", "read", 9)},
		{AccountID: batch.b.accountID, Report: report("wamid.3", "failed", 9)},
	}
	before := state(batch.b)
	if _, err := st.ApplyStatusWrites(ctx, dup); err == nil {
		t.Fatal("a batch with two reports of one message was applied")
	}
	if after := state(batch.b); after != before {
		t.Fatalf("a refused batch wrote:\n%s", after)
	}
}

func derefAny[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// A batch of send recordings in one statement (RecordSentWrites, the group commit of the send
// path) leaves every account exactly as RecordSent one by one does (statuses, ids, events,
// aliases), and says which recorded ids have parked reports, read after the recording.
func TestSentWritesBatchEqualsOneByOne(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	type side struct {
		a, b *inboundFixture
		ids  []int64 // a's pending, a's pending, a's failed, b's pending
	}
	build := func(name string) side {
		s := side{a: newInboundFixtureOn(t, st, name+"-a"), b: newInboundFixtureOn(t, st, name+"-b")}
		s.ids = append(s.ids, s.a.message(t, "pending", ""), s.a.message(t, "pending", ""), s.a.message(t, "failed", ""),
			s.b.message(t, "pending", ""))
		// A report that arrived before its send was recorded.
		if res := s.b.apply(t, report("wamid.4", "delivered", 9)); !res.Parked {
			t.Fatalf("not parked: %+v", res)
		}
		return s
	}
	writes := func(s side) []store.SentWrite {
		at := t0.Add(2 * time.Second)
		return []store.SentWrite{
			{AccountID: s.a.accountID, MessageID: s.ids[0], PlatformMessageID: "wamid.1", WaID: "15551234567", At: at},
			{AccountID: s.a.accountID, MessageID: s.ids[1], PlatformMessageID: "wamid.2", WaID: "4915551234567", At: at}, // an alias
			{AccountID: s.a.accountID, MessageID: s.ids[2], PlatformMessageID: "wamid.3", At: at},                        // not pending
			{AccountID: s.b.accountID, MessageID: s.ids[3], PlatformMessageID: "wamid.4", At: at},                        // parked reports
		}
	}
	one, batch := build("one"), build("batch")
	var oneRes []string
	for _, w := range writes(one) {
		err := st.RecordSent(ctx, w.AccountID, w.MessageID, w.PlatformMessageID, w.WaID, w.At)
		parked, perr := st.HasParkedStatuses(ctx, w.AccountID, w.PlatformMessageID)
		if perr != nil {
			t.Fatal(perr)
		}
		oneRes = append(oneRes, fmt.Sprintf("recorded=%t parked=%t", err == nil, err == nil && parked))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
	}
	applied, err := st.RecordSentWrites(ctx, writes(batch))
	if err != nil {
		t.Fatal(err)
	}
	var batchRes []string
	for _, a := range applied {
		if a.Recorded && !a.Checked {
			t.Fatalf("parked reports not checked: %+v", a)
		}
		batchRes = append(batchRes, fmt.Sprintf("recorded=%t parked=%t", a.Recorded, a.Parked))
	}
	want := []string{"recorded=true parked=false", "recorded=true parked=false", "recorded=false parked=false",
		"recorded=true parked=true"}
	if !reflect.DeepEqual(oneRes, want) || !reflect.DeepEqual(batchRes, want) {
		t.Fatalf("results:\none by one %v\nbatch      %v\nwant       %v", oneRes, batchRes, want)
	}
	state := func(f *inboundFixture) string {
		t.Helper()
		var b strings.Builder
		var rows []string
		if err := st.DB().SelectContext(ctx, &rows, `SELECT concat_ws(' ', COALESCE(platform_message_id, '-'), status,
				CASE WHEN sent_at > now() - interval '1 hour' THEN 'now' ELSE sent_at::text END)
			FROM messages WHERE account_id = $1 ORDER BY id`, f.accountID); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, rows)
		if err := st.DB().SelectContext(ctx, &rows, `SELECT concat_ws(' ', type, data - 'message_id' - 'conversation_id' - 'contact_id')
			FROM events WHERE account_id = $1 ORDER BY data->>'chat_message_id', id`, f.accountID); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, rows)
		if err := st.DB().SelectContext(ctx, &rows, `SELECT alias FROM contact_aliases WHERE account_id = $1 ORDER BY alias`,
			f.accountID); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, rows)
		return b.String()
	}
	for _, pair := range [][2]*inboundFixture{{one.a, batch.a}, {one.b, batch.b}} {
		if a, b := state(pair[0]), state(pair[1]); a != b {
			t.Fatalf("state differs:\none by one:\n%s\nbatch:\n%s", a, b)
		}
	}
	if got := state(batch.a); !strings.Contains(got, "wamid.2 sent") || !strings.Contains(got, "[4915551234567]") ||
		!strings.Contains(got, "message.sent") {
		t.Fatalf("the batch did not record: %s", got)
	}
	// Two recordings of one message in one batch are refused, and nothing is written.
	id := batch.b.message(t, "pending", "")
	before := state(batch.b)
	dup := []store.SentWrite{{AccountID: batch.b.accountID, MessageID: id, PlatformMessageID: "wamid.x", At: t0},
		{AccountID: batch.b.accountID, MessageID: id, PlatformMessageID: "wamid.y", At: t0}}
	if _, err := st.RecordSentWrites(ctx, dup); err == nil {
		t.Fatal("a batch with two recordings of one message was applied")
	}
	if after := state(batch.b); after != before {
		t.Fatalf("a refused batch wrote:\n%s", after)
	}
}
