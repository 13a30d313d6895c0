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

// SandboxClaim says whether a test send may go out for real through the sandbox number.
type SandboxClaim struct {
	Joined   bool `db:"joined"`    // the phone joined the account's sandbox at some point
	Active   bool `db:"active"`    // ... and its 24-hour window is still open
	Claimed  bool `db:"claimed"`   // a real delivery was counted: send it
	RealSent int  `db:"real_sent"` // real deliveries counted so far, this one included
}

// ClaimSandboxDelivery counts one real delivery to phone, a participant of the account's
// sandbox that joined after since, unless limit real deliveries were already counted. It
// reports what it found in any case and fails only when the database does.
func (s *Store) ClaimSandboxDelivery(ctx context.Context, accountID int64, phone string, since time.Time, limit int) (SandboxClaim, error) {
	var c SandboxClaim
	err := s.getPrepared(ctx, &c, `WITH p AS (
			SELECT real_sent, joined_at > $3::timestamptz AS active FROM sandbox_participants
			WHERE account_id = $1::bigint AND phone = $2::text
		), u AS (
			UPDATE sandbox_participants SET real_sent = real_sent + 1
			WHERE account_id = $1::bigint AND phone = $2::text AND joined_at > $3::timestamptz AND real_sent < $4::int
			RETURNING real_sent
		)
		SELECT EXISTS (SELECT 1 FROM p) AS joined, COALESCE((SELECT active FROM p), false) AS active,
			EXISTS (SELECT 1 FROM u) AS claimed, COALESCE((SELECT real_sent FROM u), (SELECT real_sent FROM p), 0) AS real_sent`,
		accountID, phone, since.UTC(), limit)
	return c, err
}
