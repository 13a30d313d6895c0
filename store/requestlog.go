package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// LoggedAttempt is one row of the dashboard's request log: an attempt with its delivery's
// endpoint and event type.
type LoggedAttempt struct {
	ID             int64     `db:"id" json:"id"`
	DeliveryID     string    `db:"delivery_id" json:"delivery_id"`
	Attempt        int       `db:"attempt" json:"attempt"`
	AttemptedAt    time.Time `db:"attempted_at" json:"attempted_at"`
	StatusCode     *int      `db:"status_code" json:"status_code"`
	LatencyMS      int       `db:"latency_ms" json:"latency_ms"`
	Error          string    `db:"error" json:"error"`
	EndpointID     int64     `db:"endpoint_id" json:"endpoint_id"`
	URL            string    `db:"url" json:"url"`
	Event          string    `db:"event" json:"event"`
	DeliveryStatus string    `db:"delivery_status" json:"delivery_status"`
}

// AttemptDetail is one attempt with what was sent: the event (the body is rendered from it)
// and the start of the receiver's response.
type AttemptDetail struct {
	LoggedAttempt
	ResponseBody     string          `db:"response_body" json:"response_body"`
	DeliveryAttempts int             `db:"delivery_attempts" json:"delivery_attempts"`
	Ev               Event           `db:"-" json:"event_object"`
	EventID          string          `db:"event_id" json:"-"`
	EventTest        bool            `db:"event_test" json:"-"`
	EventData        json.RawMessage `db:"event_data" json:"-"`
	EventCreatedAt   time.Time       `db:"event_created_at" json:"-"`
}

// AttemptFilter narrows the request log. Zero fields do not filter.
type AttemptFilter struct {
	EndpointID int64
	Event      string
	// Outcome is "succeeded" (the attempt succeeded) or "failed".
	Outcome string
	// Before is the keyset cursor: attempts strictly older than (BeforeAt, BeforeID).
	BeforeAt time.Time
	BeforeID int64
}

const loggedAttemptSelect = `SELECT a.id, a.delivery_id, a.attempt, a.attempted_at, a.status_code, a.latency_ms, a.error,
		d.endpoint_id, w.url, e.type AS event, d.status AS delivery_status`

const loggedAttemptFrom = ` FROM webhook_attempts a
	JOIN webhook_deliveries d ON d.account_id = a.account_id AND d.id = a.delivery_id
	JOIN events e ON e.account_id = d.account_id AND e.id = d.event_id
	JOIN webhook_endpoints w ON w.account_id = d.account_id AND w.id = d.endpoint_id`

// RequestLog lists the account's attempts newest first (by attempt time, then id), at most
// limit, narrowed by f. Paging is by keyset: pass the last row's time and id as f.BeforeAt
// and f.BeforeID. An unknown outcome fails.
func (s *Store) RequestLog(ctx context.Context, accountID int64, f AttemptFilter, limit int) ([]LoggedAttempt, error) {
	conds := []string{"a.account_id = $1"}
	args := []any{accountID}
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, fmt.Sprintf(cond, len(args)))
	}
	if f.EndpointID != 0 {
		add("d.endpoint_id = $%d", f.EndpointID)
	}
	if f.Event != "" {
		add("e.type = $%d", f.Event)
	}
	switch f.Outcome {
	case "":
	case "succeeded":
		conds = append(conds, "a.error = ''")
	case "failed":
		conds = append(conds, "a.error <> ''")
	default:
		return nil, fmt.Errorf("unknown outcome %q (want succeeded or failed)", f.Outcome)
	}
	if !f.BeforeAt.IsZero() {
		args = append(args, f.BeforeAt, f.BeforeID)
		conds = append(conds, fmt.Sprintf("(a.attempted_at, a.id) < ($%d, $%d)", len(args)-1, len(args)))
	}
	args = append(args, limit)
	q := loggedAttemptSelect + loggedAttemptFrom + ` WHERE ` + strings.Join(conds, " AND ") +
		fmt.Sprintf(` ORDER BY a.attempted_at DESC, a.id DESC LIMIT $%d`, len(args))
	as := []LoggedAttempt{}
	return as, s.selectMayLag(ctx, &as, q, args...)
}

// AttemptByID returns one of the account's attempts with its event and response, or
// ErrNotFound.
func (s *Store) AttemptByID(ctx context.Context, accountID, attemptID int64) (AttemptDetail, error) {
	var a AttemptDetail
	err := s.db.GetContext(ctx, &a, loggedAttemptSelect+`, a.response_body, d.attempts AS delivery_attempts,
		e.id AS event_id, e.test AS event_test, e.data AS event_data, e.created_at AS event_created_at`+loggedAttemptFrom+`
		WHERE a.account_id = $1 AND a.id = $2`, accountID, attemptID)
	if err != nil {
		return a, translate(err)
	}
	a.Ev = Event{ID: a.EventID, AccountID: accountID, Type: a.Event, Test: a.EventTest, Data: a.EventData, CreatedAt: a.EventCreatedAt}
	return a, nil
}

// EventTypes lists the event types the request log can be filtered by.
var EventTypes = []string{"message.received", "message.sent", "message.status", "contact.created", EventWebhookTest}
