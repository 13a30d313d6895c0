package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// EndpointStatus is an endpoint with its health as the dashboard shows it. Both figures are
// read by index ranges bounded by the endpoint's failure streak (the last success comes before
// failing_since; the failures counted come after it), so they stay cheap with millions of
// attempts.
type EndpointStatus struct {
	WebhookEndpoint
	// LastSuccessAt is the newest successful attempt, nil when none is in the log.
	LastSuccessAt *time.Time `db:"last_success_at" json:"last_success_at,omitempty"`
	// ConsecutiveFailures counts the failed attempts since the last success (at most 1000).
	ConsecutiveFailures int `db:"consecutive_failures" json:"consecutive_failures"`
	// PreviousSecretExpiresAt is when the secret replaced by a rotation stops signing; nil
	// when no overlap runs.
	PreviousSecretExpiresAt *time.Time `db:"previous_secret_expires_at" json:"previous_secret_expires_at,omitempty"`
}

const endpointStatusSQL = `SELECT w.id, w.account_id, w.url, w.enabled, w.disabled_reason, w.failing_since, w.created_at, w.event_types,
		CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_expires_at END AS previous_secret_expires_at,
		ls.at AS last_success_at,
		CASE WHEN w.failing_since IS NULL THEN 0 ELSE (SELECT count(*) FROM (SELECT 1 FROM webhook_attempts a
			JOIN webhook_deliveries d ON d.account_id = a.account_id AND d.id = a.delivery_id
			WHERE a.account_id = w.account_id AND d.endpoint_id = w.id AND a.error <> ''
			  AND a.attempted_at >= GREATEST(w.failing_since, ls.at + interval '1 microsecond')
			ORDER BY a.attempted_at DESC, a.id DESC LIMIT 1000) f) END AS consecutive_failures
	FROM webhook_endpoints w
	LEFT JOIN LATERAL (SELECT a.attempted_at AS at FROM webhook_attempts a
		JOIN webhook_deliveries d ON d.account_id = a.account_id AND d.id = a.delivery_id
		WHERE a.account_id = w.account_id AND d.endpoint_id = w.id AND a.error = ''
		  AND a.attempted_at < COALESCE(w.failing_since, 'infinity') AND a.attempted_at >= w.created_at - interval '1 minute'
		ORDER BY a.attempted_at DESC LIMIT 1) ls ON true`

// EndpointStatuses lists the account's endpoints with their health, oldest first, at most
// MaxListed.
func (s *Store) EndpointStatuses(ctx context.Context, accountID int64) ([]EndpointStatus, error) {
	es := []EndpointStatus{}
	err := s.db.SelectContext(ctx, &es, endpointStatusSQL+` WHERE w.account_id = $1 ORDER BY w.id LIMIT $2`, accountID, MaxListed)
	return es, translate(err)
}

// EndpointStatusByID returns one of the account's endpoints with its health, or ErrNotFound.
func (s *Store) EndpointStatusByID(ctx context.Context, accountID, endpointID int64) (EndpointStatus, error) {
	var e EndpointStatus
	err := s.db.GetContext(ctx, &e, endpointStatusSQL+` WHERE w.account_id = $1 AND w.id = $2`, accountID, endpointID)
	return e, translate(err)
}

// ErrRotationInProgress is returned (as a *RotationInProgressError) by RotateWebhookSecret
// while the overlap of the endpoint's last rotation runs.
var ErrRotationInProgress = fmt.Errorf("%w: a secret rotation is in progress", ErrConflict)

// RotationInProgressError says until when the running overlap lasts.
type RotationInProgressError struct {
	Until time.Time
}

func (e *RotationInProgressError) Error() string {
	return fmt.Sprintf("a secret rotation is in progress: the previous secret signs until %s; rotate again after that",
		e.Until.UTC().Format(time.RFC3339))
}

func (e *RotationInProgressError) Unwrap() error { return ErrRotationInProgress }

// RotateWebhookSecret replaces an endpoint's signing secret with secret (sealed). The old
// secret keeps signing, beside the new one, for overlap. A rotation while the previous
// overlap still runs is refused with a *RotationInProgressError: there is room for one
// previous secret, and replacing it would end the overlap promised for it at once. It
// returns the endpoint, or ErrNotFound.
func (s *Store) RotateWebhookSecret(ctx context.Context, accountID, endpointID int64, secret string, overlap time.Duration) (WebhookEndpoint, error) {
	sealed, err := s.seal(secret, secretRow{table: "webhook_endpoints", account: accountID, id: endpointID})
	if err != nil {
		return WebhookEndpoint{}, err
	}
	// Two tries: the overlap may end between the update and the look at why it did nothing.
	for range 2 {
		var w WebhookEndpoint
		err = s.db.GetContext(ctx, &w, `UPDATE webhook_endpoints
			SET previous_secret = secret, previous_secret_expires_at = now() + $4 * interval '1 second', secret = $3
			WHERE account_id = $1 AND id = $2 AND (previous_secret_expires_at IS NULL OR previous_secret_expires_at <= now())
			RETURNING `+webhookEndpointColumns, accountID, endpointID, sealed, overlap.Seconds())
		if !errors.Is(err, sql.ErrNoRows) {
			return w, translate(err)
		}
		var until sql.NullTime
		err = s.db.GetContext(ctx, &until, `SELECT CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END
			FROM webhook_endpoints WHERE account_id = $1 AND id = $2`, accountID, endpointID)
		if err != nil {
			return WebhookEndpoint{}, translate(err)
		}
		if until.Valid {
			return WebhookEndpoint{}, &RotationInProgressError{Until: until.Time}
		}
	}
	return WebhookEndpoint{}, fmt.Errorf("rotate the secret of webhook endpoint %d: the endpoint changed during the rotation", endpointID)
}

// EventWebhookTest is the event sent by "Send test event".
const EventWebhookTest = "webhook.test"

// SendTestEvent writes a webhook.test event with data for one of the account's endpoints
// only. It returns ErrNotFound for an unknown endpoint and ErrEndpointDisabled for a
// disabled one.
func (s *Store) SendTestEvent(ctx context.Context, accountID, endpointID int64, data json.RawMessage) (Event, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return Event{}, translate(err)
	}
	defer tx.Rollback()
	var enabled bool
	if err := tx.GetContext(ctx, &enabled, `SELECT enabled FROM webhook_endpoints WHERE account_id = $1 AND id = $2 FOR SHARE`,
		accountID, endpointID); err != nil {
		return Event{}, translate(err)
	}
	if !enabled {
		return Event{}, ErrEndpointDisabled
	}
	var e Event
	if err := tx.GetContext(ctx, &e, `INSERT INTO events (account_id, type, data) VALUES ($1, $2, $3) RETURNING `+eventColumns,
		accountID, EventWebhookTest, []byte(data)); err != nil {
		return Event{}, translate(err)
	}
	// The fan-out trigger made a delivery for every enabled endpoint: keep this one's only.
	if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE account_id = $1 AND event_id = $2 AND endpoint_id <> $3`,
		accountID, e.ID, endpointID); err != nil {
		return Event{}, translate(err)
	}
	if err := tx.Commit(); err != nil {
		return Event{}, translate(err)
	}
	s.eventsWritten()
	return e, nil
}
