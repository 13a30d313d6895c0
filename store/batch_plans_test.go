package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// The batch statements take their rows as one JSON argument (batch.go) so that PostgreSQL keeps
// one generic plan for them whatever the batch size: after its first five executions a prepared
// statement is planned again only when its generic plan looks dearer than the custom ones, and
// a row set whose estimate depends on the batch (an array's length) made every later execution
// plan anew. On one connection, each statement runs twelve times with batches of 1 to 16 rows;
// all but the first five executions must use the generic plan.
func TestBatchStatementsPlanGenerically(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.DSN(t)
	db, err := store.Open(ctx, dsn, 1) // one session: pg_prepared_statements is per session
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := store.New(db, storetest.TestKey)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := newAccount(t, st, "plans")
	if _, err := st.CreateWebhookEndpoint(ctx, a.ID, "http://127.0.0.1:9/hook", "whsec_AAAA"); err != nil {
		t.Fatal(err)
	}
	const runs = 12
	for run := range runs {
		n := []int{1, 16, 2, 9}[run%4]
		begins := make([]store.SendBegin, n)
		for j := range begins {
			begins[j] = store.SendBegin{AccountID: a.ID, SendInput: sendIn(fmt.Sprintf("1777%04d%04d", run, j), "Plan", "API")}
		}
		recs, err := st.BeginSends(ctx, begins)
		if err != nil {
			t.Fatal(err)
		}
		sent := make([]store.SentWrite, n)
		reports := make([]store.StatusWrite, n)
		for j, r := range recs {
			pid := fmt.Sprintf("wamid.plan.%d.%d", run, j)
			sent[j] = store.SentWrite{AccountID: a.ID, MessageID: r.MessageID, PlatformMessageID: pid, At: time.Now()}
			reports[j] = store.StatusWrite{AccountID: a.ID, Body: []byte(`{}`),
				Report: store.StatusReport{PlatformMessageID: pid, Status: "delivered", OccurredAt: time.Now()}}
		}
		if _, err := st.RecordSentWrites(ctx, sent); err != nil {
			t.Fatal(err)
		}
		if _, err := st.ApplyStatusWrites(ctx, reports); err != nil {
			t.Fatal(err)
		}
		claims, err := st.ClaimDueDeliveries(ctx, time.Time{}, n, time.Minute, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		results := make([]store.AttemptResult, n)
		for j := range results {
			results[j] = store.AttemptResult{ClaimRef: claims[j%len(claims)].Ref(), AttemptedAt: time.Now(),
				StatusCode: 200, Outcome: store.OutcomeSucceeded}
		}
		if err := st.RecordAttempts(ctx, time.Time{}, results); err != nil {
			t.Fatal(err)
		}
	}
	var plans []struct {
		Statement string `db:"statement"`
		Head      string `db:"head"`
		Generic   int64  `db:"generic_plans"`
		Custom    int64  `db:"custom_plans"`
	}
	if err := db.SelectContext(ctx, &plans, `SELECT statement, left(regexp_replace(statement, '\s+', ' ', 'g'), 70) AS head,
		generic_plans, custom_plans FROM pg_prepared_statements`); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"INSERT INTO contacts", "UPDATE messages SET platform_message_id", "status_rank(messages.status)",
		"INSERT INTO webhook_attempts"} {
		found := false
		for _, p := range plans {
			if !strings.Contains(p.Statement, want) {
				continue
			}
			found = true
			t.Logf("%s…: %d generic, %d custom", p.Head, p.Generic, p.Custom)
			if p.Custom > 5 || p.Generic+p.Custom != runs {
				t.Errorf("%s…: %d generic and %d custom plans in %d runs, want at most 5 custom", p.Head, p.Generic, p.Custom, runs)
			}
		}
		if !found {
			t.Errorf("no prepared statement holds %q; prepared: %+v", want, plans)
		}
	}
}
