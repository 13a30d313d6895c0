package store_test

import (
	"context"
	"strings"
	"testing"

	"gateway/store/storetest"
)

// Deleting a delivery cascades to its attempts through the foreign key (account_id,
// delivery_id), one generic plan for every deleted delivery. That plan must read one index
// range of the delivery's attempts whatever the statistics say; with the former index on
// (delivery_id, attempt) it ANDed the whole account's attempt index in, milliseconds per
// deleted delivery (an endpoint's deletion or retention ran for minutes).
func TestAttemptCascadeReadsOneIndexRange(t *testing.T) {
	s := storetest.New(t)
	ctx := context.Background()
	tx, err := s.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var plan []string
	for _, q := range []string{
		`SET LOCAL plan_cache_mode = force_generic_plan`,
		// The statement PostgreSQL's ON DELETE CASCADE runs for each deleted delivery.
		`PREPARE cascade (bigint, uuid) AS DELETE FROM ONLY webhook_attempts WHERE $1 = account_id AND $2 = delivery_id`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.SelectContext(ctx, &plan, `EXPLAIN EXECUTE cascade (1, '00000000-0000-0000-0000-000000000000')`); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if strings.Contains(text, "BitmapAnd") || !strings.Contains(text, "webhook_attempts_delivery_idx") ||
		!strings.Contains(text, "(account_id = $1) AND (delivery_id = $2)") {
		t.Fatalf("the cascade's plan does not read one range of webhook_attempts_delivery_idx:\n%s", text)
	}
}
