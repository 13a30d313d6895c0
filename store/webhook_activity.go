package store

import (
	"context"
	"time"
)

// EndpointActivity is what the dashboard shows of an endpoint's recent deliveries: the attempts
// since a time (a day on the pages) that succeeded and that failed, the deliveries still waiting
// for a retry, and when the next of them is due.
type EndpointActivity struct {
	EndpointID int64 `db:"endpoint_id"`
	// Delivered and Failed count the attempts since the time asked for.
	Delivered int64 `db:"delivered"`
	Failed    int64 `db:"failed"`
	// Retrying counts the pending deliveries that have failed at least once; NextRetryAt is the
	// earliest of their next attempts (nil when none waits).
	Retrying    int64      `db:"retrying"`
	NextRetryAt *time.Time `db:"next_retry_at"`
}

// EndpointsActivity returns the health of each of the account's endpoints, by endpoint id (every
// endpoint has an entry, zero when it had no attempt). It fails only when the database does.
func (s *Store) EndpointsActivity(ctx context.Context, accountID int64, since time.Time) (map[int64]EndpointActivity, error) {
	var rows []EndpointActivity
	err := s.db.SelectContext(ctx, &rows, `SELECT w.id AS endpoint_id,
			COALESCE(a.delivered, 0) AS delivered, COALESCE(a.failed, 0) AS failed,
			COALESCE(r.retrying, 0) AS retrying, r.next_retry_at
		FROM webhook_endpoints w
		LEFT JOIN (SELECT d.endpoint_id, count(*) FILTER (WHERE a.error = '') AS delivered, count(*) FILTER (WHERE a.error <> '') AS failed
			FROM webhook_attempts a JOIN webhook_deliveries d ON d.account_id = a.account_id AND d.id = a.delivery_id
			WHERE a.account_id = $1 AND a.attempted_at >= $2
			GROUP BY d.endpoint_id) a ON a.endpoint_id = w.id
		LEFT JOIN (SELECT endpoint_id, count(*) AS retrying, min(next_attempt_at) AS next_retry_at
			FROM webhook_deliveries WHERE account_id = $1 AND status = 'pending' AND attempts > 0
			GROUP BY endpoint_id) r ON r.endpoint_id = w.id
		WHERE w.account_id = $1`, accountID, since.UTC())
	if err != nil {
		return nil, translate(err)
	}
	out := make(map[int64]EndpointActivity, len(rows))
	for _, r := range rows {
		out[r.EndpointID] = r
	}
	return out, nil
}

// DeliveryAttempt returns the newest attempt of one of the account's deliveries; ErrNotFound
// when the delivery has none yet (or is not the account's).
func (s *Store) DeliveryAttempt(ctx context.Context, accountID int64, deliveryID string) (LoggedAttempt, error) {
	var a LoggedAttempt
	err := s.db.GetContext(ctx, &a, loggedAttemptSelect+loggedAttemptFrom+`
		WHERE a.account_id = $1 AND a.delivery_id = $2::uuid ORDER BY a.attempt DESC LIMIT 1`, accountID, deliveryID)
	return a, translate(err)
}

// TestDelivery returns the id of the delivery of one of the account's events to an endpoint;
// ErrNotFound when there is none.
func (s *Store) TestDelivery(ctx context.Context, accountID int64, eventID string, endpointID int64) (string, error) {
	var id string
	err := s.db.GetContext(ctx, &id, `SELECT id FROM webhook_deliveries WHERE account_id = $1 AND event_id = $2::uuid AND endpoint_id = $3`,
		accountID, eventID, endpointID)
	return id, translate(err)
}
