package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"gateway/store"
	"gateway/store/storetest"
)

// reportsFixture is an account with contacts, their conversations and two campaigns.
type reportsFixture struct {
	st        *store.Store
	accountID int64
	contacts  []int64
	convs     []int64
	campaigns []int64
}

func newReportsFixture(t *testing.T, st *store.Store, name string, contacts int) *reportsFixture {
	t.Helper()
	ctx := context.Background()
	a, err := st.CreateAccount(ctx, name, name+"@example.com", fmt.Sprintf("%s-%d", name, time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	f := &reportsFixture{st: st, accountID: a.ID}
	db := st.DB()
	for i := range contacts {
		var c, v int64
		if err := db.GetContext(ctx, &c, `INSERT INTO contacts (account_id, mobile, name) VALUES ($1, $2, 'C') RETURNING id`,
			a.ID, fmt.Sprintf("1555100%04d", i)); err != nil {
			t.Fatal(err)
		}
		if err := db.GetContext(ctx, &v, `INSERT INTO conversations (account_id, contact_id) VALUES ($1, $2) RETURNING id`, a.ID, c); err != nil {
			t.Fatal(err)
		}
		f.contacts, f.convs = append(f.contacts, c), append(f.convs, v)
	}
	for _, n := range []string{"API", "Spring"} {
		var id int64
		if err := db.GetContext(ctx, &id, `INSERT INTO campaigns (account_id, name) VALUES ($1, $2) RETURNING id`, a.ID, n); err != nil {
			t.Fatal(err)
		}
		f.campaigns = append(f.campaigns, id)
	}
	return f
}

// insert records an outbound message of contact i in campaign j with the status, created at.
func (f *reportsFixture) insert(t *testing.T, i, j int, template, status string, at time.Time) int64 {
	t.Helper()
	var id int64
	if err := f.st.DB().Get(&id, `INSERT INTO messages (account_id, contact_id, conversation_id, campaign_id, direction, type,
			destination, template_name, platform_message_id, status, created_at)
		VALUES ($1, $2, $3, $4, 'out', 'template', '15551234567', $5, 'wamid.' || gen_random_uuid(), $6, $7) RETURNING id`,
		f.accountID, f.contacts[i], f.convs[i], f.campaigns[j], template, status, at); err != nil {
		t.Fatal(err)
	}
	return id
}

// directCounts counts the campaign's messages by status, over messages.
func directCounts(t *testing.T, st *store.Store, accountID, campaignID int64) store.StatusCounts {
	t.Helper()
	var c store.StatusCounts
	if err := st.DB().Get(&c, `SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
			count(*) FILTER (WHERE status = 'sent') AS sent, count(*) FILTER (WHERE status = 'delivered') AS delivered,
			count(*) FILTER (WHERE status = 'read') AS read, count(*) FILTER (WHERE status = 'failed') AS failed
		FROM messages WHERE account_id = $1 AND campaign_id = $2 AND direction = 'out'`, accountID, campaignID); err != nil {
		t.Fatal(err)
	}
	return c
}

// The counters follow every insert, status change (through the store's own status path and
// plain UPDATEs) and delete, per campaign, per hour bucket and per failure reason.
func TestCampaignCountersFollowMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	f := newReportsFixture(t, st, "acme", 3)
	other := newReportsFixture(t, st, "beta", 1)
	r := rand.New(rand.NewPCG(7, 11))
	base := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	statuses := []string{"pending", "sent", "delivered", "read", "failed"}
	var ids []int64
	for n := range 60 {
		ids = append(ids, f.insert(t, n%3, n%2, "welcome", statuses[r.IntN(5)], base.Add(time.Duration(n)*17*time.Minute)))
	}
	other.insert(t, 0, 0, "welcome", "sent", base)
	// Status reports through the store, in random order with duplicates.
	for range 200 {
		id := ids[r.IntN(len(ids))]
		var wamid string
		if err := st.DB().Get(&wamid, `SELECT platform_message_id FROM messages WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		s := statuses[1+r.IntN(4)]
		rep := store.StatusReport{PlatformMessageID: wamid, Status: s, OccurredAt: base}
		if s == "failed" {
			code := 131000 + r.IntN(3)
			rep.ErrorCode, rep.ErrorTitle = &code, fmt.Sprintf("Error %d", code)
		}
		if _, err := st.ApplyStatus(ctx, f.accountID, rep); err != nil {
			t.Fatal(err)
		}
	}
	// A delete takes the message out.
	if _, err := st.DB().Exec(`DELETE FROM messages WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	for _, camp := range f.campaigns {
		c, err := st.CampaignByID(ctx, f.accountID, camp)
		if err != nil {
			t.Fatal(err)
		}
		var first, last time.Time
		if err := st.DB().QueryRow(`SELECT min(created_at), max(created_at) FROM messages WHERE account_id = $1 AND campaign_id = $2`,
			f.accountID, camp).Scan(&first, &last); err != nil {
			t.Fatal(err)
		}
		// The deleted message was campaign 0's first: first_at keeps it (messages are never
		// deleted by the gateway); campaign 1's are exact.
		if c.FirstSentAt == nil || c.LastSentAt == nil || !c.LastSentAt.Equal(last) || c.FirstSentAt.After(first) ||
			(camp == f.campaigns[1] && !c.FirstSentAt.Equal(first)) {
			t.Errorf("campaign %d: first %v last %v, messages from %v to %v", camp, c.FirstSentAt, c.LastSentAt, first, last)
		}
		assertCampaignBreakdown(t, st, f.accountID, camp, base.Add(-time.Hour), base.Add(48*time.Hour))
		days, err := st.CampaignSeries(ctx, f.accountID, camp, "day", base.Add(-24*time.Hour), base.Add(48*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, d := range days {
			sum += d.Total()
		}
		if len(days) < 1 || len(days) > 2 || sum != c.Total() {
			t.Errorf("campaign %d: day buckets %+v, total %d", camp, days, c.Total())
		}
	}
	// Tenancy: another account's campaign id is not found, its counts never mix in.
	if _, err := st.CampaignByID(ctx, other.accountID, f.campaigns[0]); err != store.ErrNotFound {
		t.Fatalf("other account reads A's campaign: %v", err)
	}
	cs, err := st.Campaigns(ctx, other.accountID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[1].Total() != 1 || cs[1].Sent != 1 || cs[0].Total() != 0 {
		t.Fatalf("other account's campaigns: %+v", cs)
	}
	if rs, err := st.CampaignFailureReasons(ctx, other.accountID, f.campaigns[0], 10); err != nil || len(rs) != 0 {
		t.Fatalf("other account reads A's failure reasons: %v %v", rs, err)
	}
}

// The counters follow statements that change many messages at once (they are counted per
// statement, migration 000030): inserts of campaign and other messages in both directions,
// updates that move statuses, fail messages with reasons, move messages between campaigns,
// hours and directions, change nothing counted, and deletes; after each statement every
// campaign's breakdown equals a count over its messages.
func TestCampaignCountersFollowStatements(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	f := newReportsFixture(t, st, "acme", 4)
	other := newReportsFixture(t, st, "beta", 1)
	base := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	statements := []struct{ name, sql string }{
		{"insert", `INSERT INTO messages (account_id, contact_id, conversation_id, campaign_id, direction, type, destination,
				template_name, platform_message_id, status, error_code, error_title, created_at)
			SELECT $1, c.contact, c.conv, CASE WHEN g % 5 = 0 THEN NULL ELSE ($2::bigint[])[1 + g % 2] END,
				CASE WHEN g % 7 = 0 THEN 'in' ELSE 'out' END, 'template', '15551234567', 'welcome', 'wamid.stmt.' || g,
				(ARRAY['pending', 'sent', 'delivered', 'read', 'failed'])[1 + g % 5],
				CASE WHEN g % 5 = 4 THEN 131000 + g % 3 END, CASE WHEN g % 5 = 4 THEN 'Error ' || (131000 + g % 3) END,
				$4::timestamptz + g * interval '11 minutes'
			FROM generate_series(1, 60) g
			JOIN LATERAL (SELECT ($3::bigint[])[1 + g % 4] AS contact, ($5::bigint[])[1 + g % 4] AS conv) c ON true`},
		{"statuses move", `UPDATE messages SET status = CASE WHEN id % 3 = 0 THEN 'read' WHEN id % 3 = 1 THEN 'delivered'
				ELSE status END
			WHERE account_id = $1 AND status IN ('pending', 'sent', 'delivered')`},
		{"some fail", `UPDATE messages SET status = 'failed', error_code = 131026 + id % 2, error_title = 'Undeliverable'
			WHERE account_id = $1 AND status = 'delivered' AND id % 2 = 0`},
		{"moves between campaigns and hours", `UPDATE messages SET
				campaign_id = CASE WHEN id % 4 = 0 THEN ($2::bigint[])[1 + (campaign_id = ($2::bigint[])[1])::int]
					ELSE campaign_id END,
				created_at = CASE WHEN id % 4 = 1 THEN created_at + interval '3 hours' ELSE created_at END,
				status = CASE WHEN id % 4 = 2 AND status = 'sent' THEN 'read' ELSE status END
			WHERE account_id = $1 AND campaign_id IS NOT NULL`},
		{"directions flip", `UPDATE messages SET direction = CASE direction WHEN 'in' THEN 'out' ELSE 'in' END
			WHERE account_id = $1 AND id % 6 = 0`},
		{"campaigns set and cleared", `UPDATE messages SET campaign_id = CASE WHEN campaign_id IS NULL THEN ($2::bigint[])[2] END
			WHERE account_id = $1 AND id % 5 = 3`},
		{"a failure's reason changes", `UPDATE messages SET error_title = 'Retitled' WHERE account_id = $1 AND status = 'failed' AND id % 3 = 0`},
		{"nothing counted changes", `UPDATE messages SET template_name = 'renamed' WHERE account_id = $1`},
		{"deletes", `DELETE FROM messages WHERE account_id = $1 AND id % 4 = 3`},
	}
	if _, err := st.DB().Exec(`INSERT INTO messages (account_id, contact_id, conversation_id, campaign_id, direction, type, destination,
			status, created_at) VALUES ($1, $2, $3, $4, 'out', 'template', '15551234567', 'sent', $5)`,
		other.accountID, other.contacts[0], other.convs[0], other.campaigns[0], base); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range statements {
		// Each statement takes the arguments up to the highest it names.
		args := []any{f.accountID, pq.Array(f.campaigns), pq.Array(f.contacts), base, pq.Array(f.convs)}
		for len(args) > 1 && !strings.Contains(stmt.sql, fmt.Sprintf("$%d", len(args))) {
			args = args[:len(args)-1]
		}
		res, err := st.DB().Exec(stmt.sql, args...)
		if err != nil {
			t.Fatalf("%s: %v", stmt.name, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			t.Fatalf("%s: changed no message", stmt.name)
		}
		for _, camp := range f.campaigns {
			assertCampaignBreakdown(t, st, f.accountID, camp, base.Add(-time.Hour), base.Add(48*time.Hour))
		}
		if t.Failed() {
			t.Fatalf("after %q", stmt.name)
		}
	}
	// The other account's counts never moved.
	assertCampaignBreakdown(t, st, other.accountID, other.campaigns[0], base.Add(-time.Hour), base.Add(time.Hour))
	if c := directCounts(t, st, other.accountID, other.campaigns[0]); c.Sent != 1 {
		t.Fatalf("other account: %+v", c)
	}
}

// assertCampaignBreakdown checks the campaign's counters against a count over its messages: by
// status, per hour bucket from..to (totals and reads), and its failure reasons.
func assertCampaignBreakdown(t *testing.T, st *store.Store, accountID, camp int64, from, to time.Time) {
	t.Helper()
	ctx := context.Background()
	c, err := st.CampaignByID(ctx, accountID, camp)
	if err != nil {
		t.Fatal(err)
	}
	if want := directCounts(t, st, accountID, camp); c.StatusCounts != want {
		t.Errorf("campaign %d: counters %+v, direct count %+v", camp, c.StatusCounts, want)
	}
	// Hour buckets.
	series, err := st.CampaignSeries(ctx, accountID, camp, "hour", from, to)
	if err != nil {
		t.Fatal(err)
	}
	var perHour []struct {
		Start time.Time `db:"start"`
		N     int64     `db:"n"`
		Read  int64     `db:"read"`
	}
	if err := st.DB().Select(&perHour, `SELECT date_trunc('hour', created_at, 'UTC') AS start, count(*) AS n,
				count(*) FILTER (WHERE status = 'read') AS read
			FROM messages WHERE account_id = $1 AND campaign_id = $2 AND direction = 'out' GROUP BY 1 ORDER BY 1`, accountID, camp); err != nil {
		t.Fatal(err)
	}
	if len(series) != len(perHour) {
		t.Fatalf("campaign %d: %d hour buckets, want %d", camp, len(series), len(perHour))
	}
	for i, b := range series {
		if !b.Start.Equal(perHour[i].Start) || b.Total() != perHour[i].N || b.Read != perHour[i].Read {
			t.Errorf("campaign %d bucket %d: %+v, want %+v", camp, i, b, perHour[i])
		}
	}
	// Failure reasons.
	var want []store.FailureReason
	if err := st.DB().Select(&want, `SELECT COALESCE(error_code, 0) AS error_code, COALESCE(error_title, '') AS error_title, count(*) AS count
			FROM messages WHERE account_id = $1 AND campaign_id = $2 AND direction = 'out' AND status = 'failed'
			GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2`, accountID, camp); err != nil {
		t.Fatal(err)
	}
	got, err := st.CampaignFailureReasons(ctx, accountID, camp, 10)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("campaign %d failure reasons %v, want %v", camp, got, want)
	}
}

// The keyset cursor walks every row exactly once, newest first, ties on created_at broken by
// id; a cursor survives its round trip and a forged one is refused.
func TestListMessagesCursor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	f := newReportsFixture(t, st, "acme", 2)
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	var want []int64
	for n := range 25 {
		// Pairs share a created_at, so the id breaks the tie.
		want = append([]int64{f.insert(t, n%2, 0, "welcome", "sent", at.Add(time.Duration(n/2)*time.Second))}, want...)
	}
	var got []int64
	var after *store.MessageCursor
	for {
		p, err := st.ListMessages(ctx, f.accountID, store.MessageFilter{Limit: 4, After: after})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range p.Messages {
			got = append(got, m.ID)
		}
		if p.Next == nil {
			break
		}
		c, err := store.ParseMessageCursor(p.Next.String())
		if err != nil || c != *p.Next {
			t.Fatalf("cursor round trip: %v %v %v", c, p.Next, err)
		}
		after = &c
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("walk %v, want %v", got, want)
	}
	for _, bad := range []string{"", "x", "bm9wZQ", store.MessageCursor{ID: 0}.String(),
		store.MessageCursor{CreatedAt: time.UnixMicro(-999999999999999999), ID: 1}.String(),
		store.MessageCursor{CreatedAt: time.UnixMicro(999999999999999999), ID: 1}.String()} {
		if _, err := store.ParseMessageCursor(bad); err != store.ErrBadCursor {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
}
