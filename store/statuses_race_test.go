package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"gateway/server/servertest/wait"
	"gateway/store"
)

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
