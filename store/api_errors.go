package store

import (
	"context"
	"time"
)

// API error log retention: per workspace, the newest APIErrorKeep rows of the last
// APIErrorMaxAge.
const (
	APIErrorKeep   = 1000
	APIErrorMaxAge = 7 * 24 * time.Hour
)

// APIError is one refused API call of a workspace: what was asked and how it was answered. The
// key is named by its display prefix only.
type APIError struct {
	ID        int64     `db:"id"`
	Method    string    `db:"method"`
	Path      string    `db:"path"`
	Status    int       `db:"status"`
	Code      string    `db:"code"`
	KeyPrefix string    `db:"key_prefix"`
	CreatedAt time.Time `db:"created_at"`
}

// RecordAPIError logs a refused call of the account's key and trims the account's log to its
// retention (the rows beyond APIErrorKeep and those older than APIErrorMaxAge), in one
// statement. The path is cut to 300 bytes; pass it without its query. A failure is returned
// for the caller to log: the answer to the call does not depend on it.
func (s *Store) RecordAPIError(ctx context.Context, accountID, keyID int64, method, path string, status int, code string) error {
	if len(path) > 300 {
		path = path[:300]
	}
	var key *int64
	if keyID != 0 {
		key = &keyID
	}
	_, err := s.db.ExecContext(ctx, `WITH ins AS (
			INSERT INTO api_errors (account_id, key_id, method, path, status, code) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id
		)
		DELETE FROM api_errors WHERE account_id = $1 AND (created_at < now() - $7 * interval '1 second'
			OR id <= (SELECT id FROM api_errors WHERE account_id = $1 ORDER BY id DESC OFFSET $8 - 1 LIMIT 1))`,
		accountID, key, safeText(method), safeText(path), status, safeText(code),
		APIErrorMaxAge.Seconds(), APIErrorKeep)
	return translate(err)
}

// APIErrors lists the account's refused calls newest first, at most limit, with ids below
// before (0: from the newest).
func (s *Store) APIErrors(ctx context.Context, accountID, before int64, limit int) ([]APIError, error) {
	out := []APIError{}
	err := s.db.SelectContext(ctx, &out, `SELECT e.id, e.method, e.path, e.status, e.code, COALESCE(k.prefix, '') AS key_prefix, e.created_at
		FROM api_errors e LEFT JOIN api_keys k ON k.account_id = e.account_id AND k.id = e.key_id
		WHERE e.account_id = $1 AND ($2 = 0 OR e.id < $2) ORDER BY e.id DESC LIMIT $3`, accountID, before, limit)
	return out, translate(err)
}
