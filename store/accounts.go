package store

import (
	"context"
	"time"
)

// Account is a tenant.
type Account struct {
	ID        int64     `db:"id" json:"id"`
	Name      string    `db:"name" json:"name"`
	Email     string    `db:"email" json:"email"`
	Active    bool      `db:"active" json:"active"`
	JoinCode  string    `db:"join_code" json:"join_code"`
	CreatedAt time.Time `db:"created_at" json:"created_at"`
}

const accountColumns = `id, name, email, active, join_code, created_at`

// CreateAccount inserts an active account with the given sandbox join code. It returns
// ErrConflict when the join code is taken.
func (s *Store) CreateAccount(ctx context.Context, name, email, joinCode string) (Account, error) {
	var a Account
	err := s.db.GetContext(ctx, &a, `INSERT INTO accounts (name, email, join_code) VALUES ($1, $2, $3)
		RETURNING `+accountColumns, name, email, joinCode)
	return a, translate(err)
}

// AccountByID returns the account, or ErrNotFound.
func (s *Store) AccountByID(ctx context.Context, accountID int64) (Account, error) {
	var a Account
	err := s.getPrepared(ctx, &a, `SELECT `+accountColumns+` FROM accounts WHERE id = $1`, accountID)
	return a, err
}

// SetAccountActive activates or deactivates an account; ErrNotFound when it does not exist.
func (s *Store) SetAccountActive(ctx context.Context, accountID int64, active bool) (Account, error) {
	var a Account
	err := s.db.GetContext(ctx, &a, `UPDATE accounts SET active = $2 WHERE id = $1 RETURNING `+accountColumns, accountID, active)
	return a, translate(err)
}

// AccountByEmail returns the oldest account with that email, or ErrNotFound.
func (s *Store) AccountByEmail(ctx context.Context, email string) (Account, error) {
	var a Account
	err := s.db.GetContext(ctx, &a, `SELECT `+accountColumns+` FROM accounts WHERE email = $1 ORDER BY id LIMIT 1`, email)
	return a, translate(err)
}
