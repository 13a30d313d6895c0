package store

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// APIKey is an issued key; only its SHA-256 hash is stored.
type APIKey struct {
	ID         int64      `db:"id" json:"id"`
	AccountID  int64      `db:"account_id" json:"account_id"`
	Mode       string     `db:"mode" json:"mode"`
	Prefix     string     `db:"prefix" json:"prefix"`
	CreatedAt  time.Time  `db:"created_at" json:"created_at"`
	RevokedAt  *time.Time `db:"revoked_at" json:"revoked_at,omitempty"`
	LastUsedAt *time.Time `db:"last_used_at" json:"last_used_at,omitempty"`
}

// Principal is what a key hash resolves to: the key, its account (with the fields requests
// show, so handlers need not read the account again) and whether both may act.
type Principal struct {
	KeyID         int64      `db:"key_id"`
	AccountID     int64      `db:"account_id"`
	Mode          string     `db:"mode"`
	Revoked       bool       `db:"revoked"`
	AccountActive bool       `db:"account_active"`
	LastUsedAt    *time.Time `db:"last_used_at"`
	AccountName   string     `db:"account_name"`
	AccountEmail  string     `db:"account_email"`
	JoinCode      string     `db:"join_code"`
}

const apiKeyColumns = `id, account_id, mode, prefix, created_at, revoked_at, last_used_at`

// CreateAPIKey stores the hash of a new key for the account. It returns ErrNotFound when the
// account does not exist, ErrConflict when the hash is already stored and a *LimitError
// (ErrLimitReached) when the account already has Limits().ActiveAPIKeys keys not revoked.
func (s *Store) CreateAPIKey(ctx context.Context, accountID int64, mode string, hash []byte, prefix string) (APIKey, error) {
	var k APIKey
	err := s.withinLimit(ctx, accountID, "active API keys", s.Limits().ActiveAPIKeys, activeKeysSQL, func(tx *sqlx.Tx) error {
		return tx.GetContext(ctx, &k, `INSERT INTO api_keys (account_id, mode, key_hash, prefix)
			VALUES ($1, $2, $3, $4) RETURNING `+apiKeyColumns, accountID, mode, hash, prefix)
	})
	return k, err
}

// activeKeysSQL counts the account's ($1) keys that count against Limits.ActiveAPIKeys: not
// revoked, the demo key left out.
const activeKeysSQL = `SELECT count(*) FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL AND mode <> 'demo'`

// RevokeAPIKey revokes a key (idempotently: the first revocation time is kept). ErrNotFound
// when the key does not exist.
func (s *Store) RevokeAPIKey(ctx context.Context, keyID int64) (APIKey, error) {
	var k APIKey
	err := s.db.GetContext(ctx, &k, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
		WHERE id = $1 RETURNING `+apiKeyColumns, keyID)
	return k, translate(err)
}

// principalColumns are a Principal's columns but its account_id, read from principalFrom, in
// the order PrincipalWithMessage scans them.
const principalColumns = `k.id AS key_id, k.mode, k.revoked_at IS NOT NULL AS revoked,
	a.active AS account_active, k.last_used_at, a.name AS account_name, a.email AS account_email, a.join_code`

const principalFrom = `FROM api_keys k JOIN accounts a ON a.id = k.account_id`

// principalWithMessageSQL reads the key with hash $1 and its account's outbound message $2
// (messageMatch): no row when either is missing.
var principalWithMessageSQL = `SELECT ` + principalColumns + `, ` + messageColumns + ` ` + principalFrom + `
	JOIN messages m ON ` + messageMatch("k.account_id", "$2") + messageJoins + ` WHERE k.key_hash = $1`

// PrincipalWithMessage is the key's lookup (PrincipalsByKeyHashes) and MessageByID of the key's
// account in one statement: a poll of a message costs one round trip to the database, not two.
// It returns ErrNotFound when the hash is unknown or the key's account has no such message;
// then ask PrincipalsByKeyHashes, which tells the two apart. The principal is returned as read: revoked
// keys and inactive accounts included, for the caller to refuse.
func (s *Store) PrincipalWithMessage(ctx context.Context, hash []byte, messageID int64) (Principal, Message, error) {
	st, err := s.prepared(ctx, principalWithMessageSQL)
	if err != nil {
		return Principal{}, Message{}, err
	}
	var p Principal
	var m messageRow
	dest := append([]any{&p.KeyID, &p.Mode, &p.Revoked, &p.AccountActive, &p.LastUsedAt, &p.AccountName,
		&p.AccountEmail, &p.JoinCode}, m.fields()...)
	if err := st.QueryRowContext(ctx, hash, messageID).Scan(dest...); err != nil {
		return Principal{}, Message{}, translate(err)
	}
	p.AccountID = m.AccountID // the one account_id column, the message's
	msg := m.message()
	return p, msg, s.withCampaignName(ctx, &msg)
}

// TouchAPIKey records a use of the key, at most once a minute.
func (s *Store) TouchAPIKey(ctx context.Context, accountID, keyID int64) error {
	st, err := s.prepared(ctx, `UPDATE api_keys SET last_used_at = now()
		WHERE id = $1 AND account_id = $2 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx, keyID, accountID)
	return translate(err)
}

