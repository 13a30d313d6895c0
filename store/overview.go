package store

import (
	"context"
	"time"
)

// DaySummary is a workspace's recent activity for the dashboard's overview: the statuses of the
// messages sent since a time (from the hourly counters, so from the start of that hour) and the
// customers' messages received since then.
type DaySummary struct {
	StatusCounts
	Replies int64 `db:"replies"`
}

// DaySummary returns the account's activity since the time. It fails only when the database does.
func (s *Store) DaySummary(ctx context.Context, accountID int64, since time.Time) (DaySummary, error) {
	var d DaySummary
	err := s.db.GetContext(ctx, &d, `SELECT COALESCE(sum(k.pending), 0) AS pending, COALESCE(sum(k.sent), 0) AS sent,
			COALESCE(sum(k.delivered), 0) AS delivered, COALESCE(sum(k.read), 0) AS read, COALESCE(sum(k.failed), 0) AS failed,
			(SELECT count(*) FROM messages m WHERE m.account_id = $1 AND m.direction = 'in' AND m.created_at >= $2) AS replies
		FROM campaign_counters k WHERE k.account_id = $1 AND k.bucket >= date_trunc('hour', $2::timestamptz, 'UTC')`, accountID, since.UTC())
	return d, translate(err)
}
