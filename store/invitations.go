package store

import (
	"context"
	"errors"
	"strings"
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
	RevokedAt   *time.Time `db:"revoked_at" json:"revoked_at,omitempty"`
	// InvitedBy is the email of the member who invited ("" for the operator or a removed user).
	InvitedBy string `db:"invited_by_email" json:"invited_by,omitempty"`
}

const invitationColumns = `i.id, i.account_id, a.name AS account_name, i.email, i.role, i.created_at, i.expires_at, i.accepted_at, i.revoked_at,
	COALESCE((SELECT u.email FROM users u WHERE u.id = i.invited_by), '') AS invited_by_email`

// usable is the condition of an invitation that can still be accepted.
const usable = `i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()`

// ErrWrongEmail is returned when an invitation is accepted with an email other than the one
// it was made for.
var ErrWrongEmail = errors.New("the invitation is for another email")

// CreateInvitation stores an invitation of the account, valid for ttl; invitedBy 0 is the
// operator. ErrNotFound when the account does not exist.
func (s *Store) CreateInvitation(ctx context.Context, accountID, invitedBy int64, email, role string, tokenHash []byte, ttl time.Duration) (Invitation, error) {
	var by *int64
	if invitedBy != 0 {
		by = &invitedBy
	}
	var inv Invitation
	err := s.db.GetContext(ctx, &inv, `WITH i AS (
			INSERT INTO invitations (account_id, token_hash, email, role, invited_by, expires_at)
			SELECT id, $2, $3, $4, $5, now() + $6 * interval '1 second' FROM accounts WHERE id = $1
			RETURNING *
		) SELECT `+invitationColumns+` FROM i JOIN accounts a ON a.id = i.account_id`,
		accountID, tokenHash, email, role, by, ttl.Seconds())
	return inv, translate(err)
}

// PendingInvitations lists the account's invitations neither accepted nor revoked (expired
// ones included, to be resent or revoked), newest first, at most limit.
func (s *Store) PendingInvitations(ctx context.Context, accountID int64, limit int) ([]Invitation, error) {
	invs := []Invitation{}
	err := s.db.SelectContext(ctx, &invs, `SELECT `+invitationColumns+` FROM invitations i JOIN accounts a ON a.id = i.account_id
		WHERE i.account_id = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL ORDER BY i.id DESC LIMIT $2`, accountID, limit)
	return invs, translate(err)
}

// RevokeInvitation revokes one of the account's pending invitations: its link stops working.
// ErrNotFound when the account has no such pending invitation.
func (s *Store) RevokeInvitation(ctx context.Context, accountID, id int64) (Invitation, error) {
	var inv Invitation
	err := s.db.GetContext(ctx, &inv, `UPDATE invitations i SET revoked_at = now() FROM accounts a
		WHERE a.id = i.account_id AND i.account_id = $1 AND i.id = $2 AND i.accepted_at IS NULL AND i.revoked_at IS NULL
		RETURNING `+invitationColumns, accountID, id)
	return inv, translate(err)
}

// RenewInvitation gives one of the account's pending invitations a new token (the old link
// stops working) and a new expiry, ttl from now. ErrNotFound when the account has no such
// pending invitation.
func (s *Store) RenewInvitation(ctx context.Context, accountID, id int64, tokenHash []byte, ttl time.Duration) (Invitation, error) {
	var inv Invitation
	err := s.db.GetContext(ctx, &inv, `UPDATE invitations i SET token_hash = $3, expires_at = now() + $4 * interval '1 second'
		FROM accounts a
		WHERE a.id = i.account_id AND i.account_id = $1 AND i.id = $2 AND i.accepted_at IS NULL AND i.revoked_at IS NULL
		RETURNING `+invitationColumns, accountID, id, tokenHash, ttl.Seconds())
	return inv, translate(err)
}

// InvitationByToken returns the pending, unrevoked, unexpired invitation with the token hash,
// or ErrNotFound.
func (s *Store) InvitationByToken(ctx context.Context, tokenHash []byte) (Invitation, error) {
	var inv Invitation
	err := s.db.GetContext(ctx, &inv, `SELECT `+invitationColumns+` FROM invitations i JOIN accounts a ON a.id = i.account_id
		WHERE i.token_hash = $1 AND `+usable, tokenHash)
	return inv, translate(err)
}

// AcceptInvitation creates the user and the membership the invitation grants, and marks it
// accepted, in one transaction. The email must be the invited one (compared
// case-insensitively). ErrNotFound when the invitation is unknown, used, revoked or expired;
// ErrWrongEmail when it is for another email; ErrEmailTaken when the email is in use.
func (s *Store) AcceptInvitation(ctx context.Context, tokenHash []byte, email, passwordHash string) (Invitation, User, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return Invitation{}, User{}, translate(err)
	}
	defer tx.Rollback()
	var inv Invitation
	if err := tx.GetContext(ctx, &inv, `SELECT `+invitationColumns+` FROM invitations i JOIN accounts a ON a.id = i.account_id
		WHERE i.token_hash = $1 AND `+usable+` FOR UPDATE OF i`, tokenHash); err != nil {
		return Invitation{}, User{}, translate(err)
	}
	if !sameEmail(inv.Email, email) {
		return Invitation{}, User{}, ErrWrongEmail
	}
	if _, err := tx.ExecContext(ctx, `UPDATE invitations SET accepted_at = now() WHERE id = $1`, inv.ID); err != nil {
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
// accepted, in one statement, when the user's email is the invited one (compared
// case-insensitively). joined is false when the user was already a member of the account:
// they keep the role they have. ErrNotFound when the invitation is unknown, used, revoked or
// expired, or is for another email (the caller reads it first to tell the two apart).
func (s *Store) JoinInvitation(ctx context.Context, tokenHash []byte, userID int64) (inv Invitation, joined bool, err error) {
	var row struct {
		Invitation
		Joined bool `db:"joined"`
	}
	err = s.db.GetContext(ctx, &row, `WITH i AS (
			UPDATE invitations i SET accepted_at = now() FROM accounts a
			WHERE a.id = i.account_id AND i.token_hash = $1 AND `+usable+`
			  AND lower(i.email) = (SELECT lower(email) FROM users WHERE id = $2)
			RETURNING `+invitationColumns+`
		), m AS (
			INSERT INTO memberships (account_id, user_id, role) SELECT account_id, $2, role FROM i
			ON CONFLICT (account_id, user_id) DO NOTHING
			RETURNING account_id
		) SELECT i.*, EXISTS (SELECT FROM m) AS joined FROM i`, tokenHash, userID)
	return row.Invitation, row.Joined, translate(err)
}

// sameEmail compares two emails as the users table's unique index does (lower()).
func sameEmail(a, b string) bool { return strings.ToLower(a) == strings.ToLower(b) }
