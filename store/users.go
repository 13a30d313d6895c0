package store

import (
	"context"
	"fmt"
	"time"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
)

// Roles of a user in a workspace (membership).
const (
	RoleOwner     = "owner"
	RoleDeveloper = "developer"
)

// ErrEmailTaken is returned (wrapping ErrConflict) when a user with the email (compared
// case-insensitively) already exists.
var ErrEmailTaken = fmt.Errorf("%w: a user with this email exists", ErrConflict)

// User is a person who signs in to the dashboard. PasswordHash is an encoded argon2id hash.
type User struct {
	ID           int64     `db:"id" json:"id"`
	Email        string    `db:"email" json:"email"`
	PasswordHash string    `db:"password_hash" json:"-"`
	CreatedAt    time.Time `db:"created_at" json:"created_at"`
}

// Membership is a user's role in one account.
type Membership struct {
	AccountID   int64     `db:"account_id" json:"account_id"`
	UserID      int64     `db:"user_id" json:"user_id"`
	Role        string    `db:"role" json:"role"`
	AccountName string    `db:"account_name" json:"account_name"`
	CreatedAt   time.Time `db:"created_at" json:"created_at"`
}

const userColumns = `id, email, password_hash, created_at`

// emailTaken translates a unique violation of users_email_idx into ErrEmailTaken.
func emailTaken(err error) error {
	if e := pq.As(err, pqerror.UniqueViolation); e != nil && e.Constraint == "users_email_idx" {
		return ErrEmailTaken
	}
	return translate(err)
}

// SignUp creates a workspace (an account with the sandbox join code), a user and the user's
// owner membership in one transaction. It returns ErrEmailTaken when the email is in use and
// ErrConflict when the join code is taken (the caller retries with another).
func (s *Store) SignUp(ctx context.Context, workspace, email, passwordHash, joinCode string) (Account, User, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return Account{}, User{}, translate(err)
	}
	defer tx.Rollback()
	var u User
	if err := tx.GetContext(ctx, &u, `INSERT INTO users (email, password_hash) VALUES ($1, $2) RETURNING `+userColumns,
		email, passwordHash); err != nil {
		return Account{}, User{}, emailTaken(err)
	}
	var a Account
	if err := tx.GetContext(ctx, &a, `INSERT INTO accounts (name, email, join_code) VALUES ($1, $2, $3) RETURNING `+accountColumns,
		workspace, email, joinCode); err != nil {
		return Account{}, User{}, translate(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO memberships (account_id, user_id, role) VALUES ($1, $2, 'owner')`, a.ID, u.ID); err != nil {
		return Account{}, User{}, translate(err)
	}
	return a, u, translate(tx.Commit())
}

// CreateUser adds a user with a membership of the account in the role. It returns
// ErrEmailTaken when the email is in use and ErrNotFound when the account does not exist.
func (s *Store) CreateUser(ctx context.Context, accountID int64, email, passwordHash, role string) (User, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return User{}, translate(err)
	}
	defer tx.Rollback()
	var exists bool
	if err := tx.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM accounts WHERE id = $1)`, accountID); err != nil {
		return User{}, translate(err)
	}
	if !exists {
		return User{}, ErrNotFound
	}
	var u User
	if err := tx.GetContext(ctx, &u, `INSERT INTO users (email, password_hash) VALUES ($1, $2) RETURNING `+userColumns,
		email, passwordHash); err != nil {
		return User{}, emailTaken(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO memberships (account_id, user_id, role) VALUES ($1, $2, $3)`, accountID, u.ID, role); err != nil {
		return User{}, translate(err)
	}
	return u, translate(tx.Commit())
}

// UserByEmail returns the user with the email (case-insensitive), or ErrNotFound.
func (s *Store) UserByEmail(ctx context.Context, email string) (User, error) {
	var u User
	err := s.db.GetContext(ctx, &u, `SELECT `+userColumns+` FROM users WHERE lower(email) = lower($1)`, email)
	return u, translate(err)
}

// UserByID returns the user, or ErrNotFound.
func (s *Store) UserByID(ctx context.Context, userID int64) (User, error) {
	var u User
	err := s.db.GetContext(ctx, &u, `SELECT `+userColumns+` FROM users WHERE id = $1`, userID)
	return u, translate(err)
}

// SetUserPassword replaces a user's password hash and signs the user out everywhere (deletes
// every session), except the session whose hash is keep (nil: none kept). ErrNotFound when the
// user does not exist.
func (s *Store) SetUserPassword(ctx context.Context, userID int64, passwordHash string, keep []byte) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return translate(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = $2 WHERE id = $1`, userID, passwordHash)
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1 AND id_hash IS DISTINCT FROM $2`, userID, keep); err != nil {
		return translate(err)
	}
	return translate(tx.Commit())
}

// MembershipsByUser lists the user's workspaces, oldest membership first (empty when none),
// at most MaxListed.
func (s *Store) MembershipsByUser(ctx context.Context, userID int64) ([]Membership, error) {
	ms := []Membership{}
	err := s.db.SelectContext(ctx, &ms, `SELECT m.account_id, m.user_id, m.role, a.name AS account_name, m.created_at
		FROM memberships m JOIN accounts a ON a.id = m.account_id WHERE m.user_id = $1 ORDER BY m.created_at, m.account_id
		LIMIT $2`, userID, MaxListed)
	return ms, translate(err)
}

// Throttles (sign-in, sign-up): attempts are counted per key in a fixed window, in
// PostgreSQL so that every replica sees the same counts. An attempt is counted before it is
// checked, in the statement that returns the count, so concurrent attempts cannot all pass
// the check; one that is not to count after all (refused by the throttle, or a sign-in that
// succeeded) is uncounted.

// CountAttempt counts one attempt for each key, starting a new window for a key whose window
// has ended, and returns each key's count including this attempt. It also deletes up to 100
// other keys whose window has ended.
func (s *Store) CountAttempt(ctx context.Context, keys []string, window time.Duration) (map[string]int, error) {
	var rows []struct {
		Key      string `db:"key"`
		Failures int    `db:"failures"`
	}
	err := s.db.SelectContext(ctx, &rows, `WITH stale AS (
			DELETE FROM signin_throttle WHERE key IN (SELECT key FROM signin_throttle
				WHERE window_start < now() - $2 * interval '1 second' AND key <> ALL($1) LIMIT 100)
		)
		INSERT INTO signin_throttle AS t (key, failures, window_start)
		SELECT k, 1, now() FROM unnest($1::text[]) AS k
		ON CONFLICT (key) DO UPDATE SET
			failures = CASE WHEN t.window_start > now() - $2 * interval '1 second' THEN t.failures + 1 ELSE 1 END,
			window_start = CASE WHEN t.window_start > now() - $2 * interval '1 second' THEN t.window_start ELSE now() END
		RETURNING key, failures`, pq.StringArray(keys), window.Seconds())
	if err != nil {
		return nil, translate(err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.Key] = r.Failures
	}
	return out, nil
}

// UncountAttempt takes back one attempt CountAttempt counted for each key (never below 0).
func (s *Store) UncountAttempt(ctx context.Context, keys []string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE signin_throttle SET failures = greatest(failures - 1, 0) WHERE key = ANY($1)`,
		pq.StringArray(keys))
	return translate(err)
}

// ClearAttempts forgets the attempts of the keys (after a successful sign-in).
func (s *Store) ClearAttempts(ctx context.Context, keys []string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM signin_throttle WHERE key = ANY($1)`, pq.StringArray(keys))
	return translate(err)
}
