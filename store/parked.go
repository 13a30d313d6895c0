package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// ApplyParkedStatuses applies, in rank order, the status reports parked for the account's
// platform message id, and deletes them; each real change writes its message.status event (when
// the account has an enabled webhook endpoint, as every status report).
// Call it after the platform id has been committed on the message row (not inside the
// transaction that records it, or the race ApplyStatus closes reopens). Calling it when nothing
// is parked costs one statement; calling it twice, or concurrently, is harmless. When the
// message is still unknown the reports stay parked. It fails only when the database does,
// and then nothing is lost: the deletion rolls back.
func (s *Store) ApplyParkedStatuses(ctx context.Context, accountID int64, platformMessageID string) error {
	_, err := s.applyParked(ctx, accountID, platformMessageID)
	return err
}

type parkedRow struct {
	Status       string    `db:"status"`
	OccurredAt   time.Time `db:"occurred_at"`
	ErrorCode    *int      `db:"error_code"`
	ErrorTitle   *string   `db:"error_title"`
	ErrorDetails *string   `db:"error_details"`
	CallbackID   *int64    `db:"callback_message_id"`
	Pricing      []byte    `db:"pricing"` // JSON of a Pricing, nil for none
}

// applyParked returns how many parked reports changed the message.
func (s *Store) applyParked(ctx context.Context, accountID int64, platformMessageID string) (changed int, err error) {
	take, err := s.prepared(ctx, `DELETE FROM parked_statuses WHERE account_id = $1 AND platform_message_id = $2
		RETURNING status, occurred_at, error_code, error_title, error_details, callback_message_id, pricing`)
	if err != nil {
		return 0, err
	}
	apply, err := s.prepared(ctx, applyStatusSQL)
	if err != nil {
		return 0, err
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, translate(err)
	}
	defer tx.Rollback()
	var rows []parkedRow
	if err := tx.StmtxContext(ctx, take).SelectContext(ctx, &rows, accountID, platformMessageID); err != nil {
		return 0, translate(err)
	}
	if len(rows) == 0 {
		return 0, nil
	}
	slices.SortFunc(rows, func(a, b parkedRow) int { return StatusRank(a.Status) - StatusRank(b.Status) })
	st := tx.StmtxContext(ctx, apply)
	for _, p := range rows {
		r := StatusReport{PlatformMessageID: platformMessageID, Status: p.Status, OccurredAt: p.OccurredAt, ErrorCode: p.ErrorCode}
		if p.ErrorTitle != nil {
			r.ErrorTitle = *p.ErrorTitle
		}
		if p.ErrorDetails != nil {
			r.ErrorDetails = *p.ErrorDetails
		}
		if p.CallbackID != nil {
			r.CallbackMessageID = *p.CallbackID
		}
		if p.Pricing != nil {
			r.Pricing = &Pricing{}
			if err := json.Unmarshal(p.Pricing, r.Pricing); err != nil {
				return 0, fmt.Errorf("parked pricing: %w", err)
			}
		}
		arg, err := jsonArg(statusRows([]StatusWrite{{AccountID: accountID, Report: r}}))
		if err != nil {
			return 0, err
		}
		var row StatusApplied
		if err := st.GetContext(ctx, &row, arg); err != nil {
			return 0, translate(err)
		}
		if row.Changed {
			changed++
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, translate(err)
	}
	if changed > 0 {
		s.eventsWritten()
	}
	return changed, nil
}

// ReconcileParkedStatuses is the safety net the reconciliation service (server/worker/reconcile.go)
// runs: it applies parked reports whose message has been recorded since (which
// ApplyParkedStatuses and ApplyStatus already do on their own), at most limit platform ids per
// call, and returns how many ids it handled. It
// fails only when the database does.
func (s *Store) ReconcileParkedStatuses(ctx context.Context, limit int) (int, error) {
	var ids []struct {
		AccountID         int64  `db:"account_id"`
		PlatformMessageID string `db:"platform_message_id"`
	}
	err := s.db.SelectContext(ctx, &ids, `SELECT DISTINCT p.account_id, p.platform_message_id FROM parked_statuses p
		JOIN messages m ON m.account_id = p.account_id AND m.platform_message_id = p.platform_message_id AND m.direction = 'out'
		LIMIT $1`, limit)
	if err != nil {
		return 0, translate(err)
	}
	for _, id := range ids {
		if _, err := s.applyParked(ctx, id.AccountID, id.PlatformMessageID); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}

// AdoptParkedByCallback is the reconciler's pass over unknown outcomes: for parked reports of
// a wamid no message has, whose callback data names a pending message of the same account, the
// message adopts the wamid and the reports are applied (see ApplyStatus). At most limit wamids
// per call; it returns how many were adopted, and fails only when the database does.
func (s *Store) AdoptParkedByCallback(ctx context.Context, limit int) (int, error) {
	var rows []struct {
		AccountID         int64     `db:"account_id"`
		PlatformMessageID string    `db:"platform_message_id"`
		MessageID         int64     `db:"message_id"`
		At                time.Time `db:"at"`
	}
	err := s.db.SelectContext(ctx, &rows, `SELECT p.account_id, p.platform_message_id, min(p.callback_message_id) AS message_id,
			min(p.occurred_at) AS at
		FROM parked_statuses p JOIN messages m ON m.account_id = p.account_id AND m.id = p.callback_message_id
			AND m.direction = 'out' AND m.status = 'pending'
		WHERE p.callback_message_id IS NOT NULL
		GROUP BY p.account_id, p.platform_message_id LIMIT $1`, limit)
	if err != nil {
		return 0, translate(err)
	}
	adopted := 0
	for _, r := range rows {
		ok, _, err := s.adoptByCallback(ctx, r.AccountID, r.MessageID, r.PlatformMessageID, r.At)
		if err != nil {
			return adopted, err
		}
		if ok {
			adopted++
		}
	}
	return adopted, nil
}
