package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// What the platform sends us: raw webhook bodies, delivery statuses (applied monotonically, or
// parked until the send is recorded), inbound messages, sandbox joins and template status
// changes.
//
// Status ranks: pending 0 < sent 1 < delivered 2 < read 3 < failed 9. A report is applied only
// when its rank is higher than the stored one, so duplicates and late reports change nothing,
// read without delivered is a valid move, and nothing leaves failed. Every distinct reported
// status is kept in message_statuses with the platform's timestamp, whether or not it changed
// the current status; each real change writes one message.status event in the same statement.

// StatusRank returns the rank of a message status; an unknown status ranks -1.
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

// RecordPlatformWebhook stores a platform webhook body as received and returns its id. It fails
// only when the database does.
func (s *Store) RecordPlatformWebhook(ctx context.Context, body []byte) (int64, error) {
	var id int64
	err := s.getPrepared(ctx, &id, `INSERT INTO platform_webhooks (body) VALUES ($1) RETURNING id`, body)
	return id, err
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
}

// applyStatusSQL is the whole status path in one statement: the guarded UPDATE (rank must
// rise), the history row (every distinct status, once), the message.status event when the
// UPDATE changed the row, and the parked row when the message is not known (yet).
//
// Concurrent reports for one message serialise on the row lock of the UPDATE, and under READ
// COMMITTED the rank guard is re-evaluated on the newest row version, so two reports never
// both "raise" the status past each other and each real change writes exactly one event.
//
// The event's created_at is the clock time, not the transaction's start, so the reports
// ApplyParkedStatuses applies in one transaction get events in rank order.
//
// $1 account, $2 platform id, $3 status, $4 its rank, $5 occurred_at, $6 error code,
// $7 error title, $8 error details, $9 occurred_at as RFC 3339 for the event.
const applyStatusSQL = `WITH m AS (
		SELECT id FROM messages
		WHERE account_id = $1 AND platform_message_id = $2::text AND direction = 'out'
	), u AS (
		UPDATE messages SET status = $3::text,
			error_code = CASE WHEN $3::text = 'failed' THEN $6::int ELSE error_code END,
			error_title = CASE WHEN $3::text = 'failed' THEN $7::text ELSE error_title END,
			error_details = CASE WHEN $3::text = 'failed' THEN $8::text ELSE error_details END
		WHERE account_id = $1 AND platform_message_id = $2::text AND direction = 'out'
			AND CASE status WHEN 'pending' THEN 0 WHEN 'sent' THEN 1 WHEN 'delivered' THEN 2
				WHEN 'read' THEN 3 WHEN 'failed' THEN 9 ELSE 99 END < $4::int
		RETURNING id, conversation_id, client_reference
	), h AS (
		INSERT INTO message_statuses (account_id, message_id, status, occurred_at)
		SELECT $1, m.id, $3::text, $5::timestamptz FROM m
		ON CONFLICT (message_id, status) DO NOTHING
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
		FROM u
	), p AS (
		INSERT INTO parked_statuses (account_id, platform_message_id, status, occurred_at, error_code, error_title, error_details)
		SELECT $1, $2::text, $3::text, $5::timestamptz, $6::int, $7::text, $8::text
		WHERE NOT EXISTS (SELECT 1 FROM m)
		ON CONFLICT (account_id, platform_message_id, status) DO NOTHING
	)
	SELECT EXISTS (SELECT 1 FROM m) AS found, EXISTS (SELECT 1 FROM u) AS changed`

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
		r.ErrorCode, title, details, at.Format(time.RFC3339)}
}

