package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Delivery statuses the platform reports, applied monotonically; a report for a message not
// yet recorded is parked (parked.go).
//
// Status ranks: pending 0 < sent 1 < delivered 2 < read 3 < failed 9. A report is applied only
// when its rank is higher than the stored one, so duplicates and late reports change nothing,
// read without delivered is a valid move, and nothing leaves failed. Every distinct reported
// status keeps the platform's timestamp in its column of the message (sent_at, delivered_at,
// read_at, failed_at), whether or not it changed the current status; each real change writes
// one message.status event in the same statement.

// StatusRank returns the rank of a message status; an unknown status ranks -1. It is the Go
// twin of the SQL function status_rank (migrations/000012_status_rank_fn.up.sql), which every
// statement that ranks uses; TestStatusRankAgreesWithSQL keeps the two equal.
func StatusRank(status string) int {
	switch status {
	case "pending":
		return 0
	case "sent":
		return 1
	case "delivered":
		return 2
	case "read":
		return 3
	case "failed":
		return 9
	}
	return -1
}

// StatusReport is one delivery status the platform reported for a message the account sent.
type StatusReport struct {
	PlatformMessageID string    // the wamid
	Status            string    // sent, delivered, read or failed
	OccurredAt        time.Time // when the platform says it happened
	// The platform's error, for failed (ErrorCode nil when it gave none).
	ErrorCode    *int
	ErrorTitle   string
	ErrorDetails string
	// CallbackMessageID is our message id as the platform echoed it in biz_opaque_callback_data
	// (0 when absent): a report for an unknown wamid adopts that wamid for the account's
	// pending message with this id (see ApplyStatus).
	CallbackMessageID int64
}

// StatusResult says what ApplyStatus did.
type StatusResult struct {
	// Found: the account has a sent message with that platform id.
	Found bool
	// Changed: the report moved the message's status (and wrote a message.status event).
	Changed bool
	// Parked: no such message yet; the report was parked until the send is recorded. When the
	// message appeared meanwhile the parked reports were applied at once, and Found/Changed
	// are those of that application.
	Parked bool
	// Adopted: the wamid was unknown, and the callback data named the account's pending
	// message, which took the wamid (recorded as sent, then the report applied).
	Adopted bool
}

