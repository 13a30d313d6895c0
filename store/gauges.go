package store

import "context"

// Backlog is what /metrics reports of the work waiting in the database, across every account
// (an operator's view; no tenant data leaves it).
type Backlog struct {
	// DueDeliveries: webhook deliveries pending and due now (claimed ones included until their
	// attempt is recorded).
	DueDeliveries int64 `db:"due_deliveries"`
	// OldestDueSeconds: how long the oldest due delivery has been due; 0 when none is.
	OldestDueSeconds float64 `db:"oldest_due_seconds"`
	// ParkedStatuses: status reports waiting for their send to be recorded.
	ParkedStatuses int64 `db:"parked_statuses"`
}

// Backlog counts the due webhook deliveries and the parked status reports. It fails when the
// database does.
func (s *Store) Backlog(ctx context.Context) (Backlog, error) {
	var b Backlog
	err := s.db.GetContext(ctx, &b, `
		SELECT
			(SELECT count(*) FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now()) AS due_deliveries,
			COALESCE((SELECT EXTRACT(EPOCH FROM now() - min(next_attempt_at))::float8 FROM webhook_deliveries
				WHERE status = 'pending' AND next_attempt_at <= now()), 0) AS oldest_due_seconds,
			(SELECT count(*) FROM parked_statuses) AS parked_statuses`)
	return b, translate(err)
}
