package worker

import (
	"context"
	"testing"
	"time"

	"gateway/server/servertest/wait"
)

// The name indexer drains every account's backlog (contacts inserted the way a large import's
// confirmation inserts them) into the name index, batch by batch.
func TestNameIndexerDrainsBacklogs(t *testing.T) {
	e := newWHEnv(t)
	ctx := context.Background()
	a, b := e.account("acme"), e.account("beta")
	insertBacklogged := func(accountID int64, n int) {
		t.Helper()
		tx, err := e.st.DB().BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.Exec(`SELECT set_config('gateway.contact_names', 'backlog', true)`); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO contacts (account_id, mobile, firstname, lastname)
			SELECT $1::bigint, (447700000000 + g)::text, 'Ana', 'Santana ' || g FROM generate_series(1, $2::int) g`, accountID, n); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	insertBacklogged(a.ID, 700)
	insertBacklogged(b.ID, 300)

	n := NewNameIndexer(e.st, NameIndexerConfig{Interval: 20 * time.Millisecond, Batch: 250})
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	wait.For(t, func() bool {
		accounts, err := e.st.NameBacklogAccounts(ctx, 10)
		return err == nil && len(accounts) == 0
	}, 30*time.Second, "the backlogs drained")
	for _, acct := range []struct {
		id   int64
		want int
	}{{a.ID, 700}, {b.ID, 300}} {
		p, err := e.st.ListContacts(ctx, acct.id, "santana", 1, 0)
		if err != nil || p.Total != acct.want {
			t.Errorf("account %d: the search finds %d (%v), want %d", acct.id, p.Total, err, acct.want)
		}
	}
}
