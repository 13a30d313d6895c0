package store

import (
	"context"
	"encoding/json"
	"time"
)

// Event is an outbox row: a state change to tell the account's webhook endpoints about.
type Event struct {
	ID        string          `db:"id" json:"id"`
	AccountID int64           `db:"account_id" json:"account_id"`
	Type      string          `db:"type" json:"type"`
	Test      bool            `db:"test" json:"test"`
	Data      json.RawMessage `db:"data" json:"data"`
	CreatedAt time.Time       `db:"created_at" json:"created_at"`
}

const eventColumns = `id, account_id, type, test, data, created_at`

// EventsByAccount returns the account's events oldest first (at most limit), optionally of one
// type ("" for all).
func (s *Store) EventsByAccount(ctx context.Context, accountID int64, eventType string, limit int) ([]Event, error) {
	evs := []Event{}
	err := s.db.SelectContext(ctx, &evs, `SELECT `+eventColumns+` FROM events
		WHERE account_id = $1 AND ($2 = '' OR type = $2) ORDER BY created_at, id LIMIT $3`, accountID, eventType, limit)
	return evs, translate(err)
}
