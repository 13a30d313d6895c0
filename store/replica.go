package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
)

// Reads that may lag (the dashboard's reports, lists and exports, the API's listings) go to a
// streaming replica when one is set and it is within its lag bound, else to the primary. Reads
// that must see the caller's own writes (a message right after its send, a key, a session)
// never do: they use s.db.

// Replica states, as ReplicaState reports them.
const (
	ReplicaNone    = "none"    // no replica is configured: every read goes to the primary
	ReplicaServing = "serving" // the replica serves the reads that may lag
	ReplicaLagging = "lagging" // it is behind by more than its bound: the primary serves them
	ReplicaDown    = "down"    // it does not answer: the primary serves them
)

// replicaCheckEvery is how long a replica's state is trusted before the next read checks it.
const replicaCheckEvery = time.Second

type replicaReads struct {
	db     *sqlx.DB // nil: none
	maxLag time.Duration
	now    func() time.Time

	mu      sync.Mutex // one check at a time; readers meanwhile use the last state
	checked time.Time
	state   atomic.Pointer[string]
	lag     atomic.Int64 // nanoseconds, as last measured

	servedReplica atomic.Int64
	servedPrimary atomic.Int64
}

// SetReplica makes db (a pool on a streaming replica of s's database) serve the reads that may
// lag while it answers and is at most maxLag behind. now is the clock (nil: time.Now). Call it
// before the store is used; s does not close db.
func (s *Store) SetReplica(db *sqlx.DB, maxLag time.Duration, now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	s.replica.db, s.replica.maxLag, s.replica.now = db, maxLag, now
	st := ReplicaDown
	s.replica.state.Store(&st)
}

// ReplicaState says which pool serves the reads that may lag: ReplicaNone, ReplicaServing,
// ReplicaLagging or ReplicaDown, with the lag last measured (0 when unknown).
func (s *Store) ReplicaState() (string, time.Duration) {
	if s.replica.db == nil {
		return ReplicaNone, 0
	}
	return *s.replica.state.Load(), time.Duration(s.replica.lag.Load())
}

// ReadsServed counts the reads that may lag by the pool that served them.
func (s *Store) ReadsServed() (replica, primary int64) {
	return s.replica.servedReplica.Load(), s.replica.servedPrimary.Load()
}

// CheckReplica measures the replica's lag now and updates its state; it returns the state.
func (s *Store) CheckReplica(ctx context.Context) string {
	r := &s.replica
	if r.db == nil {
		return ReplicaNone
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.check(ctx)
	return *r.state.Load()
}

// check measures the lag: the time since the last transaction replayed, or zero when the
// replica has replayed all the WAL it received (an idle primary sends none, and the replay
// timestamp then only ages). A server that is not in recovery is not a replica: down.
func (r *replicaReads) check(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	var row struct {
		Recovering bool    `db:"recovering"`
		Lag        float64 `db:"lag"`
	}
	err := r.db.GetContext(ctx, &row, `SELECT pg_is_in_recovery() AS recovering,
		CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
			ELSE COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp()), 0) END::float8 AS lag`)
	r.checked = r.now()
	st := ReplicaServing
	switch {
	case err != nil || !row.Recovering:
		st = ReplicaDown
		r.lag.Store(0)
	default:
		lag := time.Duration(row.Lag * float64(time.Second))
		r.lag.Store(int64(lag))
		if lag > r.maxLag {
			st = ReplicaLagging
		}
	}
	r.state.Store(&st)
}

// markDown records that the replica failed a read: the next read checks it again.
func (r *replicaReads) markDown() {
	st := ReplicaDown
	r.state.Store(&st)
	r.mu.Lock()
	r.checked = time.Time{}
	r.mu.Unlock()
}

// mayLag returns the replica's pool when it should serve a read that may lag, else nil (the
// primary). A stale state is checked by the one caller that gets the lock; the others go by
// the state as it was.
func (s *Store) mayLag(ctx context.Context) *sqlx.DB {
	r := &s.replica
	if r.db == nil {
		r.servedPrimary.Add(1)
		return nil
	}
	if r.mu.TryLock() {
		if r.now().Sub(r.checked) >= replicaCheckEvery {
			r.check(ctx)
		}
		r.mu.Unlock()
	}
	if *r.state.Load() != ReplicaServing {
		r.servedPrimary.Add(1)
		return nil
	}
	return r.db
}

// readMayLag runs a read that may lag: on the replica when it serves them, else (or when the
// replica fails it) on the primary with the prepared statement of q. one picks GetContext
// over SelectContext.
func (s *Store) readMayLag(ctx context.Context, one bool, dst any, q string, args ...any) error {
	if rdb := s.mayLag(ctx); rdb != nil {
		var err error
		if one {
			err = rdb.GetContext(ctx, dst, q, args...)
		} else {
			err = rdb.SelectContext(ctx, dst, q, args...)
		}
		if !s.replicaFailed(ctx, err) {
			s.replica.servedReplica.Add(1)
			return translate(err)
		}
	}
	st, err := s.prepared(ctx, q)
	if err != nil {
		return err
	}
	if one {
		return translate(st.GetContext(ctx, dst, args...))
	}
	return translate(st.SelectContext(ctx, dst, args...))
}

// selectMayLag is readMayLag for a statement that is not prepared on the primary either (its
// plan depends on its values).
func (s *Store) selectMayLag(ctx context.Context, dst any, q string, args ...any) error {
	if rdb := s.mayLag(ctx); rdb != nil {
		err := rdb.SelectContext(ctx, dst, q, args...)
		if !s.replicaFailed(ctx, err) {
			s.replica.servedReplica.Add(1)
			return translate(err)
		}
	}
	return translate(s.db.SelectContext(ctx, dst, q, args...))
}

// replicaFailed reports whether err is the replica's failure (not the caller's cancellation,
// not a row that is not there); the replica is then marked down and the primary serves the
// read.
func (s *Store) replicaFailed(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil || errors.Is(translate(err), ErrNotFound) {
		return false
	}
	s.replica.markDown()
	s.replica.servedPrimary.Add(1)
	return true
}
