package store

import (
	"context"
	"time"
)

// A broadcast's progress read from the counters migration 000048 keeps as its recipients and
// their messages change (broadcast_counts, broadcast_pace): a few rows per broadcast, however
// many recipients it has.

// The counters of a broadcast's sent recipients by their message's status.
const (
	countedDelivered = "delivered"
	countedRead      = "read"
)

// BroadcastProgress is a broadcast's recipients by state, with those sent split by what the
// platform reported of their messages, and the calls of the last minute.
type BroadcastProgress struct {
	ByState   map[string]int // recipient states
	Delivered int            // recipients whose message was delivered (not read)
	Read      int            // recipients whose message was read
	Recent    int            // recipients called since the since of the call (to the second)
}

// broadcastCounters returns the broadcast's counters summed over their slots: recipient states
// and "delivered" / "read"; those at zero are absent.
func (s *Store) broadcastCounters(ctx context.Context, accountID, id int64) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT state, sum(n) FROM broadcast_counts
		WHERE account_id = $1 AND broadcast_id = $2 GROUP BY state HAVING sum(n) <> 0`, accountID, id)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, translate(err)
		}
		out[st] = n
	}
	return out, translate(rows.Err())
}

// BroadcastProgressOf returns the broadcast's progress from its counters. A live broadcast's
// delivered and read are its messages' statuses; a test-mode broadcast's are simulated as its
// test messages are (delivered 2 s after the send, read after 5 s), from the seconds its
// recipients were sent in.
func (s *Store) BroadcastProgressOf(ctx context.Context, accountID, broadcastID int64, test bool, since, now time.Time) (BroadcastProgress, error) {
	c, err := s.broadcastCounters(ctx, accountID, broadcastID)
	if err != nil {
		return BroadcastProgress{}, err
	}
	p := BroadcastProgress{ByState: c, Delivered: c[countedDelivered], Read: c[countedRead]}
	delete(c, countedDelivered)
	delete(c, countedRead)
	var pace struct {
		Called   int `db:"called"`
		Within5s int `db:"within5"`
		Within2s int `db:"within2"`
	}
	if err := s.db.GetContext(ctx, &pace, `SELECT
			coalesce(sum(called) FILTER (WHERE at >= date_trunc('second', $3::timestamptz)), 0) AS called,
			coalesce(sum(sent) FILTER (WHERE at > $4::timestamptz - interval '5 seconds'), 0) AS within5,
			coalesce(sum(sent) FILTER (WHERE at > $4::timestamptz - interval '2 seconds'), 0) AS within2
		FROM broadcast_pace WHERE account_id = $1 AND broadcast_id = $2
			AND at >= least(date_trunc('second', $3::timestamptz), $4::timestamptz - interval '5 seconds')`,
		accountID, broadcastID, since, now); err != nil {
		return p, translate(err)
	}
	p.Recent = pace.Called
	if test {
		p.Delivered = pace.Within5s - pace.Within2s
		p.Read = c[RecipientSent] - pace.Within5s
	}
	return p, nil
}
