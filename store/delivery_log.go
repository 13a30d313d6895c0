package store

import (
	"context"
	"fmt"
	"time"

	"github.com/lib/pq"
)

// Delivery is one event × endpoint in the request log, with its attempts.
type Delivery struct {
	ID             string     `db:"id" json:"id"`
	AccountID      int64      `db:"account_id" json:"account_id"`
	EventID        string     `db:"event_id" json:"event_id"`
	Event          string     `db:"event" json:"event"`
	EndpointID     int64      `db:"endpoint_id" json:"endpoint_id"`
	URL            string     `db:"url" json:"url"`
	Status         string     `db:"status" json:"status"`
	Attempts       int        `db:"attempts" json:"attempts"`
	NextAttemptAt  *time.Time `db:"next_attempt_at" json:"next_attempt_at,omitempty"`
	LastStatusCode *int       `db:"last_status_code" json:"last_status_code,omitempty"`
	LastError      string     `db:"last_error" json:"last_error,omitempty"`
	CreatedAt      time.Time  `db:"created_at" json:"created_at"`
	CompletedAt    *time.Time `db:"completed_at" json:"completed_at,omitempty"`
	// Log is the delivery's attempts, oldest first.
	Log []DeliveryAttempt `db:"-" json:"log"`
}

// DeliveryAttempt is one row of the request log.
type DeliveryAttempt struct {
	DeliveryID   string    `db:"delivery_id" json:"-"`
	Attempt      int       `db:"attempt" json:"attempt"`
	AttemptedAt  time.Time `db:"attempted_at" json:"attempted_at"`
	StatusCode   *int      `db:"status_code" json:"status_code"`
	LatencyMS    int       `db:"latency_ms" json:"latency_ms"`
	Error        string    `db:"error" json:"error,omitempty"`
	ResponseBody string    `db:"response_body" json:"response_body"`
}

const deliveryColumns = `d.id, d.account_id, d.event_id, e.type AS event, d.endpoint_id, w.url, d.status, d.attempts,
	CASE WHEN d.status = 'pending' THEN d.next_attempt_at END AS next_attempt_at,
	d.last_status_code, d.last_error, d.created_at, d.completed_at`

const deliveryFrom = ` FROM webhook_deliveries d
	JOIN events e ON e.account_id = d.account_id AND e.id = d.event_id
	JOIN webhook_endpoints w ON w.account_id = d.account_id AND w.id = d.endpoint_id`

// DeliveriesByAccount lists the account's deliveries, newest first (by id: a UUIDv7 is
// time-ordered), at most limit (1..1000), each with its attempt log. status filters: "" (all),
// "pending", "succeeded", "dead", or "failed" (dead, or pending after a failed attempt). An
// unknown status fails.
func (s *Store) DeliveriesByAccount(ctx context.Context, accountID int64, status string, limit int) ([]Delivery, error) {
	var cond string
	switch status {
	case "":
		cond = "true"
	case DeliveryPending, DeliverySucceeded, DeliveryDead:
		cond = "d.status = $3"
	case DeliveryFailed:
		cond = "(d.status = 'dead' OR (d.status = 'pending' AND d.last_error <> '')) AND $3 <> ''"
	default:
		return nil, fmt.Errorf("unknown delivery status %q (want pending, succeeded, dead or failed)", status)
	}
	if limit < 1 || limit > 1000 {
		limit = 50
	}
	ds := []Delivery{}
	q := `SELECT ` + deliveryColumns + deliveryFrom + ` WHERE d.account_id = $1 AND ` + cond + `
		ORDER BY d.id DESC LIMIT $2`
	args := []any{accountID, limit}
	if status != "" {
		args = append(args, status)
	}
	if err := s.db.SelectContext(ctx, &ds, q, args...); err != nil {
		return nil, translate(err)
	}
	if err := s.attachLog(ctx, accountID, ds); err != nil {
		return nil, err
	}
	return ds, nil
}