// EnsureDemoKey makes the public demo key usable: it creates the shared demo account (with the
// given join code) and stores the key's hash, unless they exist. It returns the demo account id.
func (s *Store) EnsureDemoKey(ctx context.Context, hash []byte, prefix, joinCode string) (int64, error) {
	var id int64
	err := s.db.GetContext(ctx, &id, `WITH existing AS (
			SELECT account_id FROM api_keys WHERE key_hash = $1
		), acct AS (
			INSERT INTO accounts (name, email, join_code)
			SELECT 'Public demo', 'demo@localhost', $3 WHERE NOT EXISTS (SELECT 1 FROM existing)
			RETURNING id
		), key AS (
			INSERT INTO api_keys (account_id, mode, key_hash, prefix)
			SELECT id, 'demo', $1, $2 FROM acct
			RETURNING account_id
		)
		SELECT account_id FROM existing UNION ALL SELECT account_id FROM key`, hash, prefix, joinCode)
	return id, translate(err)
}

// principalsByKeyHashesSQL resolves the hex key hashes of the JSON array $1 (i, h) at once,
// each with one indexed lookup: one row per known key, none for an unknown one. JSON keeps one
// generic plan, whatever the number of hashes.
const principalsByKeyHashesSQL = `SELECT r.i, k.account_id, ` + principalColumns + ` ` + principalFrom + `
	JOIN jsonb_to_recordset($1::jsonb) AS r (i int, h text) ON k.key_hash = decode(r.h, 'hex') ORDER BY r.i`

// KeyLookup is what PrincipalsByKeyHashes found for one hash: Found is false for an unknown key.
type KeyLookup struct {
	Principal
	Found bool
}

// PrincipalsByKeyHashes resolves key hashes in one statement, each with one indexed lookup, in
// order: the API's concurrent requests share their key lookups (server/auth.go). Revocation and
// account state are read live, so they apply to the very next request; a hash may come more
// than once. It fails only when the database does.
func (s *Store) PrincipalsByKeyHashes(ctx context.Context, hashes [][]byte) ([]KeyLookup, error) {
	type row struct {
		I int `db:"i"`
		Principal
	}
	in := make([]struct {
		I int    `json:"i"`
		H string `json:"h"`
	}, len(hashes))
	for i, h := range hashes {
		in[i].I, in[i].H = i+1, hex.EncodeToString(h)
	}
	arg, err := jsonArg(in)
	if err != nil {
		return nil, err
	}
	st, err := s.prepared(ctx, principalsByKeyHashesSQL)
	if err != nil {
		return nil, err
	}
	var rows []row
	if err := st.SelectContext(ctx, &rows, arg); err != nil {
		return nil, translate(err)
	}
	out := make([]KeyLookup, len(hashes))
	for _, r := range rows {
		if r.I < 1 || r.I > len(out) {
			return nil, fmt.Errorf("key lookup: row %d of %d", r.I, len(out))
		}
		out[r.I-1] = KeyLookup{Principal: r.Principal, Found: true}
	}
	return out, nil
}
