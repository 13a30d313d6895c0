package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// Limits are the most of some things one account may have, so that no tenant's rows make the
// statements shared with other tenants slow (an event fans out to every endpoint).
type Limits struct {
	// WebhookEndpoints counts endpoints, enabled or not.
	WebhookEndpoints int
	// ActiveAPIKeys counts keys not revoked.
	ActiveAPIKeys int
}

// DefaultLimits are the limits of a Store until SetLimits.
var DefaultLimits = Limits{WebhookEndpoints: 10, ActiveAPIKeys: 50}

// SetLimits replaces the limits; a field that is not positive keeps its default. Call it
// before the store is shared.
func (s *Store) SetLimits(l Limits) {
	if l.WebhookEndpoints <= 0 {
		l.WebhookEndpoints = DefaultLimits.WebhookEndpoints
	}
	if l.ActiveAPIKeys <= 0 {
		l.ActiveAPIKeys = DefaultLimits.ActiveAPIKeys
	}
	s.limits = l
}

// Limits returns the limits in force.
func (s *Store) Limits() Limits {
	if s.limits == (Limits{}) {
		return DefaultLimits
	}
	return s.limits
}

// MaxListed is the most rows a list without pages returns (API keys, webhook endpoints, a
// user's workspaces); a caller that gets MaxListed rows says that the list may go on.
const MaxListed = 200

// ErrLimitReached is what a LimitError matches with errors.Is.
var ErrLimitReached = errors.New("limit reached")

// LimitError is returned by a create that would take an account past one of its Limits.
type LimitError struct {
	What string // "webhook endpoints" or "active API keys"
	Max  int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("the account already has %d %s, the most it may have", e.Max, e.What)
}

// Is makes errors.Is(err, ErrLimitReached) true.
func (e *LimitError) Is(target error) bool { return target == ErrLimitReached }

// withinLimit runs insert in a transaction after locking the account's row and counting its
// rows (countSQL, with the account id as $1): the lock makes the count and the insert one step
// for concurrent creates of the same account. It returns ErrNotFound when the account does not
// exist and a *LimitError when the count is already max.
func (s *Store) withinLimit(ctx context.Context, accountID int64, what string, max int, countSQL string, insert func(*sqlx.Tx) error) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return translate(err)
	}
	defer tx.Rollback()
	// NO KEY UPDATE: it does not wait for (or block) the key-share locks that inserts of the
	// account's other rows take.
	var id int64
	if err := tx.GetContext(ctx, &id, `SELECT id FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, accountID); err != nil {
		return translate(err)
	}
	var n int
	if err := tx.GetContext(ctx, &n, countSQL, accountID); err != nil {
		return translate(err)
	}
	if n >= max {
		return &LimitError{What: what, Max: max}
	}
	if err := insert(tx); err != nil {
		return translate(err)
	}
	return translate(tx.Commit())
}