// applyStatusSQL is the whole status path in one statement: the guarded UPDATE (the status
// moves only when its rank rises; the reported status's time is kept once, whether or not it
// moved the status), the message.status event when the status moved, and the parked row when
// the message is not known (yet).
//
// The history is four columns of the message (sent_at, delivered_at, read_at, failed_at), so a
// report writes at most one row of messages, and no index of messages names a column the
// delivered and read updates change: they are heap-only (migrations/000017_status_columns).
//
// A report that changes nothing (a duplicate, or a lower status whose time is already kept)
// costs one index read and writes nothing: m reads the message once by (account, platform id),
// and the UPDATE runs only for a row m saw below the reported rank or without that status's
// time. A late report of a lower status never reported before (delivered after read) still
// keeps its time, as documented above.
//
// Concurrent reports for one message serialise on the row lock of the UPDATE, and under READ
// COMMITTED the guard is re-evaluated on the newest row version, so two reports never both
// "raise" the status past each other and each real change writes exactly one event. A row's
// status always has its time (every path that sets a status sets its column), so the status
// moved exactly when the updated row's status is the reported one and was not before: the
// guard lets a row at that status through only when its time is missing, which never happens.
//
// The event's created_at is the clock time, not the transaction's start, so the reports
// ApplyParkedStatuses applies in one transaction get events in rank order.
//
// $1 account, $2 platform id, $3 status, $4 its rank, $5 occurred_at, $6 error code,
// $7 error title, $8 error details, $9 occurred_at as RFC 3339 for the event, $10 the callback
// message id (0 for none).
const applyStatusSQL = `WITH m AS (
		SELECT id, status, CASE $3::text WHEN 'sent' THEN sent_at WHEN 'delivered' THEN delivered_at
			WHEN 'read' THEN read_at ELSE failed_at END AS at
		FROM messages
		WHERE account_id = $1 AND platform_message_id = $2::text AND direction = 'out'
	), u AS (
		UPDATE messages SET
			status = CASE WHEN status_rank(messages.status) < $4::int THEN $3::text ELSE messages.status END,
			sent_at = CASE WHEN $3::text = 'sent' THEN COALESCE(messages.sent_at, $5::timestamptz) ELSE messages.sent_at END,
			delivered_at = CASE WHEN $3::text = 'delivered' THEN COALESCE(messages.delivered_at, $5::timestamptz)
				ELSE messages.delivered_at END,
			read_at = CASE WHEN $3::text = 'read' THEN COALESCE(messages.read_at, $5::timestamptz) ELSE messages.read_at END,
			failed_at = CASE WHEN $3::text = 'failed' THEN COALESCE(messages.failed_at, $5::timestamptz) ELSE messages.failed_at END,
			error_code = CASE WHEN $3::text = 'failed' AND status_rank(messages.status) < 9 THEN $6::int ELSE messages.error_code END,
			error_title = CASE WHEN $3::text = 'failed' AND status_rank(messages.status) < 9 THEN $7::text
				ELSE messages.error_title END,
			error_details = CASE WHEN $3::text = 'failed' AND status_rank(messages.status) < 9 THEN $8::text
				ELSE messages.error_details END
		FROM m
		WHERE messages.id = m.id AND messages.account_id = $1
			AND (status_rank(m.status) BETWEEN 0 AND $4::int - 1 OR m.at IS NULL)
			AND (status_rank(messages.status) BETWEEN 0 AND $4::int - 1
				OR CASE $3::text WHEN 'sent' THEN messages.sent_at WHEN 'delivered' THEN messages.delivered_at
					WHEN 'read' THEN messages.read_at ELSE messages.failed_at END IS NULL)
		RETURNING messages.id, messages.conversation_id, messages.client_reference,
			messages.status = $3::text AS moved
	), e AS (
		INSERT INTO events (account_id, type, data, created_at)
		SELECT $1, 'message.status', jsonb_build_object(
				'message_id', u.id, 'chat_message_id', $2::text, 'conversation_id', u.conversation_id,
				'status', $3::text, 'timestamp', $9::text)
			|| jsonb_strip_nulls(jsonb_build_object('client_reference', u.client_reference))
			|| CASE WHEN $3::text = 'failed' AND $6::int IS NOT NULL
				THEN jsonb_build_object('error', jsonb_strip_nulls(jsonb_build_object(
					'code', $6::int, 'title', COALESCE($7::text, ''), 'details', $8::text)))
				ELSE '{}'::jsonb END,
			clock_timestamp()
		FROM u WHERE u.moved
	), p AS (
		INSERT INTO parked_statuses (account_id, platform_message_id, status, occurred_at, error_code, error_title, error_details,
			callback_message_id)
		SELECT $1, $2::text, $3::text, $5::timestamptz, $6::int, $7::text, $8::text, NULLIF($10::bigint, 0)
		WHERE NOT EXISTS (SELECT 1 FROM m)
		ON CONFLICT (account_id, platform_message_id, status) DO NOTHING
		RETURNING 1
	)
	SELECT EXISTS (SELECT 1 FROM m) AS found, EXISTS (SELECT 1 FROM u WHERE u.moved) AS changed,
		EXISTS (SELECT 1 FROM u WHERE u.moved) AND ` + fansOutSQL + ` AS fans`

const messageRecordedSQL = `SELECT EXISTS (SELECT 1 FROM messages
	WHERE account_id = $1 AND platform_message_id = $2 AND direction = 'out')`

func statusArgs(accountID int64, r StatusReport) []any {
	var title, details *string
	if r.ErrorCode != nil {
		title, details = &r.ErrorTitle, nil
		if r.ErrorDetails != "" {
			details = &r.ErrorDetails
		}
	}
	at := r.OccurredAt.UTC()
	return []any{accountID, r.PlatformMessageID, r.Status, StatusRank(r.Status), at,
		r.ErrorCode, title, details, at.Format(time.RFC3339), r.CallbackMessageID}
}

type statusRow struct {
	Found   bool `db:"found"`
	Changed bool `db:"changed"`
	Fans    bool `db:"fans"` // the change's event fans out to a delivery
}

