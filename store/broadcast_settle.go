package store

import (
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// The marks before the platform calls, in one statement for many recipients, and what a
// recipient whose answer was not recorded comes to.
//
// The mark (MarkBroadcastsSending) makes the recipient's idempotency key (BroadcastKey),
// unbound; the engine's sender (the gateway's send path) records a message row before its
// platform call and binds that key to it in the same statement. So after a crash the row a
// recipient left 'sending' tells what happened: no message bound means the call never
// happened (the recipient is due again); a message with the platform's id means it was sent; a
// message refused by the platform means it was not sent; a message still pending means the
// call may have happened (unknown until the platform's status report gives it an id:
// SettleBroadcastRecipients adopts it then).

// broadcastKeyPrefix starts the idempotency key of a broadcast recipient's send; customers'
// keys are stored with their mode as prefix ("live:", "test:"), so the two never meet.
const broadcastKeyPrefix = "broadcast:"

// BroadcastKey is the idempotency key the engine's sender binds to the message of the
// recipient's send (SendInput.IdempotencyKey).
func BroadcastKey(recipientID int64) string {
	return broadcastKeyPrefix + strconv.FormatInt(recipientID, 10)
}

// RecipientMark is one claimed recipient to mark sending.
type RecipientMark struct {
	AccountID int64     `json:"account_id"`
	ID        int64     `json:"id"`
	Claim     string    `json:"claim"`
	At        time.Time `json:"at"`
}

// MarkBroadcastsSending marks claimed recipients as being sent, in one statement, before their
// platform calls, makes each marked one's idempotency key (BroadcastKey, unbound, for its
// sender to bind to its message), and reports for each whether it was marked. A recipient is
// not marked (and must not be called) when its claim is no longer the caller's (the lease ran
// out and another engine took it) or its broadcast is not running (paused or cancelled since
// the claim). A pause for the portfolio's budget stops claims, not the recipients already
// claimed: they hold their share of the budget.
func (s *Store) MarkBroadcastsSending(ctx context.Context, ms []RecipientMark) ([]bool, error) {
	out := make([]bool, len(ms))
	if len(ms) == 0 {
		return out, nil
	}
	data, err := json.Marshal(ms)
	if err != nil {
		return nil, err
	}
	st, err := s.prepared(ctx, `WITH x AS (
			SELECT row_number() OVER () - 1 AS i, * FROM jsonb_to_recordset($1::jsonb)
				AS x(account_id bigint, id bigint, claim uuid, at timestamptz)
		), u AS (
			UPDATE broadcast_recipients r SET state = 'sending', sending_at = x.at, attempts = r.attempts + 1, claim = NULL
			FROM x WHERE r.account_id = x.account_id AND r.id = x.id AND r.state = 'pending' AND r.claim = x.claim
				AND EXISTS (SELECT FROM broadcasts b WHERE b.account_id = r.account_id AND b.id = r.broadcast_id
					AND (b.state = 'running' OR (b.state = 'paused' AND b.pause_reason = $2)))
			RETURNING r.account_id, r.id
		), k AS (
			INSERT INTO idempotency_keys (account_id, key, fingerprint)
			SELECT u.account_id, $3 || u.id, '\x'::bytea FROM u ORDER BY 1, 2
			ON CONFLICT (account_id, key) DO UPDATE SET message_id = NULL, status_code = NULL, response = NULL, created_at = now()
		)
		SELECT x.i FROM x JOIN u ON u.account_id = x.account_id AND u.id = x.id`)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, data, PausePortfolioLimit, broadcastKeyPrefix)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var i int
		if err := rows.Scan(&i); err != nil {
			return nil, translate(err)
		}
		out[i] = true
	}
	return out, translate(rows.Err())
}

// SettleCounts is what SettleBroadcastRecipients changed.
type SettleCounts struct {
	Due     int64 // sending, no call happened: due again
	Sent    int64 // the platform accepted the call (its id is known now)
	Failed  int64
	Unknown int64 // sending, the call may have happened: unknown
}

// settleBatch bounds the recipients one SettleBroadcastRecipients settles.
const settleBatch = 5000

// SettleBroadcastRecipients settles, from the messages their keys name, the recipients marked
// sending before cutoff (their process died, or gave up on the answer) and the unknown ones
// whose message the platform has reported since: no message bound, or one the platform
// refused, and the recipient is due again at now; a message with the platform's id and the
// recipient is sent (failed when the message failed); a message still pending and the
// recipient is unknown.
//
// resendBefore, when not zero, gives up on unknown recipients marked before it whose message
// the platform never reported: they are taken as never sent and are due again. The platform
// reports every message it accepts, so past a horizon longer than its reports' delays this
// trades a rare second send (a report later than the horizon) for no recipient skipped (the
// process died after recording the message and before the platform had the request).
func (s *Store) SettleBroadcastRecipients(ctx context.Context, cutoff, now, resendBefore time.Time) (SettleCounts, error) {
	var c SettleCounts
	rows, err := s.db.QueryContext(ctx, `WITH x AS (
			SELECT r.account_id, r.id, m.platform_message_id AS wamid, m.error_code, m.error_title,
				CASE WHEN m.platform_message_id IS NOT NULL AND m.status = 'failed' THEN 'failed'
					WHEN m.platform_message_id IS NOT NULL THEN 'sent'
					WHEN r.state = 'unknown' AND r.sending_at < $5 THEN 'pending'
					WHEN r.state = 'unknown' THEN 'unknown'
					WHEN m.id IS NULL OR m.status = 'failed' THEN 'pending'
					ELSE 'unknown' END AS settled
			FROM broadcast_recipients r
			LEFT JOIN idempotency_keys k ON k.account_id = r.account_id AND k.key = $3 || r.id
			LEFT JOIN messages m ON m.account_id = r.account_id AND m.id = k.message_id
			WHERE (r.state = 'sending' AND r.sending_at < $1) OR r.state = 'unknown'
			ORDER BY r.id LIMIT $4
			FOR UPDATE OF r SKIP LOCKED
		)
		UPDATE broadcast_recipients r SET state = x.settled,
			message_id = coalesce(x.wamid, r.message_id),
			error_code = CASE WHEN x.settled = 'failed' THEN x.error_code ELSE r.error_code END,
			error_title = CASE WHEN x.settled = 'failed' THEN coalesce(x.error_title, '') ELSE r.error_title END,
			next_attempt_at = CASE WHEN x.settled = 'pending' THEN $2 ELSE r.next_attempt_at END,
			finished_at = CASE WHEN x.settled IN ('sent', 'failed') THEN $2 END
		FROM x WHERE r.account_id = x.account_id AND r.id = x.id AND x.settled <> r.state
		RETURNING x.settled`, cutoff, now, broadcastKeyPrefix, settleBatch, resendBefore)
	if err != nil {
		return c, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		if err := rows.Scan(&st); err != nil {
			return c, translate(err)
		}
		switch st {
		case RecipientPending:
			c.Due++
		case RecipientSent:
			c.Sent++
		case RecipientFailed:
			c.Failed++
		default:
			c.Unknown++
		}
	}
	return c, translate(rows.Err())
}
