package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"
)

// A person's changes of a broadcast (pause, resume, cancel) and the engine's pauses of every
// broadcast using a paused template or of an account the platform stopped. A pause or a
// completion writes its event (broadcast.paused, broadcast.completed) in the same statement,
// through the broadcasts_state_events trigger.

// The events of a broadcast (opt-in types).
const (
	EventBroadcastPaused    = "broadcast.paused"
	EventBroadcastCompleted = "broadcast.completed"
)

// PauseBroadcast pauses the account's scheduled or running broadcast with reason and the time
// the engine may resume it by itself (nil: only ResumeBroadcast does). No recipient is marked
// sending once it has committed. Pausing a paused broadcast updates its reason.
func (s *Store) PauseBroadcast(ctx context.Context, accountID, id int64, reason string, resumeAt *time.Time) (Broadcast, error) {
	return s.changeBroadcast(ctx, accountID, id, `UPDATE broadcasts SET state = 'paused', pause_reason = $3, resume_at = $4, updated_at = now()
		WHERE account_id = $1 AND id = $2 AND state IN ('scheduled', 'running', 'paused')
		RETURNING `+broadcastColumns, reason, resumeAt)
}

// ResumeBroadcast sets the account's paused broadcast running again (scheduled again when its
// schedule has not come yet).
func (s *Store) ResumeBroadcast(ctx context.Context, accountID, id int64) (Broadcast, error) {
	return s.changeBroadcast(ctx, accountID, id, `UPDATE broadcasts SET
			state = CASE WHEN scheduled_at > now() AND started_at IS NULL THEN 'scheduled' ELSE 'running' END,
			started_at = CASE WHEN scheduled_at > now() AND started_at IS NULL THEN NULL ELSE coalesce(started_at, now()) END,
			pause_reason = '', resume_at = NULL, updated_at = now()
		WHERE account_id = $1 AND id = $2 AND state = 'paused'
		RETURNING `+broadcastColumns)
}

// CancelBroadcast cancels the account's unfinished broadcast: its recipients not called yet
// are cancelled, in the same transaction.
func (s *Store) CancelBroadcast(ctx context.Context, accountID, id int64) (Broadcast, error) {
	var b Broadcast
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &b, `UPDATE broadcasts SET state = 'cancelled', finished_at = now(), updated_at = now()
			WHERE account_id = $1 AND id = $2 AND state IN ('scheduled', 'running', 'paused')
			RETURNING `+broadcastColumns, accountID, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE broadcast_recipients SET state = 'cancelled', finished_at = now(), claim = NULL
			WHERE account_id = $1 AND broadcast_id = $2 AND state = 'pending'`, accountID, id)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return Broadcast{}, s.stateOrMissing(ctx, accountID, id)
	}
	if err != nil {
		return Broadcast{}, translate(err)
	}
	return b, b.decode()
}

func (s *Store) changeBroadcast(ctx context.Context, accountID, id int64, q string, args ...any) (Broadcast, error) {
	var b Broadcast
	err := s.db.GetContext(ctx, &b, q, append([]any{accountID, id}, args...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return Broadcast{}, s.stateOrMissing(ctx, accountID, id)
	}
	if err != nil {
		return Broadcast{}, translate(err)
	}
	return b, b.decode()
}

// stateOrMissing tells ErrNotFound from ErrBroadcastState after a change matched no row.
func (s *Store) stateOrMissing(ctx context.Context, accountID, id int64) error {
	var n int
	if err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM broadcasts WHERE account_id = $1 AND id = $2`, accountID, id); err != nil {
		return translate(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return ErrBroadcastState
}

// PauseBroadcastsUsingTemplate pauses every scheduled or running broadcast of the account that
// sends the template (any language) with reason, and returns their ids.
func (s *Store) PauseBroadcastsUsingTemplate(ctx context.Context, accountID int64, template, reason string) ([]int64, error) {
	var ids []int64
	err := s.db.SelectContext(ctx, &ids, `UPDATE broadcasts SET state = 'paused', pause_reason = $3, resume_at = NULL, updated_at = now()
		WHERE account_id = $1 AND template_name = $2 AND state IN ('scheduled', 'running') RETURNING id`,
		accountID, template, reason)
	return ids, translate(err)
}

// PauseAccountBroadcasts pauses every scheduled or running broadcast of the account with reason
// (the platform refused the account's sends, e.g. for payment), and returns their ids.
func (s *Store) PauseAccountBroadcasts(ctx context.Context, accountID int64, reason string) ([]int64, error) {
	var ids []int64
	err := s.db.SelectContext(ctx, &ids, `UPDATE broadcasts SET state = 'paused', pause_reason = $2, resume_at = NULL, updated_at = now()
		WHERE account_id = $1 AND state IN ('scheduled', 'running') RETURNING id`, accountID, reason)
	return ids, translate(err)
}