// ApplyStatus applies one status report to the account's message with that platform id, in
// one prepared statement (see the package notes on ranks). When the account has no such
// message yet the report is parked; the send side applies it through ApplyParkedStatuses once
// it has recorded the platform id.
//
// The race between the two sides (a report parked just after ApplyParkedStatuses looked) is
// closed here: after parking, ApplyStatus checks again in a new statement whether the message
// has appeared, and if so applies the parked reports itself. Either ApplyParkedStatuses' read
// comes after the park committed (and it sees the parked row), or it came before, and then the
// platform id was already committed when this re-check runs. Applying twice is harmless.
//
// Unknown outcomes are reconciled here: a report for a wamid the account does not know whose
// CallbackMessageID names the account's pending message (a send whose answer was lost, or
// whose recording failed) adopts the wamid — the message is recorded as sent (as RecordSent
// would have, with the report's time) and the parked report is applied at once.
//
// It fails with an error for a status other than sent, delivered, read or failed, or when the
// database fails.
func (s *Store) ApplyStatus(ctx context.Context, accountID int64, r StatusReport) (StatusResult, error) {
	return s.applyStatus(ctx, accountID, r, nil)
}

// applyStatusRecordingSQL is applyStatusSQL that also stores the raw webhook body ($11) in the
// same statement, so the common delivery (one status) costs one round trip and one commit. The
// body is stored when the report wrote something (a status change, a status's time, a parked
// report); a report that changed nothing (a duplicate) leaves no trace, so it writes nothing.
var applyStatusRecordingSQL = strings.Replace(applyStatusSQL, "\n\tSELECT EXISTS (SELECT 1 FROM m) AS found",
	`, raw AS (
		INSERT INTO platform_webhooks (body) SELECT $11::bytea
		WHERE EXISTS (SELECT 1 FROM u) OR EXISTS (SELECT 1 FROM p)
	)
	SELECT EXISTS (SELECT 1 FROM m) AS found`, 1)

// ApplyStatusRecordingWebhook is ApplyStatus for a delivery that carries just this one status: it
// stores the raw webhook body (as RecordPlatformWebhook does) in the same statement as the
// status change, so both commit together; a report that changes nothing (a duplicate) is not
// stored and writes nothing. It fails as ApplyStatus does.
func (s *Store) ApplyStatusRecordingWebhook(ctx context.Context, accountID int64, r StatusReport, body []byte) (StatusResult, error) {
	return s.applyStatus(ctx, accountID, r, body)
}

func (s *Store) applyStatus(ctx context.Context, accountID int64, r StatusReport, body []byte) (StatusResult, error) {
	if StatusRank(r.Status) < 1 {
		return StatusResult{}, fmt.Errorf("apply status: unknown status %q", r.Status)
	}
	var row statusRow
	q, args := applyStatusSQL, statusArgs(accountID, r)
	if body != nil {
		q, args = applyStatusRecordingSQL, append(args, body)
	}
	if err := s.getPrepared(ctx, &row, q, args...); err != nil {
		return StatusResult{}, err
	}
	if row.Found {
		if row.Fans {
			s.eventsWritten()
		}
		return StatusResult{Found: true, Changed: row.Changed}, nil
	}
	// Parked. Re-check with a fresh snapshot (see above).
	var appeared bool
	if err := s.getPrepared(ctx, &appeared, messageRecordedSQL, accountID, r.PlatformMessageID); err != nil {
		return StatusResult{Parked: true}, err
	}
	if !appeared {
		if r.CallbackMessageID <= 0 {
			return StatusResult{Parked: true}, nil
		}
		adopted, n, err := s.adoptByCallback(ctx, accountID, r.CallbackMessageID, r.PlatformMessageID, r.OccurredAt)
		return StatusResult{Parked: true, Found: adopted, Changed: adopted || n > 0, Adopted: adopted}, err
	}
	n, err := s.applyParked(ctx, accountID, r.PlatformMessageID)
	return StatusResult{Parked: true, Found: true, Changed: n > 0}, err
}

// adoptByCallback gives the wamid to the account's pending message messageID (the unknown
// outcome of its send is now known: the platform accepted it) and applies the reports parked
// for the wamid. adopted is false, and nothing is written, when the account has no such
// pending message; changed counts the parked reports that changed it.
func (s *Store) adoptByCallback(ctx context.Context, accountID, messageID int64, wamid string, at time.Time) (adopted bool, changed int, err error) {
	var r recorded
	if err := s.getPrepared(ctx, &r, recordSentSQL, accountID, messageID, wamid, statusTime(at), ""); err != nil {
		return false, 0, err
	}
	if r.N == 0 {
		return false, 0, nil
	}
	if r.Fans {
		s.eventsWritten()
	}
	changed, err = s.applyParked(ctx, accountID, wamid)
	return true, changed, err
}
