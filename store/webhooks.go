package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// WebhookEndpoint is a URL an account registered to receive its events. The signing secret is
// stored sealed (AES-256-GCM) and is never part of this struct: it is shown once, by the
// operator command that creates the endpoint, and read back only by the dispatcher's claim.
type WebhookEndpoint struct {
	ID        int64  `db:"id" json:"id"`
	AccountID int64  `db:"account_id" json:"account_id"`
	URL       string `db:"url" json:"url"`
	Enabled   bool   `db:"enabled" json:"enabled"`
	// DisabledReason says why a disabled endpoint was disabled: "gone" (it answered 410),
	// "failing" (every attempt failed for DisableFailingAfter) or "operator".
	DisabledReason string `db:"disabled_reason" json:"disabled_reason,omitempty"`
	// FailingSince is the time of the first failed attempt since the last success.
	FailingSince *time.Time `db:"failing_since" json:"failing_since,omitempty"`
	CreatedAt    time.Time  `db:"created_at" json:"created_at"`
	// EventTypes are the event types the endpoint receives (SetWebhookEndpointEventTypes);
	// a new endpoint receives V1EventTypes.
	EventTypes pq.StringArray `db:"event_types" json:"-"`
}

// Reasons an endpoint is disabled (WebhookEndpoint.DisabledReason).
const (
	DisabledGone     = "gone"
	DisabledFailing  = "failing"
	DisabledOperator = "operator"
)

const webhookEndpointColumns = `id, account_id, url, enabled, disabled_reason, failing_since, created_at, event_types`

// V1EventTypes are the event types that existed before endpoints chose theirs: what an
// endpoint receives unless it chooses (the default of webhook_endpoints.event_types).
var V1EventTypes = []string{EventMessageReceived, "message.sent", "message.status", EventContactCreated, EventWebhookTest}

// EventTypes are every event type, in the order the API lists them: V1EventTypes, then the
// opt-in ones. The request log can be filtered by each.
var EventTypes = append(slices.Clip(V1EventTypes), EventMessageReceivedWithoutNumber, EventMessageEdited,
	EventMessageDeleted, EventContactCreatedWithoutNumber, EventContactUpdated, EventBroadcastPaused, EventBroadcastCompleted)

// SetWebhookEndpointEventTypes sets the event types the endpoint receives from now on (events
// already fanned out keep their deliveries). It fails with an *EventTypesError, writing
// nothing, for an empty set or an unknown type, and returns ErrNotFound when the account has
// no such endpoint.
func (s *Store) SetWebhookEndpointEventTypes(ctx context.Context, accountID, endpointID int64, types []string) (WebhookEndpoint, error) {
	if len(types) == 0 {
		return WebhookEndpoint{}, &EventTypesError{}
	}
	set := make([]string, 0, len(types))
	for _, t := range types {
		if !slices.Contains(EventTypes, t) {
			return WebhookEndpoint{}, &EventTypesError{Unknown: t}
		}
		if !slices.Contains(set, t) {
			set = append(set, t)
		}
	}
	var w WebhookEndpoint
	err := s.db.GetContext(ctx, &w, `UPDATE webhook_endpoints SET event_types = $3 WHERE account_id = $1 AND id = $2
		RETURNING `+webhookEndpointColumns, accountID, endpointID, pq.StringArray(set))
	return w, translate(err)
}

// EventTypesError is a refused set of event types: empty, or naming an unknown type.
type EventTypesError struct {
	Unknown string // the unknown type; "" when the set was empty
}

func (e *EventTypesError) Error() string {
	if e.Unknown == "" {
		return "an endpoint must receive at least one event type"
	}
	return fmt.Sprintf("unknown event type %q (known: %s)", e.Unknown, strings.Join(EventTypes, ", "))
}

// MissedEvents returns, per event type, how many events of the account the endpoint was not
// sent because it does not receive that type (counted by the fan-out while it was enabled;
// types never missed are absent). It returns an empty map for an endpoint that missed
// nothing or that the account does not have.
func (s *Store) MissedEvents(ctx context.Context, accountID, endpointID int64) (map[string]int64, error) {
	var rows []struct {
		Type string `db:"type"`
		N    int64  `db:"n"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT type, sum(n)::bigint AS n FROM webhook_missed_counts
		WHERE account_id = $1 AND endpoint_id = $2 GROUP BY type`, accountID, endpointID); err != nil {
		return nil, translate(err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Type] = r.N
	}
	return out, nil
}

