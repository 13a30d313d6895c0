package store

import (
	"bytes"
	"context"
	"errors"
	"time"
)

// IdempotencyState is what an Idempotency-Key already holds.
type IdempotencyState int

// The states BeginIdempotent reports.
const (
	// IdempotencyNew: the key was free and is now held by this request, which must finish it.
	IdempotencyNew IdempotencyState = iota
	// IdempotencyReplay: a finished response is stored for the same request.
	IdempotencyReplay
	// IdempotencyMismatch: the key was used for a different request.
	IdempotencyMismatch
	// IdempotencyInFlight: the first request with the key has not finished.
	IdempotencyInFlight
)

// IdempotencyRecord is a key's stored outcome.
type IdempotencyRecord struct {
	State      IdempotencyState
	StatusCode int
	Response   []byte
	// MessageID is the message a live send created under the key (BeginSend binds it), 0 for
	// none. A key bound to a message while in flight is never released (ReleaseIdempotent) nor
	// taken over as abandoned: its platform call may have happened.
	MessageID int64
}

// IdempotencyTTL is how long a key's response is replayed; AbandonAfter is how long an
// unfinished key blocks retries before it is taken to be abandoned by a dead process.
const (
	IdempotencyTTL = 48 * time.Hour
	AbandonAfter   = 5 * time.Minute
)

// BeginIdempotent claims the account's key for a request with the given fingerprint, or reports
// what the key already holds. Expired and abandoned keys are reclaimed.
func (s *Store) BeginIdempotent(ctx context.Context, accountID int64, key string, fingerprint []byte) (IdempotencyRecord, error) {
	// When a concurrent request inserts the key first, the INSERT waits for it and then
	// conflicts, but the statement's snapshot predates that commit, so the fallback SELECT sees
	// no row either. A new statement has a new snapshot: run it again.
	for attempt := 0; ; attempt++ {
		rec, err := s.beginIdempotent(ctx, accountID, key, fingerprint)
		if !errors.Is(err, ErrNotFound) || attempt == 4 {
			return rec, err
		}
	}
}

func (s *Store) beginIdempotent(ctx context.Context, accountID int64, key string, fingerprint []byte) (IdempotencyRecord, error) {
	var row struct {
		Inserted    bool   `db:"inserted"`
		Fingerprint []byte `db:"fingerprint"`
		StatusCode  *int   `db:"status_code"`
		Response    []byte `db:"response"`
		MessageID   *int64 `db:"message_id"`
	}
	// Insert, or take over an expired/abandoned row; otherwise return the existing row.
	err := s.getPrepared(ctx, &row, `WITH ins AS (
			INSERT INTO idempotency_keys (account_id, key, fingerprint) VALUES ($1, $2, $3)
			ON CONFLICT (account_id, key) DO UPDATE
				SET fingerprint = EXCLUDED.fingerprint, status_code = NULL, response = NULL, created_at = now()
				WHERE idempotency_keys.created_at < now() - make_interval(secs => $4)
				   OR (idempotency_keys.status_code IS NULL AND idempotency_keys.message_id IS NULL
				       AND idempotency_keys.created_at < now() - make_interval(secs => $5))
			RETURNING true AS inserted, fingerprint, status_code, response, message_id
		)
		SELECT * FROM ins
		UNION ALL
		SELECT false, fingerprint, status_code, response, message_id FROM idempotency_keys
		WHERE account_id = $1 AND key = $2 AND NOT EXISTS (SELECT 1 FROM ins)`,
		accountID, key, fingerprint, IdempotencyTTL.Seconds(), AbandonAfter.Seconds())
	if err != nil {
		return IdempotencyRecord{}, err
	}
	switch {
	case row.Inserted:
		return IdempotencyRecord{State: IdempotencyNew}, nil
	case !bytes.Equal(row.Fingerprint, fingerprint):
		return IdempotencyRecord{State: IdempotencyMismatch}, nil
	case row.StatusCode == nil:
		var id int64
		if row.MessageID != nil {
			id = *row.MessageID
		}
		return IdempotencyRecord{State: IdempotencyInFlight, MessageID: id}, nil
	}
	return IdempotencyRecord{State: IdempotencyReplay, StatusCode: *row.StatusCode, Response: row.Response}, nil
}

// FinishIdempotent stores the response of the request that holds the key.
func (s *Store) FinishIdempotent(ctx context.Context, accountID int64, key string, status int, response []byte) error {
	st, err := s.prepared(ctx, `UPDATE idempotency_keys SET status_code = $3, response = $4
		WHERE account_id = $1 AND key = $2 AND status_code IS NULL`)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx, accountID, key, status, response)
	return translate(err)
}

// ReleaseIdempotent frees an unfinished key (the request failed unexpectedly), so a retry runs
// again — unless a send bound a message to it (BeginSend): its platform call may have happened,
// so the key stays held and a retry gets the message's outcome instead of sending again.
func (s *Store) ReleaseIdempotent(ctx context.Context, accountID int64, key string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND status_code IS NULL AND message_id IS NULL`,
		accountID, key)
	return translate(err)
}

// DeleteExpiredIdempotencyKeys removes keys past their replay window; it returns how many.
func (s *Store) DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, now.Add(-IdempotencyTTL))
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}