type statusRow struct {
	Found   bool `db:"found"`
	Changed bool `db:"changed"`
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
// It fails with an error for a status other than sent, delivered, read or failed, or when the
// database fails.
func (s *Store) ApplyStatus(ctx context.Context, accountID int64, r StatusReport) (StatusResult, error) {
	return s.applyStatus(ctx, accountID, r, nil)
}

// applyStatusRecordingSQL is applyStatusSQL that also stores the raw webhook body ($10) in the
// same statement, so the common delivery (one status) costs one round trip and one commit.
var applyStatusRecordingSQL = strings.Replace(applyStatusSQL, "WITH m AS (",
	"WITH raw AS (INSERT INTO platform_webhooks (body) VALUES ($10::bytea)), m AS (", 1)

// ApplyStatusRecordingWebhook is ApplyStatus for a delivery that carries just this one status: it
// stores the raw webhook body (as RecordPlatformWebhook does) in the same statement as the
// status change, so both commit together. It fails as ApplyStatus does.
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
		return StatusResult{Found: true, Changed: row.Changed}, nil
	}
	// Parked. Re-check with a fresh snapshot (see above).
	var appeared bool
	if err := s.getPrepared(ctx, &appeared, messageRecordedSQL, accountID, r.PlatformMessageID); err != nil {
		return StatusResult{Parked: true}, err
	}
	if !appeared {
		return StatusResult{Parked: true}, nil
	}
	n, err := s.applyParked(ctx, accountID, r.PlatformMessageID)
	return StatusResult{Parked: true, Found: true, Changed: n > 0}, err
}

// ApplyParkedStatuses applies, in rank order, the status reports parked for the account's
// platform message id, and deletes them; each real change writes its message.status event.
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
}

// applyParked returns how many parked reports changed the message.
func (s *Store) applyParked(ctx context.Context, accountID int64, platformMessageID string) (changed int, err error) {
	take, err := s.prepared(ctx, `DELETE FROM parked_statuses WHERE account_id = $1 AND platform_message_id = $2
		RETURNING status, occurred_at, error_code, error_title, error_details`)
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
		var row statusRow
		if err := st.GetContext(ctx, &row, statusArgs(accountID, r)...); err != nil {
			return 0, translate(err)
		}
		if row.Changed {
			changed++
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, translate(err)
	}
	return changed, nil
}

// ReconcileParkedStatuses is a safety net for a retention loop: it applies parked reports whose
// message has been recorded since (which ApplyParkedStatuses and ApplyStatus already do on
// their own), at most limit platform ids per call, and returns how many ids it handled. It
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

// InboundMessage is a message a user sent to the account's number.
type InboundMessage struct {
	PlatformMessageID string // the wamid; the same id twice is one message
	// From is the sender's wa_id (digits). FromForms are other forms of the same number (the
	// Mexican, Brazilian and Argentinian variants) tried, after From, against the account's
	// contacts and aliases before a new contact is made.
	From      string
	FromForms []string
	// ProfileName is the sender's WhatsApp profile name: the name of a new contact, and of an
	// existing one whose name is empty.
	ProfileName string
	Type        string    // the platform's message type
	SentAt      time.Time // the platform's timestamp
	Destination string    // the business number it was sent to
	// Content is the message as received, kept on the message row.
	Content json.RawMessage
	// EventFields is a JSON object merged into the message.received data (text, media,
	// location, reply, reaction); nil for none.
	EventFields json.RawMessage
	// Block, when set, blocks (STOP) or unblocks (START) the contact.
	Block *bool
}

// InboundResult is what RecordInbound wrote.
type InboundResult struct {
	MessageID      int64
	ContactID      int64
	ConversationID int64
	ContactCreated bool
	// Duplicate: a message with that platform id was already recorded; nothing was written.
	Duplicate bool
}

