package servertest

import (
	"context"
	"testing"

	"gateway/store"
)

// Events returns the account's events oldest first (at most limit), of one type or of all
// ("" for all), failing t when the read fails. It reads the events table through the database
// handle: the product reads events through deliveries and listings, not with this statement.
func (e *Env) Events(t testing.TB, accountID int64, eventType string, limit int) []store.Event {
	t.Helper()
	evs := []store.Event{}
	if err := e.Store.DB().SelectContext(context.Background(), &evs, `SELECT id, account_id, type, test, data, created_at
		FROM events WHERE account_id = $1 AND ($2 = '' OR type = $2) ORDER BY created_at, id LIMIT $3`,
		accountID, eventType, limit); err != nil {
		t.Fatal(err)
	}
	return evs
}
