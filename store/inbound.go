package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// What the platform sends us besides statuses (statuses.go, parked.go): raw webhook bodies and
// inbound messages. Sandbox joins are in sandbox.go, WABA routing in connections.go and
// template status changes in templates.go.

// RecordPlatformWebhook stores a platform webhook body as received and returns its id. It fails
// only when the database does.
func (s *Store) RecordPlatformWebhook(ctx context.Context, body []byte) (int64, error) {
	var id int64
	err := s.getPrepared(ctx, &id, `INSERT INTO platform_webhooks (body) VALUES ($1) RETURNING id`, body)
	return id, err
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
// contact name from the profile, applies Block (with an audit entry when it changes the contact:
// see OptOutDetail), finds or creates the conversation (setting
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
	if blockChange {
		if err := auditOptOut(ctx, tx, accountID, c.Mobile, *in.Block); err != nil {
			return InboundResult{}, err
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
	s.eventsWritten()
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