// DeliveryByID returns one of the account's deliveries with its attempt log, or ErrNotFound.
func (s *Store) DeliveryByID(ctx context.Context, accountID int64, deliveryID string) (Delivery, error) {
	var d Delivery
	if !isUUID(deliveryID) {
		return d, ErrNotFound
	}
	if err := s.db.GetContext(ctx, &d, `SELECT `+deliveryColumns+deliveryFrom+` WHERE d.account_id = $1 AND d.id = $2`,
		accountID, deliveryID); err != nil {
		return d, translate(err)
	}
	ds := []Delivery{d}
	if err := s.attachLog(ctx, accountID, ds); err != nil {
		return d, err
	}
	return ds[0], nil
}

// attachLog reads the attempts of ds in one query.
func (s *Store) attachLog(ctx context.Context, accountID int64, ds []Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	ids := make([]string, len(ds))
	idx := make(map[string]int, len(ds))
	for i, d := range ds {
		ids[i], idx[d.ID] = d.ID, i
		ds[i].Log = []DeliveryAttempt{}
	}
	var as []DeliveryAttempt
	if err := s.db.SelectContext(ctx, &as, `SELECT delivery_id, attempt, attempted_at, status_code, latency_ms, error, response_body
		FROM webhook_attempts WHERE account_id = $1 AND delivery_id = ANY($2::uuid[]) ORDER BY attempted_at, id`,
		accountID, pq.StringArray(ids)); err != nil {
		return translate(err)
	}
	for _, a := range as {
		i := idx[a.DeliveryID]
		ds[i].Log = append(ds[i].Log, a)
	}
	return nil
}

// DeliveryAccount returns the account that owns a delivery: the operator's entry point (the
// admin commands name a delivery by id alone). ErrNotFound when there is no such delivery.
func (s *Store) DeliveryAccount(ctx context.Context, deliveryID string) (int64, error) {
	var accountID int64
	if !isUUID(deliveryID) {
		return 0, ErrNotFound
	}
	err := s.db.GetContext(ctx, &accountID, `SELECT account_id FROM webhook_deliveries WHERE id = $1`, deliveryID)
	return accountID, translate(err)
}

// Redeliver makes one of the account's deliveries due now, whatever its status, and wakes the
// dispatchers. A succeeded or dead delivery becomes pending again and keeps its attempt count:
// the redelivery is attempt attempts+1, and a delivery that had used all its attempts is dead
// again after one more failure. It returns ErrNotFound for an unknown delivery,
// ErrEndpointDisabled when its endpoint is disabled (enable it first), and ErrInFlight when an
// attempt is being made right now.
func (s *Store) Redeliver(ctx context.Context, accountID int64, deliveryID string) (Delivery, error) {
	if !isUUID(deliveryID) {
		return Delivery{}, ErrNotFound
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return Delivery{}, translate(err)
	}
	defer tx.Rollback()
	var row struct {
		Enabled  bool `db:"enabled"`
		InFlight bool `db:"in_flight"`
	}
	err = tx.GetContext(ctx, &row, `SELECT w.enabled,
			d.status = 'pending' AND d.attempts > 0 AND d.next_attempt_at > now()
			AND NOT EXISTS (SELECT 1 FROM webhook_attempts a
				WHERE a.account_id = d.account_id AND a.delivery_id = d.id AND a.attempt = d.attempts) AS in_flight
		FROM webhook_deliveries d JOIN webhook_endpoints w ON w.account_id = d.account_id AND w.id = d.endpoint_id
		WHERE d.account_id = $1 AND d.id = $2
		FOR UPDATE OF d`, accountID, deliveryID)
	if err != nil {
		return Delivery{}, translate(err)
	}
	switch {
	case !row.Enabled:
		return Delivery{}, ErrEndpointDisabled
	case row.InFlight:
		return Delivery{}, ErrInFlight
	}
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), completed_at = NULL
		WHERE account_id = $1 AND id = $2`, accountID, deliveryID); err != nil {
		return Delivery{}, translate(err)
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_notify($1, '')`, DeliveriesChannel); err != nil {
		return Delivery{}, translate(err)
	}
	if err := tx.Commit(); err != nil {
		return Delivery{}, translate(err)
	}
	return s.DeliveryByID(ctx, accountID, deliveryID)
}

// isUUID reports whether s has the textual shape of a UUID, so a malformed id is "not found"
// rather than a driver error.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}
