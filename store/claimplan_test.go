package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"gateway/store"
	"gateway/store/storetest"
)

// planRows sums, over a JSON plan, the rows the scans of table read (returned and removed by
// a filter): the work a statement does there.
func planRows(node map[string]any, table string) float64 {
	var n float64
	if node["Relation Name"] == table {
		n += node["Actual Rows"].(float64) * node["Actual Loops"].(float64)
		if r, ok := node["Rows Removed by Filter"].(float64); ok {
			n += r
		}
	}
	if kids, ok := node["Plans"].([]any); ok {
		for _, k := range kids {
			n += planRows(k.(map[string]any), table)
		}
	}
	return n
}

// A due backlog of 100k deliveries on one endpoint (left out of the claim: it is at its
// backlog) does not make claims for the other endpoints slow: the claim reads a bounded number
// of delivery rows, not the backlog. Before the fix the claim walked the due index through the
// whole backlog, filtering it out row by row.
func TestClaimWithLargeBacklogOnOneEndpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("inserts 100k deliveries")
	}
	t.Parallel()
	s := storetest.New(t)
	big := newWHFixtureOn(t, s, "big")
	small := newWHFixtureOn(t, s, "small")
	ctx := context.Background()
	// The backlog without the fan-out trigger (100k trigger calls are slow), then the small
	// endpoint's deliveries, due later, through it.
	db := s.DB()
	for _, q := range []string{
		`ALTER TABLE events DISABLE TRIGGER USER`,
		`INSERT INTO events (account_id, type, data) SELECT $1, 'contact.created', '{}' FROM generate_series(1, 100000)`,
		`INSERT INTO webhook_deliveries (account_id, event_id, endpoint_id, next_attempt_at)
			SELECT account_id, id, $2, now() - interval '1 hour' FROM events WHERE account_id = $1`,
		`ALTER TABLE events ENABLE TRIGGER USER`,
	} {
		args := []any{big.account.ID, big.endpoint.ID}[:strings.Count(q, "$")]
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	small.events(t, 5)
	if _, err := s.DB().ExecContext(ctx, `ANALYZE webhook_deliveries, webhook_endpoints`); err != nil {
		t.Fatal(err)
	}
	var plan []map[string]any
	var raw []byte
	now := time.Now().Add(time.Hour)
	// EXPLAIN ANALYZE runs the claim: in a transaction rolled back.
	tx, err := s.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = tx.GetContext(ctx, &raw, `EXPLAIN (ANALYZE, FORMAT JSON) `+store.ClaimSQL,
		now, 10, 30, pq.Array([]int64{big.endpoint.ID}), pq.Array([]int64{}))
	tx.Rollback()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &plan); err != nil {
		t.Fatal(err)
	}
	rows := planRows(plan[0]["Plan"].(map[string]any), "webhook_deliveries")
	t.Logf("claim read %.0f delivery rows, %.1f ms", rows, plan[0]["Execution Time"].(float64))
	if rows > 1000 {
		var text []string
		s.DB().SelectContext(ctx, &text, `EXPLAIN `+store.ClaimSQL, now, 10, 30, pq.Array([]int64{big.endpoint.ID}), pq.Array([]int64{}))
		t.Log(strings.Join(text, "\n"))
		t.Fatalf("the claim read %.0f delivery rows to find 5 due ones beside a 100k backlog", rows)
	}
	// And the claim still claims the small endpoint's due deliveries, oldest first.
	cs, err := s.ClaimDueDeliveries(ctx, now, 10, 30*time.Second, []int64{big.endpoint.ID}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 5 {
		t.Fatalf("claimed %d, want the small endpoint's 5", len(cs))
	}
	for _, c := range cs {
		if c.EndpointID != small.endpoint.ID {
			t.Fatalf("claimed a delivery of endpoint %d", c.EndpointID)
		}
	}
}
