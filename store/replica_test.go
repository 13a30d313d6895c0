package store_test

import (
	"context"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// The reads that may lag fall back to the primary when the replica does not answer or is not
// a replica (not in recovery), with the same answers, and the counts say which pool served
// them. (A replica that serves is exercised by the topology test, make cluster-test.)
func TestReplicaReadsFallBackToPrimary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, dsn := storetest.NewWithDSN(t)
	a := newAccount(t, st, "acme").ID
	if _, err := st.BeginSend(ctx, a, sendIn("15551234567", "", "spring")); err != nil {
		t.Fatal(err)
	}
	if state, _ := st.ReplicaState(); state != store.ReplicaNone {
		t.Fatalf("state %q without a replica", state)
	}
	for _, c := range []struct{ name, dsn string }{
		{"down", "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=1"},
		{"not in recovery", dsn},
	} {
		replica, err := store.OpenPool(ctx, c.dsn, store.PoolOptions{MaxConns: 2, Lazy: true})
		if err != nil {
			t.Fatal(err)
		}
		defer replica.Close()
		now := time.Unix(1_800_000_000, 0)
		st.SetReplica(replica, 5*time.Second, func() time.Time { return now })
		_, before := st.ReadsServed()
		page, err := st.ListMessages(ctx, a, store.MessageFilter{WithPending: true})
		if err != nil || len(page.Messages) != 1 {
			t.Fatalf("%s: listed %d messages (%v), want the one sent", c.name, len(page.Messages), err)
		}
		camps, err := st.Campaigns(ctx, a, 0, 10)
		if err != nil || len(camps) != 1 || camps[0].Name != "spring" {
			t.Fatalf("%s: campaigns %+v (%v)", c.name, camps, err)
		}
		replicaReads, after := st.ReadsServed()
		if replicaReads != 0 || after-before != 2 {
			t.Fatalf("%s: served by the replica %d, by the primary %d; want 0 and 2", c.name, replicaReads, after-before)
		}
		if state, _ := st.ReplicaState(); state != store.ReplicaDown {
			t.Fatalf("%s: state %q, want %q", c.name, state, store.ReplicaDown)
		}
	}
}
