package store

import (
	"context"
	"time"
)

// Retention: batched deletes of what is past keeping. These are maintenance statements across
// all accounts, run by the retention service.

// DeleteWebhookAttemptsBefore deletes up to limit attempt-log rows made before cutoff and
// returns how many it deleted, in no particular order (webhook_attempts_time_brin finds them).
// It fails when the statement fails.
func (s *Store) DeleteWebhookAttemptsBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return s.execCount(ctx, `DELETE FROM webhook_attempts WHERE id IN (
		SELECT id FROM webhook_attempts WHERE attempted_at < $1 LIMIT $2)`, cutoff, limit)
}

// DeleteEventsBefore deletes up to limit events created before cutoff that have no pending
// delivery and no delivery completed at or after cutoff, together with their deliveries and
// attempts (the foreign keys cascade), and returns how many events it deleted, in no
// particular order (events_created_brin finds them). It fails when the statement fails.
func (s *Store) DeleteEventsBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return s.execCount(ctx, `DELETE FROM events WHERE id IN (
		SELECT e.id FROM events e
		WHERE e.created_at < $1
		  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
			WHERE d.event_id = e.id AND (d.status = 'pending' OR d.completed_at >= $1))
		LIMIT $2)`, cutoff, limit)
}

// DeletePlatformWebhooksBefore deletes up to limit raw platform webhooks received before
// cutoff and returns how many it deleted, in no particular order (platform_webhooks_received_brin
// finds them). It fails when the statement fails.
func (s *Store) DeletePlatformWebhooksBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return s.execCount(ctx, `DELETE FROM platform_webhooks WHERE id IN (
		SELECT id FROM platform_webhooks WHERE received_at < $1 LIMIT $2)`, cutoff, limit)
}

func (s *Store) execCount(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

// DeleteParkedStatusesBefore deletes up to limit parked status reports received before cutoff
// (reports for a message that was never recorded) and returns how many it deleted. It fails
// when the statement fails.
func (s *Store) DeleteParkedStatusesBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return s.execCount(ctx, `DELETE FROM parked_statuses WHERE ctid IN (
		SELECT ctid FROM parked_statuses WHERE received_at < $1 LIMIT $2)`, cutoff, limit)
}

// DeleteMediaUploadsBefore deletes up to limit upload records (media_uploads) made before
// cutoff and returns how many it deleted, in no particular order (media_uploads_created_brin
// finds them). It fails when the statement fails.
func (s *Store) DeleteMediaUploadsBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return s.execCount(ctx, `DELETE FROM media_uploads WHERE (account_id, media_id) IN (
		SELECT account_id, media_id FROM media_uploads WHERE created_at < $1 LIMIT $2)`, cutoff, limit)
}
