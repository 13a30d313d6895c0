package store

import (
	"context"
	"time"
)

// The other ends of a live send: the platform refused it (RecordSendFailure), or its answer was
// lost (MarkOutcomeUnknown, and the reconciler's MarkOrphanedSends).

// MarkOutcomeUnknown records that the platform call of the account's pending message may have
// happened but its answer was lost (a timeout, an unreadable answer, a recording that failed):
// the message stays pending, shown as sent with outcome_unknown, until a status report adopts
// it (ApplyStatus, through the callback data) or the send path records it. It returns
// ErrNotFound when the account has no such pending message, and fails otherwise only when the
// database does.
func (s *Store) MarkOutcomeUnknown(ctx context.Context, accountID, messageID int64) error {
	var n int
	err := s.getPrepared(ctx, &n, `WITH m AS (
			UPDATE messages SET outcome_unknown = true
			WHERE account_id = $1::bigint AND id = $2::bigint AND status = 'pending'
			RETURNING id
		)
		SELECT count(*) FROM m`, accountID, messageID)
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// MarkOrphanedSends is the reconciler's sweep for sends whose process died between recording
// the intent and recording the platform's answer: pending messages created before cutoff are
// marked outcome_unknown (at most limit per call), so GET /messages/{id} shows them and a
// status report can adopt them. It returns how many it marked and fails only when the
// database does.
func (s *Store) MarkOrphanedSends(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	// Pending is "outbound, neither sent nor failed"; the condition is messages_pending_idx's.
	res, err := s.db.ExecContext(ctx, `UPDATE messages SET outcome_unknown = true WHERE id IN (
			SELECT id FROM messages WHERE direction = 'out' AND sent_at IS NULL AND failed_at IS NULL AND NOT outcome_unknown
				AND created_at < $1 LIMIT $2) AND status = 'pending'`,
		cutoff.UTC(), limit)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

// statusTime is a time of ours as the status history keeps it: in the platform's precision,
// whole seconds (its webhook timestamps), so that our accepted time and the platform's reports
// order by time, ties broken by rank (MessageByID).
func statusTime(at time.Time) time.Time { return at.UTC().Truncate(time.Second) }

// SendFailure is why a pending send failed: the platform's error, or an unknown outcome.
type SendFailure struct {
	Code    *int // the platform's error code; nil when it gave none (no answer)
	Title   string
	Details string
}

// RecordSendFailure marks the account's pending message failed with the reason and the time
// (failed_at, the history's failed); no event is written. It returns ErrNotFound when the account has no
// such pending message, and fails otherwise only when the database does.
func (s *Store) RecordSendFailure(ctx context.Context, accountID, messageID int64, f SendFailure, at time.Time) error {
	var n int
	err := s.getPrepared(ctx, &n, `WITH m AS (
			UPDATE messages SET status = 'failed', error_code = $3::int, error_title = $4::text, error_details = $5::text,
				failed_at = $6::timestamptz
			WHERE account_id = $1::bigint AND id = $2::bigint AND status = 'pending'
			RETURNING id
		)
		SELECT count(*) FROM m`, accountID, messageID, f.Code, f.Title, f.Details, statusTime(at))
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}
