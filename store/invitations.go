package store

import (
	"context"
	"time"
)

// Invitation asks someone to join an account; only the SHA-256 of its token is stored.
type Invitation struct {
	ID          int64      `db:"id" json:"id"`
	AccountID   int64      `db:"account_id" json:"account_id"`
	AccountName string     `db:"account_name" json:"account_name"`
	Email       string     `db:"email" json:"email"`
	Role        string     `db:"role" json:"role"`
	CreatedAt   time.Time  `db:"created_at" json:"created_at"`
	ExpiresAt   time.Time  `db:"expires_at" json:"expires_at"`
	AcceptedAt  *time.Time `db:"accepted_at" json:"accepted_at,omitempty"`
}

const invitationColumns = `i.id, i.account_id, a.name AS account_name, i.email, i.role, i.created_at, i.expires_at, i.accepted_at`

// CreateInvitation stores an invitation of the account, valid for ttl. ErrNotFound when the
// account does not exist.
func (s *Store) CreateInvitation(ctx context.Context, accountID, invitedBy int64, email, role string, tokenHash []byte, ttl time.Duration) (Invitation, error) {
	var inv Invitation
	err := s.db.GetContext(ctx, &inv, `WITH i AS (
			INSERT INTO invitations (account_id, token_hash, email, role, invited_by, expires_at)
			SELECT id, $2, $3, $4, $5, now() + $6 * interval '1 second' FROM accounts WHERE id = $1
			RETURNING *
		) SELECT `+invitationColumns+` FROM i JOIN accounts a ON a.id = i.account_id`,
		accountID, tokenHash, email, role, invitedBy, ttl.Seconds())
	return inv, translate(err)
}

// InvitationByToken returns the pending, unexpired invitation with the token hash, or
// ErrNotFound.
func (s *Store) InvitationByToken(ctx context.Context, tokenHash []byte) (Invitation, error) {
	var inv Invitation
	err := s.db.GetContext(ctx, &inv, `SELECT `+invitationColumns+` FROM invitations i JOIN accounts a ON a.id = i.account_id
		WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.expires_at > now()`, tokenHash)
	return inv, translate(err)
}

// AcceptInvitation creates the user and the membership the invitation grants, and marks it
// accepted, in one transaction. ErrNotFound when the invitation is unknown, used or expired;
// ErrEmailTaken when the email is in use.
func (s *Store) AcceptInvitation(ctx context.Context, tokenHash []byte, email, passwordHash string) (Invitation, User, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return Invitation{}, User{}, translate(err)
	}
	defer tx.Rollback()
	var inv Invitation
	if err := tx.GetContext(ctx, &inv, `UPDATE invitations i SET accepted_at = now() FROM accounts a
		WHERE a.id = i.account_id AND i.token_hash = $1 AND i.accepted_at IS NULL AND i.expires_at > now()
		RETURNING `+invitationColumns, tokenHash); err != nil {
		return Invitation{}, User{}, translate(err)
	}
	var u User
	if err := tx.GetContext(ctx, &u, `INSERT INTO users (email, password_hash) VALUES ($1, $2) RETURNING `+userColumns,
		email, passwordHash); err != nil {
		return Invitation{}, User{}, emailTaken(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO memberships (account_id, user_id, role) VALUES ($1, $2, $3)`,
		inv.AccountID, u.ID, inv.Role); err != nil {
		return Invitation{}, User{}, translate(err)
	}
	return inv, u, translate(tx.Commit())
}

// JoinInvitation gives an existing user the membership the invitation grants and marks it
// accepted, in one statement. joined is false when the user was already a member of the
// account: they keep the role they have. ErrNotFound when the invitation is unknown, used or
// expired.
func (s *Store) JoinInvitation(ctx context.Context, tokenHash []byte, userID int64) (inv Invitation, joined bool, err error) {
	var row struct {
		Invitation
		Joined bool `db:"joined"`
	}
	err = s.db.GetContext(ctx, &row, `WITH i AS (
			UPDATE invitations i SET accepted_at = now() FROM accounts a
			WHERE a.id = i.account_id AND i.token_hash = $1 AND i.accepted_at IS NULL AND i.expires_at > now()
			RETURNING `+invitationColumns+`
		), m AS (
			INSERT INTO memberships (account_id, user_id, role) SELECT account_id, $2, role FROM i
			ON CONFLICT (account_id, user_id) DO NOTHING
			RETURNING account_id
		) SELECT i.*, EXISTS (SELECT FROM m) AS joined FROM i`, tokenHash, userID)
	return row.Invitation, row.Joined, translate(err)
}