// CreateWebhookEndpoint registers url for the account with the given signing secret, which is
// sealed before it is stored. The URL is stored as given: validating it is the caller's job.
// It returns ErrNotFound when the account does not exist and a *LimitError (ErrLimitReached)
// when the account already has Limits().WebhookEndpoints endpoints.
func (s *Store) CreateWebhookEndpoint(ctx context.Context, accountID int64, url, secret string) (WebhookEndpoint, error) {
	// The id comes first: the sealed secret is bound to it.
	var id int64
	if err := s.db.GetContext(ctx, &id, `SELECT nextval(pg_get_serial_sequence('webhook_endpoints', 'id'))`); err != nil {
		return WebhookEndpoint{}, translate(err)
	}
	sealed, err := s.seal(secret, secretRow{table: "webhook_endpoints", account: accountID, id: id})
	if err != nil {
		return WebhookEndpoint{}, err
	}
	var w WebhookEndpoint
	err = s.withinLimit(ctx, accountID, "webhook endpoints", s.Limits().WebhookEndpoints,
		`SELECT count(*) FROM webhook_endpoints WHERE account_id = $1`, func(tx *sqlx.Tx) error {
			return tx.GetContext(ctx, &w, `INSERT INTO webhook_endpoints (id, account_id, url, secret)
				VALUES ($4, $1, $2, $3) RETURNING `+webhookEndpointColumns, accountID, url, sealed, id)
		})
	return w, err
}

// WebhookEndpointsByAccount lists the account's endpoints, enabled or not, oldest first, at
// most MaxListed. An account without endpoints yields an empty list, not an error.
func (s *Store) WebhookEndpointsByAccount(ctx context.Context, accountID int64) ([]WebhookEndpoint, error) {
	ws := []WebhookEndpoint{}
	err := s.db.SelectContext(ctx, &ws, `SELECT `+webhookEndpointColumns+` FROM webhook_endpoints
		WHERE account_id = $1 ORDER BY id LIMIT $2`, accountID, MaxListed)
	return ws, translate(err)
}

// WebhookEndpointAccount returns the account that owns an endpoint. It is the operator's entry
// point (the admin commands name an endpoint by id alone); every later statement is scoped to
// the account it returns. ErrNotFound when no endpoint has that id.
func (s *Store) WebhookEndpointAccount(ctx context.Context, endpointID int64) (int64, error) {
	var accountID int64
	err := s.db.GetContext(ctx, &accountID, `SELECT account_id FROM webhook_endpoints WHERE id = $1`, endpointID)
	return accountID, translate(err)
}

// DeleteWebhookEndpoint removes one of the account's endpoints together with its deliveries
// and their attempt log (the foreign keys cascade). A claim in flight for it finishes harmlessly:
// its result finds no row to record. It returns the deleted endpoint, or ErrNotFound.
func (s *Store) DeleteWebhookEndpoint(ctx context.Context, accountID, endpointID int64) (WebhookEndpoint, error) {
	var w WebhookEndpoint
	err := s.db.GetContext(ctx, &w, `DELETE FROM webhook_endpoints WHERE account_id = $1 AND id = $2
		RETURNING `+webhookEndpointColumns, accountID, endpointID)
	return w, translate(err)
}

// SetWebhookEndpointEnabled enables an endpoint (clearing its disabled reason and failure
// streak), or disables it with reason. Events created while an endpoint is disabled are not
// delivered to it, and its pending deliveries die when they come due. It returns the updated
// endpoint, or ErrNotFound.
func (s *Store) SetWebhookEndpointEnabled(ctx context.Context, accountID, endpointID int64, enabled bool, reason string) (WebhookEndpoint, error) {
	if enabled {
		reason = ""
	}
	var w WebhookEndpoint
	err := s.db.GetContext(ctx, &w, `UPDATE webhook_endpoints
		SET enabled = $3, disabled_reason = $4,
			failing_since = CASE WHEN $3 THEN NULL ELSE failing_since END
		WHERE account_id = $1 AND id = $2
		RETURNING `+webhookEndpointColumns, accountID, endpointID, enabled, reason)
	return w, translate(err)
}