const (
	inboundDupSQL = `SELECT EXISTS (SELECT 1 FROM messages WHERE account_id = $1 AND platform_message_id = $2)`
	// The best match: by position of the matched number in $2 (From first), mobile before alias.
	inboundFindContactSQL = `SELECT c.id, c.mobile, c.name, c.blocked FROM (
			SELECT id, 0 AS src, mobile AS matched FROM contacts WHERE account_id = $1 AND mobile = ANY($2::text[])
			UNION ALL
			SELECT contact_id, 1, alias FROM contact_aliases WHERE account_id = $1 AND alias = ANY($2::text[])
		) x JOIN contacts c ON c.account_id = $1 AND c.id = x.id
		ORDER BY array_position($2::text[], x.matched), x.src LIMIT 1`
	// Created, or (under a concurrent creation of the same mobile) the row that won.
	inboundCreateContactSQL = `WITH c AS (
			INSERT INTO contacts (account_id, mobile, name) VALUES ($1, $2, $3)
			ON CONFLICT (account_id, mobile) DO UPDATE SET updated_at = contacts.updated_at
			RETURNING id, mobile, name, blocked, (xmax = 0) AS created
		), e AS (
			INSERT INTO events (account_id, type, data)
			SELECT $1, 'contact.created', jsonb_build_object('contact_id', c.id, 'mobile', c.mobile, 'name', c.name)
			FROM c WHERE c.created
		)
		SELECT * FROM c`
	inboundAliasSQL = `INSERT INTO contact_aliases (account_id, alias, contact_id) VALUES ($1, $2, $3)
		ON CONFLICT (account_id, alias) DO NOTHING`
	inboundContactUpdateSQL = `UPDATE contacts SET
			name = CASE WHEN name = '' THEN $3 ELSE name END,
			blocked = COALESCE($4, blocked), updated_at = now()
		WHERE account_id = $1 AND id = $2`
	// Conversation find-or-create, the message (a duplicate id inserts nothing and returns no
	// row) and its message.received event.
	inboundMessageSQL = `WITH cv AS (
			INSERT INTO conversations (account_id, contact_id, last_inbound_at) VALUES ($1, $2, $3)
			ON CONFLICT (account_id, contact_id) DO UPDATE
				SET last_inbound_at = GREATEST(conversations.last_inbound_at, EXCLUDED.last_inbound_at)
			RETURNING id
		), m AS (
			INSERT INTO messages (account_id, contact_id, conversation_id, direction, type, destination, content,
				platform_message_id, status, sent_at)
			SELECT $1, $2, cv.id, 'in', $4, $5, $6::jsonb, $7, 'received', $3 FROM cv
			ON CONFLICT (account_id, platform_message_id) WHERE platform_message_id IS NOT NULL DO NOTHING
			RETURNING id, conversation_id
		), e AS (
			INSERT INTO events (account_id, type, data)
			SELECT $1, 'message.received', jsonb_build_object('message_id', m.id, 'conversation_id', m.conversation_id,
				'contact_id', $2::bigint, 'from', $8::text, 'name', $9::text, 'type', $4::text) || $10::jsonb
			FROM m
		)
		SELECT id, conversation_id FROM m`
)

