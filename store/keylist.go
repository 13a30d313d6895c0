package store

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"
)

// NamedKey is an API key as the dashboard lists it: its name and the last four characters
// of the key beside the display prefix.
type NamedKey struct {
	APIKey
	Name  string `db:"name" json:"name"`
	Last4 string `db:"last4" json:"last4"`
}

const namedKeyColumns = apiKeyColumns + `, name, last4`

// CreateNamedAPIKey stores the hash of a new key of the account with a name and the key's last
// four characters. ErrNotFound when the account does not exist; ErrConflict when the hash is
// already stored; a *LimitError (ErrLimitReached) when the account already has
// Limits().ActiveAPIKeys keys not revoked.
func (s *Store) CreateNamedAPIKey(ctx context.Context, accountID int64, name, mode string, hash []byte, prefix, last4 string) (NamedKey, error) {
	var k NamedKey
	err := s.withinLimit(ctx, accountID, "active API keys", s.Limits().ActiveAPIKeys, activeKeysSQL, func(tx *sqlx.Tx) error {
		return tx.GetContext(ctx, &k, `INSERT INTO api_keys (account_id, mode, key_hash, prefix, name, last4)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+namedKeyColumns, accountID, mode, hash, prefix, safeText(name), last4)
	})
	return k, err
}

// APIKeysByAccount lists the account's live and test keys, newest first, revoked ones
// included (the demo key is never listed), at most MaxListed.
func (s *Store) APIKeysByAccount(ctx context.Context, accountID int64) ([]NamedKey, error) {
	ks := []NamedKey{}
	err := s.db.SelectContext(ctx, &ks, `SELECT `+namedKeyColumns+` FROM api_keys
		WHERE account_id = $1 AND mode <> 'demo' ORDER BY created_at DESC, id DESC LIMIT $2`, accountID, MaxListed)
	return ks, translate(err)
}

// APIKeyByID returns one of the account's keys, or ErrNotFound.
func (s *Store) APIKeyByID(ctx context.Context, accountID, keyID int64) (NamedKey, error) {
	var k NamedKey
	err := s.db.GetContext(ctx, &k, `SELECT `+namedKeyColumns+` FROM api_keys
		WHERE account_id = $1 AND id = $2 AND mode <> 'demo'`, accountID, keyID)
	return k, translate(err)
}

// RevokeAccountAPIKey revokes one of the account's keys (idempotently) and returns it;
// ErrNotFound when the account has no such key.
func (s *Store) RevokeAccountAPIKey(ctx context.Context, accountID, keyID int64) (NamedKey, error) {
	var k NamedKey
	err := s.db.GetContext(ctx, &k, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
		WHERE account_id = $1 AND id = $2 AND mode <> 'demo' RETURNING `+namedKeyColumns, accountID, keyID)
	return k, translate(err)
}

// SandboxParticipant is a handset that sent the account's join phrase to the sandbox number.
type SandboxParticipant struct {
	Phone    string    `db:"phone" json:"phone"`
	JoinedAt time.Time `db:"joined_at" json:"joined_at"`
	RealSent int       `db:"real_sent" json:"real_sent"`
}

// SandboxParticipants lists the account's handsets that joined after since, newest first.
func (s *Store) SandboxParticipants(ctx context.Context, accountID int64, since time.Time) ([]SandboxParticipant, error) {
	ps := []SandboxParticipant{}
	err := s.db.SelectContext(ctx, &ps, `SELECT phone, joined_at, real_sent FROM sandbox_participants
		WHERE account_id = $1 AND joined_at > $2 ORDER BY joined_at DESC LIMIT 100`, accountID, since)
	return ps, translate(err)
}
