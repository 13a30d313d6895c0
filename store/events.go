package store

import (
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