// RecordInbound records an inbound message in one transaction: it finds the contact (by From,
// then by the other forms, each as a mobile or an alias) or creates it with a contact.created
// event, keeps From as an alias when it differs from the contact's mobile, fills an empty
// contact name from the profile, applies Block, finds or creates the conversation (setting
// last_inbound_at), inserts the message and writes its message.received event. A message whose
// platform id is already recorded changes nothing and comes back as Duplicate. It fails with
// an error for an empty platform id or sender, and when the database fails (then nothing is
// written).
func (s *Store) RecordInbound(ctx context.Context, accountID int64, in InboundMessage) (InboundResult, error) {
	if in.PlatformMessageID == "" || in.From == "" {
		return InboundResult{}, errors.New("record inbound: platform message id and sender are required")
	}
	stmts, err := s.preparedAll(ctx, inboundDupSQL, inboundFindContactSQL, inboundCreateContactSQL,
		inboundAliasSQL, inboundContactUpdateSQL, inboundMessageSQL)
	if err != nil {
		return InboundResult{}, err
	}
	content := string(in.Content)
	if len(in.Content) == 0 {
		content = "{}"
	}
	fields := string(in.EventFields)
	if len(in.EventFields) == 0 {
		fields = "{}"
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return InboundResult{}, translate(err)
	}
	defer tx.Rollback()
	st := func(i int) *sqlx.Stmt { return tx.StmtxContext(ctx, stmts[i]) }

	var dup bool
	if err := st(0).GetContext(ctx, &dup, accountID, in.PlatformMessageID); err != nil {
		return InboundResult{}, translate(err)
	}
	if dup {
		return InboundResult{Duplicate: true}, nil
	}

	var c struct {
		ID      int64  `db:"id"`
		Mobile  string `db:"mobile"`
		Name    string `db:"name"`
		Blocked bool   `db:"blocked"`
		Created bool   `db:"created"`
	}
	forms := append([]string{in.From}, in.FromForms...)
	err = st(1).GetContext(ctx, &c, accountID, pq.Array(forms))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if err := st(2).GetContext(ctx, &c, accountID, in.From, in.ProfileName); err != nil {
			return InboundResult{}, translate(err)
		}
	case err != nil:
		return InboundResult{}, translate(err)
	}
	if c.Mobile != in.From {
		if _, err := st(3).ExecContext(ctx, accountID, in.From, c.ID); err != nil {
			return InboundResult{}, translate(err)
		}
	}
	blockChange := in.Block != nil && *in.Block != c.Blocked
	if blockChange || (c.Name == "" && in.ProfileName != "") {
		var block *bool
		if blockChange {
			block = in.Block
		}
		if _, err := st(4).ExecContext(ctx, accountID, c.ID, in.ProfileName, block); err != nil {
			return InboundResult{}, translate(err)
		}
	}
	name := in.ProfileName
	if name == "" {
		name = c.Name
	}
	var m struct {
		ID             int64 `db:"id"`
		ConversationID int64 `db:"conversation_id"`
	}
	err = st(5).GetContext(ctx, &m, accountID, c.ID, in.SentAt.UTC(), in.Type, in.Destination, content,
		in.PlatformMessageID, in.From, name, fields)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// Recorded concurrently by another delivery of the same webhook: roll everything back.
		return InboundResult{Duplicate: true}, nil
	case err != nil:
		return InboundResult{}, translate(err)
	}
	if err := tx.Commit(); err != nil {
		return InboundResult{}, translate(err)
	}
	return InboundResult{MessageID: m.ID, ContactID: c.ID, ConversationID: m.ConversationID, ContactCreated: c.Created}, nil
}

// preparedAll prepares several statements (see prepared).
func (s *Store) preparedAll(ctx context.Context, qs ...string) ([]*sqlx.Stmt, error) {
	out := make([]*sqlx.Stmt, len(qs))
	for i, q := range qs {
		st, err := s.prepared(ctx, q)
		if err != nil {
			return nil, err
		}
		out[i] = st
	}
	return out, nil
}

// JoinSandbox registers phone as a participant of the sandbox for the account whose join code
// is joinCode (matched exactly, else case-insensitively), joined at the given time; joining
// again refreshes the time (never moves it back). It returns the account id, or ErrNotFound
// when no account has that join code.
func (s *Store) JoinSandbox(ctx context.Context, joinCode, phone string, at time.Time) (int64, error) {
	var accountID int64
	err := s.db.GetContext(ctx, &accountID, `INSERT INTO sandbox_participants (account_id, phone, joined_at)
		SELECT id, $2, $3 FROM accounts WHERE lower(join_code) = lower($1) ORDER BY (join_code = $1) DESC, id LIMIT 1
		ON CONFLICT (account_id, phone) DO UPDATE SET joined_at = GREATEST(sandbox_participants.joined_at, EXCLUDED.joined_at)
		RETURNING account_id`, joinCode, phone, at.UTC())
	return accountID, translate(err)
}

// AccountIDsByWabaID returns the accounts whose connected number belongs to the WhatsApp
// Business Account (the entry id of a template webhook), oldest connection first; an empty list
// when none does. It fails only when the database does.
func (s *Store) AccountIDsByWabaID(ctx context.Context, wabaID string) ([]int64, error) {
	ids := []int64{}
	err := s.db.SelectContext(ctx, &ids, `SELECT account_id FROM connections WHERE waba_id = $1 ORDER BY connected_at, account_id`, wabaID)
	return ids, translate(err)
}

// UpdateTemplateStatusByPlatformID sets the status of the account's template with the
// platform's template id. It returns ErrNotFound when the account has no such template.
func (s *Store) UpdateTemplateStatusByPlatformID(ctx context.Context, accountID int64, platformID, status string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE templates SET status = $3, updated_at = now()
		WHERE account_id = $1 AND platform_id = $2`, accountID, platformID, status)
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}
