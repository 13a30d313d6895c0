package store

import (
	"context"
	"time"
)

// Session is a signed-in browser: the user, the workspace it acts in and the user's role
// there, read from the membership on every request.
type Session struct {
	UserID      int64  `db:"user_id"`
	AccountID   int64  `db:"account_id"`
	Role        string `db:"role"`
	Email       string `db:"email"`
	AccountName string `db:"account_name"`
	// AccountActive is false for a deactivated workspace: the dashboard is read-only there.
	AccountActive bool      `db:"account_active"`
	CreatedAt     time.Time `db:"created_at"`
	LastSeenAt    time.Time `db:"last_seen_at"`
}

// CreateSession stores the hash of a new session id for the user's membership of the
// account, and deletes the user's sessions that are past absolute (or idle for idle). It
// returns ErrNotFound when the user is not a member of the account.
func (s *Store) CreateSession(ctx context.Context, idHash []byte, accountID, userID int64, idle, absolute time.Duration) error {
	res, err := s.db.ExecContext(ctx, `WITH gone AS (
			DELETE FROM sessions WHERE user_id = $3
			  AND (last_seen_at < now() - $4 * interval '1 second' OR created_at < now() - $5 * interval '1 second')
		)
		INSERT INTO sessions (id_hash, account_id, user_id)
		SELECT $1, account_id, user_id FROM memberships WHERE account_id = $2 AND user_id = $3`, idHash, accountID, userID,
		idle.Seconds(), absolute.Seconds())
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// SessionByHash returns the live session with the id hash: seen within idle and created
// within absolute. It records the use (at most once a minute) and returns ErrNotFound for an
// unknown or expired session, or one whose membership is gone.
func (s *Store) SessionByHash(ctx context.Context, idHash []byte, idle, absolute time.Duration) (Session, error) {
	var se Session
	err := s.getPrepared(ctx, &se, `WITH t AS (
			UPDATE sessions SET last_seen_at = now()
			WHERE id_hash = $1 AND last_seen_at < now() - interval '1 minute'
			  AND last_seen_at > now() - $2 * interval '1 second' AND created_at > now() - $3 * interval '1 second'
			RETURNING id_hash
		)
		SELECT s.user_id, s.account_id, m.role, u.email, a.name AS account_name, a.active AS account_active, s.created_at, s.last_seen_at
		FROM sessions s
		JOIN memberships m ON m.account_id = s.account_id AND m.user_id = s.user_id
		JOIN users u ON u.id = s.user_id
		JOIN accounts a ON a.id = s.account_id
		WHERE s.id_hash = $1 AND s.last_seen_at > now() - $2 * interval '1 second'
		  AND s.created_at > now() - $3 * interval '1 second'`, idHash, idle.Seconds(), absolute.Seconds())
	return se, err
}

// DeleteSession removes a session (sign-out); deleting an unknown one is not an error.
func (s *Store) DeleteSession(ctx context.Context, idHash []byte) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE id_hash = $1`, idHash)
	return translate(err)
}

// DeleteExpiredSessions removes the sessions that are past their idle or absolute expiry as of
// now and returns how many it removed; it fails only when the database does.
func (s *Store) DeleteExpiredSessions(ctx context.Context, now time.Time, idle, absolute time.Duration) (int64, error) {
	return s.execCount(ctx, `DELETE FROM sessions WHERE last_seen_at < $1 OR created_at < $2`,
		now.Add(-idle), now.Add(-absolute))
}
