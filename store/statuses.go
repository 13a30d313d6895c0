package store

import (
	"context"
	"fmt"
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
// one message.status event in the same statement when the account has an enabled webhook
// endpoint (applyStatusSQL says why only then).

// StatusRank returns the rank of a message status; an unknown status ranks -1. It is the Go
// twin of the SQL function status_rank (its body is in store/schema.sql), which every
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
	// Pricing is how the platform says it billed the message, nil when the report has none.
	Pricing *Pricing
}

// Pricing is the platform's billing of a message as a status report gives it.
type Pricing struct {
	Type     string `json:"type,omitempty"`     // regular, free_customer_service or free_entry_point
	Category string `json:"category,omitempty"` // marketing, utility, authentication, service, ...
	Model    string `json:"model,omitempty"`    // the pricing model, e.g. PMP
}

// StatusResult says what ApplyStatus did.
type StatusResult struct {
	// Found: the account has a sent message with that platform id.
	Found bool
	// Changed: the report moved the message's status (and wrote a message.status event if the
	// account has an enabled webhook endpoint).
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
// The event is written only when the account has an enabled webhook endpoint (fansOutOf): an
// event is read only through its deliveries (the dispatcher, the delivery and request logs,
// a redelivery), and the fan-out makes deliveries only for the endpoints enabled when the
// event is written, so an event without one would never be read; retention would delete it
// unread. Status events are two or three per message, most of the events table.
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
// A report that carries the platform's pricing keeps it on the message (pricing_type,
// pricing_category, pricing_model: a field the report leaves out keeps its stored value) when
// the report updates the message, and its event carries it as pricing. Those columns are in no
// index, so the update stays heap-only.
//
// The event's created_at is the clock time, not the transaction's start, so the reports
// ApplyParkedStatuses applies in one transaction get events in rank order.
//
// The statement takes a batch of reports, one per element of the JSON array $1 (statusRow, in
// order of i; batch.go says why JSON), for any accounts, each for a different (account, platform id): two reports of one message
// in one statement would meet in the UPDATE, which changes a row once (ApplyStatusWrites
// refuses such a batch). The status path batches concurrent deliveries into it (group commit,
// server/groupcommit); ApplyStatus and the parked reports run it with one element.
//
// It returns, per element in order: found, changed, and fans (the change wrote its event, which
// fans out: the endpoint probe is made once, where the event is written).
var applyStatusSQL = `WITH r AS (
		SELECT * FROM jsonb_to_recordset($1::jsonb) AS r (i int, account_id bigint, wamid text, status text, rank int,
			at timestamptz, code int, title text, details text, stamp text, callback bigint, body text,
			pricing jsonb)
	), m AS (
		SELECT r.i, x.id, x.status, CASE r.status WHEN 'sent' THEN x.sent_at WHEN 'delivered' THEN x.delivered_at
			WHEN 'read' THEN x.read_at ELSE x.failed_at END AS at
		FROM r JOIN messages x ON x.account_id = r.account_id AND x.platform_message_id = r.wamid AND x.direction = 'out'
	), u AS (
		UPDATE messages SET
			status = CASE WHEN status_rank(messages.status) < r.rank THEN r.status ELSE messages.status END,
			sent_at = CASE WHEN r.status = 'sent' THEN COALESCE(messages.sent_at, r.at) ELSE messages.sent_at END,
			delivered_at = CASE WHEN r.status = 'delivered' THEN COALESCE(messages.delivered_at, r.at)
				ELSE messages.delivered_at END,
			read_at = CASE WHEN r.status = 'read' THEN COALESCE(messages.read_at, r.at) ELSE messages.read_at END,
			failed_at = CASE WHEN r.status = 'failed' THEN COALESCE(messages.failed_at, r.at) ELSE messages.failed_at END,
			error_code = CASE WHEN r.status = 'failed' AND status_rank(messages.status) < 9 THEN r.code ELSE messages.error_code END,
			error_title = CASE WHEN r.status = 'failed' AND status_rank(messages.status) < 9 THEN r.title
				ELSE messages.error_title END,
			error_details = CASE WHEN r.status = 'failed' AND status_rank(messages.status) < 9 THEN r.details
				ELSE messages.error_details END,
			pricing_type = COALESCE(r.pricing->>'type', messages.pricing_type),
			pricing_category = COALESCE(r.pricing->>'category', messages.pricing_category),
			pricing_model = COALESCE(r.pricing->>'model', messages.pricing_model)
		FROM m JOIN r ON r.i = m.i
		WHERE messages.id = m.id AND messages.account_id = r.account_id
			AND (status_rank(m.status) BETWEEN 0 AND r.rank - 1 OR m.at IS NULL)
			AND (status_rank(messages.status) BETWEEN 0 AND r.rank - 1
				OR CASE r.status WHEN 'sent' THEN messages.sent_at WHEN 'delivered' THEN messages.delivered_at
					WHEN 'read' THEN messages.read_at ELSE messages.failed_at END IS NULL)
		RETURNING r.i, messages.id, messages.conversation_id, messages.client_reference,
			messages.status = r.status AS moved
	), e AS (
		INSERT INTO events (account_id, type, data, created_at)
		SELECT r.account_id, 'message.status', jsonb_build_object(
				'message_id', u.id, 'chat_message_id', r.wamid, 'conversation_id', u.conversation_id,
				'status', r.status, 'timestamp', r.stamp)
			|| jsonb_strip_nulls(jsonb_build_object('client_reference', u.client_reference))
			|| CASE WHEN r.status = 'failed' AND r.code IS NOT NULL
				THEN jsonb_build_object('error', jsonb_strip_nulls(jsonb_build_object(
					'code', r.code, 'title', COALESCE(r.title, ''), 'details', r.details)))
				ELSE '{}'::jsonb END
			|| CASE WHEN r.pricing IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('pricing', r.pricing) END,
			clock_timestamp()
		FROM u JOIN r ON r.i = u.i WHERE u.moved AND ` + fansOutOf("r.account_id") + `
		ORDER BY u.i
		RETURNING account_id, data->>'chat_message_id' AS wamid
	), p AS (
		INSERT INTO parked_statuses (account_id, platform_message_id, status, occurred_at, error_code, error_title, error_details,
			callback_message_id, pricing)
		SELECT r.account_id, r.wamid, r.status, r.at, r.code, r.title, r.details, NULLIF(r.callback, 0), r.pricing
		FROM r WHERE NOT EXISTS (SELECT 1 FROM m WHERE m.i = r.i)
		ON CONFLICT (account_id, platform_message_id, status) DO NOTHING
		RETURNING account_id, platform_message_id
	), raw AS (
		INSERT INTO platform_webhooks (body)
		SELECT decode(r.body, 'base64') FROM r
		WHERE length(r.body) > 0 AND (EXISTS (SELECT 1 FROM u WHERE u.i = r.i)
			OR EXISTS (SELECT 1 FROM p WHERE p.account_id = r.account_id AND p.platform_message_id = r.wamid))
		ORDER BY r.i
	)
	SELECT r.i, EXISTS (SELECT 1 FROM m WHERE m.i = r.i) AS found, COALESCE(u.moved, false) AS changed,
		EXISTS (SELECT 1 FROM e WHERE e.account_id = r.account_id AND e.wamid = r.wamid) AS fans
	FROM r LEFT JOIN u ON u.i = r.i ORDER BY r.i`

const messageRecordedSQL = `SELECT EXISTS (SELECT 1 FROM messages
	WHERE account_id = $1 AND platform_message_id = $2 AND direction = 'out')`

// StatusWrite is one status report to apply to an account's message, with the raw webhook
// delivery that carried it (Body, stored in the same statement when the report writes
// anything; nil stores nothing).
type StatusWrite struct {
	AccountID int64
	Report    StatusReport
	Body      []byte
}

// StatusApplied is what ApplyStatusWrites did for one write; SettleStatus completes it.
type StatusApplied struct {
	Found   bool `db:"found"`
	Changed bool `db:"changed"`
	Fans    bool `db:"fans"` // the change's event fans out to a delivery
	I       int  `db:"i"`
}

// statusRow is one element of applyStatusSQL's $1.
type statusRow struct {
	I         int    `json:"i"` // from 1, the order of the results
	AccountID int64  `json:"account_id"`
	Wamid     string `json:"wamid"`
	Status    string `json:"status"`
	Rank      int    `json:"rank"`
	At        string `json:"at"` // occurred_at, RFC 3339 with the platform's precision
	// The platform's error, null when it gave none: a title only with a code, details only
	// when not empty.
	Code     *int    `json:"code"`
	Title    *string `json:"title"`
	Details  *string `json:"details"`
	Stamp    string  `json:"stamp"`    // occurred_at in whole seconds, for the event
	Callback int64   `json:"callback"` // the callback message id, 0 for none
	Body     []byte  `json:"body"`     // the raw webhook body to store with the change (base64; null for none)
	// The platform's pricing, null for none; kept on the message and put in the event.
	Pricing *Pricing `json:"pricing"`
}

// statusRows are ws as applyStatusSQL's $1.
func statusRows(ws []StatusWrite) []statusRow {
	rows := make([]statusRow, len(ws))
	for i, w := range ws {
		r := w.Report
		at := r.OccurredAt.UTC()
		rows[i] = statusRow{I: i + 1, AccountID: w.AccountID, Wamid: r.PlatformMessageID, Status: r.Status,
			Rank: StatusRank(r.Status), At: at.Format(time.RFC3339Nano), Stamp: at.Format(time.RFC3339),
			Callback: r.CallbackMessageID, Body: w.Body}
		if p := r.Pricing; p != nil && (p.Type != "" || p.Category != "" || p.Model != "") {
			rows[i].Pricing = p
		}
		if r.ErrorCode != nil {
			code, title := *r.ErrorCode, r.ErrorTitle
			rows[i].Code, rows[i].Title = &code, &title
			if r.ErrorDetails != "" {
				details := r.ErrorDetails
				rows[i].Details = &details
			}
		}
	}
	return rows
}

// ApplyStatusWrites applies the writes in one statement (applyStatusSQL: each report as
// ApplyStatus describes, the bodies stored with the changes) and returns what it did for each,
// in order. Reports that found no message are parked by it; SettleStatus finishes those (the
// re-check, the adoption) and must be called for every write. Nothing is written when it fails:
// for a status other than sent, delivered, read or failed, for two writes of one (account,
// platform id), or when the database fails.
func (s *Store) ApplyStatusWrites(ctx context.Context, ws []StatusWrite) ([]StatusApplied, error) {
	type key struct {
		account int64
		wamid   string
	}
	seen := make(map[key]bool, len(ws))
	for _, w := range ws {
		if StatusRank(w.Report.Status) < 1 {
			return nil, fmt.Errorf("apply status: unknown status %q", w.Report.Status)
		}
		k := key{w.AccountID, w.Report.PlatformMessageID}
		if seen[k] {
			return nil, fmt.Errorf("apply status: two reports for %s in one batch", k.wamid)
		}
		seen[k] = true
	}
	arg, err := jsonArg(statusRows(ws))
	if err != nil {
		return nil, err
	}
	st, err := s.prepared(ctx, applyStatusSQL)
	if err != nil {
		return nil, err
	}
	out := make([]StatusApplied, 0, len(ws))
	if err := st.SelectContext(ctx, &out, arg); err != nil {
		return nil, translate(err)
	}
	if len(out) != len(ws) {
		return nil, fmt.Errorf("apply status: %d results for %d reports", len(out), len(ws))
	}
	for _, a := range out {
		if a.Fans {
			s.eventsWritten()
			break
		}
	}
	return out, nil
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
// whose recording failed) adopts the wamid — the message is recorded as sent (as RecordSentWrites
// would have, with the report's time) and the parked report is applied at once.
//
// It fails with an error for a status other than sent, delivered, read or failed, or when the
// database fails.
func (s *Store) ApplyStatus(ctx context.Context, accountID int64, r StatusReport) (StatusResult, error) {
	return s.applyWrite(ctx, StatusWrite{AccountID: accountID, Report: r})
}

// applyWrite is ApplyStatus for one write, with its body when it has one: ApplyStatusWrites
// with that write alone, then SettleStatus. It fails as ApplyStatus does.
func (s *Store) applyWrite(ctx context.Context, w StatusWrite) (StatusResult, error) {
	a, err := s.ApplyStatusWrites(ctx, []StatusWrite{w})
	if err != nil {
		return StatusResult{}, err
	}
	return s.SettleStatus(ctx, w, a[0])
}

// SettleStatus completes a write ApplyStatusWrites applied: a found report is done; a parked
// one is checked again with a fresh snapshot (see ApplyStatus) and applied or adopted when its
// message has appeared meanwhile. It fails only when the database does.
func (s *Store) SettleStatus(ctx context.Context, w StatusWrite, a StatusApplied) (StatusResult, error) {
	if a.Found {
		return StatusResult{Found: true, Changed: a.Changed}, nil
	}
	accountID, r := w.AccountID, w.Report
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
	a, err := s.recordSent(ctx, SentWrite{AccountID: accountID, MessageID: messageID, PlatformMessageID: wamid, At: at})
	if err != nil || !a.Recorded {
		return false, 0, err
	}
	changed, err = s.applyParked(ctx, accountID, wamid)
	return true, changed, err
}
