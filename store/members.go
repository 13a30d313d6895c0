package store

import (
	"context"
	"errors"
	"time"
)

// ErrLastOwner is returned when a change would leave a workspace without an owner.
var ErrLastOwner = errors.New("the workspace's last owner cannot be removed or demoted")

// Member is a user's membership of one workspace, as the members page lists it.
type Member struct {
	UserID    int64     `db:"user_id" json:"user_id"`
	Email     string    `db:"email" json:"email"`
	Role      string    `db:"role" json:"role"`
	CreatedAt time.Time `db:"created_at" json:"created_at"`
}

// MembersByAccount lists the account's members, owners first, then by email, at most limit.
func (s *Store) MembersByAccount(ctx context.Context, accountID int64, limit int) ([]Member, error) {
	ms := []Member{}
	err := s.db.SelectContext(ctx, &ms, `SELECT m.user_id, u.email, m.role, m.created_at
		FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.account_id = $1 ORDER BY m.role = 'owner' DESC, lower(u.email), m.user_id LIMIT $2`, accountID, limit)
	return ms, translate(err)
}

// MemberByID returns one of the account's members, or ErrNotFound.
func (s *Store) MemberByID(ctx context.Context, accountID, userID int64) (Member, error) {
	var m Member
	err := s.db.GetContext(ctx, &m, `SELECT m.user_id, u.email, m.role, m.created_at
		FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.account_id = $1 AND m.user_id = $2`, accountID, userID)
	return m, translate(err)
}

// SetMemberRole changes a member's role in the account and returns the member as it was
// before. The account's owner rows are locked first, so that two owners demoting each other
// at once cannot both succeed: ErrLastOwner when the member is the only owner and role is not
// owner; ErrNotFound when the user is not a member. The member's sessions read the new role
// on their next request.
func (s *Store) SetMemberRole(ctx context.Context, accountID, userID int64, role string) (Member, error) {
	return s.changeMember(ctx, accountID, userID, role != RoleOwner, `UPDATE memberships SET role = $3 WHERE account_id = $1 AND user_id = $2`, role)
}

// RemoveMember removes a member from the account (their sessions in it end with the
// membership) and returns the member as it was. ErrLastOwner when the member is the only
// owner; ErrNotFound when the user is not a member. The user keeps their sign-in and their
// other workspaces.
func (s *Store) RemoveMember(ctx context.Context, accountID, userID int64) (Member, error) {
	return s.changeMember(ctx, accountID, userID, true, `DELETE FROM memberships WHERE account_id = $1 AND user_id = $2`)
}

// changeMember runs stmt ($1 account, $2 user, then args) on a membership after locking the
// account's owner memberships; losesOwner says the change takes the owner role away, which
// the last owner is refused.
func (s *Store) changeMember(ctx context.Context, accountID, userID int64, losesOwner bool, stmt string, args ...any) (Member, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return Member{}, translate(err)
	}
	defer tx.Rollback()
	var owners []int64
	if err := tx.SelectContext(ctx, &owners, `SELECT user_id FROM memberships WHERE account_id = $1 AND role = 'owner'
		ORDER BY user_id FOR UPDATE`, accountID); err != nil {
		return Member{}, translate(err)
	}
	var m Member
	if err := tx.GetContext(ctx, &m, `SELECT m.user_id, u.email, m.role, m.created_at
		FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.account_id = $1 AND m.user_id = $2 FOR UPDATE OF m`,
		accountID, userID); err != nil {
		return Member{}, translate(err)
	}
	if losesOwner && m.Role == RoleOwner && len(owners) <= 1 {
		return Member{}, ErrLastOwner
	}
	if _, err := tx.ExecContext(ctx, stmt, append([]any{accountID, userID}, args...)...); err != nil {
		return Member{}, translate(err)
	}
	return m, translate(tx.Commit())
}
