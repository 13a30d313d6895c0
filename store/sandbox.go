package store

import (
	"context"
	"time"
)

// JoinSandbox registers phone as a participant of the sandbox for the account whose join code
// is joinCode (matched exactly, else case-insensitively), joined at the given time; joining
// again refreshes the time (never moves it back). It returns the account id, or ErrNotFound
// when no account has that join code.
func (s *Store) JoinSandbox(ctx context.Context, joinCode, phone string, at time.Time) (int64, error) {
	var accountID int64
	err := s.db.GetContext(ctx, &accountID, `INSERT INTO sandbox_participants (account_id, phone, joined_at)
		SELECT id, $2, $3 FROM accounts WHERE lower(join_code) = lower($1) ORDER BY (join_code = $1) DESC, id LIMIT 1
		ON CONFLICT (account_id, phone) DO UPDATE SET joined_at = GREATEST(sandbox_participants.joined_at, EXCLUDED.joined_at)
		RETURNING account_id`, joinCode, phone, at.UTC())
	return accountID, translate(err)
}
