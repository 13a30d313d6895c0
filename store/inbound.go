package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
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
	// From is the sender's wa_id (digits), "" for a user whose number the platform does not
	// share. FromForms are other forms of the same number (the Mexican, Brazilian and
	// Argentinian variants) tried, after From, against the account's contacts and aliases
	// before a new contact is made.
	From      string
	FromForms []string
	// The sender's business-scoped identity, "" when absent (UserID is always present in
	// webhooks since April 2026; it is the only identifier of a username-only user).
	UserID       string
	ParentUserID string
	Username     string
	// ProfileName is the sender's WhatsApp profile name: the name of a new contact, and of an
	// existing one whose name is empty.
	ProfileName string
	Type        string    // the platform's message type
	SentAt      time.Time // the platform's timestamp
	Destination string    // the business number it was sent to
	// Content is the typed object of the message's kind (what the event carries), kept on the
	// message row.
	Content json.RawMessage
	// EventFields is a JSON object merged into the event's data (the typed object under its
	// kind's name); nil for none.
	EventFields json.RawMessage
	// ReplyToPlatformID is the platform id of the message this one quotes (context.id), ""
	// for none; the event names our message id too when that message is the account's.
	ReplyToPlatformID   string
	Forwarded           bool
	FrequentlyForwarded bool
	// Referral is the click-to-WhatsApp ad the message came from (a JSON object), nil for none.
	Referral json.RawMessage
	// Window is how long the service window stays open after SentAt: the platform's 24 hours,
	// or 72 hours after a message from a click-to-WhatsApp ad. Zero is 24 hours.
	Window time.Duration
	// Block, when set, blocks (STOP) or unblocks (START) the contact.
	Block *bool
	// Body is the raw webhook delivery that carried the message, stored (as
	// RecordPlatformWebhook would) when the message is recorded; nil stores nothing.
	Body []byte
}

// defaultWindow is the service window after an ordinary message, for an InboundMessage that
// does not say.
const defaultWindow = 24 * time.Hour

// InboundResult is what RecordInbound wrote.
type InboundResult struct {
	MessageID      int64
	ContactID      int64
	ConversationID int64
	ContactCreated bool
	// EventType is the type of the event written: message.received, or
	// message.received_without_number when the sender's number is not known.
	EventType string
	// WindowExpiresAt is when the conversation's service window closes.
	WindowExpiresAt time.Time
	// Duplicate: a message with that platform id was already recorded; nothing was written.
	Duplicate bool
}

// Event types of inbound messages. A sender whose number is not known (a username-only user:
// the platform leaves wa_id out, and no contact of theirs has a mobile) gets its own type, so
// that receivers that parse v1's message.received, whose `from` is required, never see one
// without it: they receive it only after opting in. The name says what is different: the
// message, without the sender's number.
const (
	EventMessageReceived              = "message.received"
	EventMessageReceivedWithoutNumber = "message.received_without_number"
	EventMessageEdited                = "message.edited"
	EventMessageDeleted               = "message.deleted"
	EventContactCreated               = "contact.created"
	EventContactCreatedWithoutNumber  = "contact.created_without_number"
	EventContactUpdated               = "contact.updated"
)

const (
	inboundDupSQL   = `SELECT EXISTS (SELECT 1 FROM messages WHERE account_id = $1 AND platform_message_id = $2)`
	inboundAliasSQL = `INSERT INTO contact_aliases (account_id, alias, contact_id) VALUES ($1, $2, $3)
		ON CONFLICT (account_id, alias) DO NOTHING`
	inboundContactUpdateSQL = `UPDATE contacts SET
			name = CASE WHEN name = '' THEN $3 ELSE name END,
			blocked = COALESCE($4, blocked), username = COALESCE(NULLIF($5, ''), username), updated_at = now()
		WHERE account_id = $1 AND id = $2`
	// Conversation find-or-create (the window: the later of the kept one and this message's;
	// the inbox's state: latest activity, one more unread message, reopened, changed in this
	// transaction), the message (a duplicate id inserts nothing and returns no row) and its event:
	// message.received with `from`, or message.received_without_number without it ($8 = '').
	// The sender's identity, the quoted message and the forwarded flags join the data when
	// present. The raw delivery ($17, NULL for none) is stored with the message.
	//
	// The statement runs on its own (outside a transaction) for the common message, so a
	// redelivery touches nothing: the conversation is written only when the message's id is not
	// recorded yet. Two deliveries of one message at the same instant may both pass that test;
	// one records the message and the other nothing, but both write the conversation, which is
	// why what the conversation keeps must not change when written twice for one message (the
	// inbox's unread count is the exception: such a race counts the message twice until a
	// teammate reads the conversation, which sets the count again).
	// The contact is locked (k) before the conversation, in the order of a transaction that
	// links an identifier to it; contact is false when a merge deleted it meanwhile, or, when
	// $18 asks for the check, when its row is no longer the one read ($19-$23).
	inboundMessageSQL = `WITH k AS (
			SELECT id FROM contacts WHERE account_id = $1 AND id = $2 AND (NOT $18::bool
				OR (mobile, user_id, username, name, blocked) IS NOT DISTINCT FROM ($19::text, $20::text, $21::text, $22::text, $23::bool))
			FOR KEY SHARE
		), cv AS (
			INSERT INTO conversations (account_id, contact_id, last_inbound_at, window_expires_at, last_activity_at,
				unread_count, change_xid)
			SELECT $1, $2, $3, $3::timestamptz + $11::interval, now(), 1, pg_current_xact_id()
			WHERE EXISTS (SELECT 1 FROM k)
				AND NOT EXISTS (SELECT 1 FROM messages WHERE account_id = $1 AND platform_message_id = $7)
			ON CONFLICT (account_id, contact_id) DO UPDATE
				SET last_inbound_at = GREATEST(conversations.last_inbound_at, EXCLUDED.last_inbound_at),
					window_expires_at = GREATEST(conversations.window_expires_at, EXCLUDED.window_expires_at),
					last_activity_at = GREATEST(conversations.last_activity_at, EXCLUDED.last_activity_at),
					unread_count = conversations.unread_count + 1, resolved_at = NULL, change_xid = EXCLUDED.change_xid
			RETURNING id, window_expires_at
		), q AS (
			SELECT id FROM messages WHERE account_id = $1 AND platform_message_id = NULLIF($12, '')
		), m AS (
			INSERT INTO messages (account_id, contact_id, conversation_id, direction, type, destination, content,
				platform_message_id, status, sent_at, reply_to_message_id, reply_to_platform_id, forwarded,
				frequently_forwarded, sender, referral)
			SELECT $1, $2, cv.id, 'in', $4, $5, $6::jsonb, $7, 'received', $3, (SELECT id FROM q), NULLIF($12, ''),
				$13, $14, $15::jsonb, $16::jsonb FROM cv
			ON CONFLICT (account_id, platform_message_id) WHERE platform_message_id IS NOT NULL DO NOTHING
			RETURNING id, conversation_id
		), e AS (
			INSERT INTO events (account_id, type, data)
			SELECT $1, CASE WHEN $8::text = '' THEN 'message.received_without_number' ELSE 'message.received' END,
				jsonb_build_object('message_id', m.id, 'conversation_id', m.conversation_id,
					'contact_id', $2::bigint, 'name', $9::text, 'type', $4::text)
				|| CASE WHEN $8::text = '' THEN '{}'::jsonb ELSE jsonb_build_object('from', $8::text) END
				|| COALESCE($15::jsonb - 'wa_id' - 'name', '{}'::jsonb)
				|| CASE WHEN $12 = '' THEN '{}'::jsonb ELSE jsonb_build_object('reply_to', jsonb_strip_nulls(jsonb_build_object(
					'message_id', (SELECT id FROM q), 'platform_message_id', $12::text))) END
				|| CASE WHEN $13 THEN '{"forwarded": true}'::jsonb ELSE '{}'::jsonb END
				|| CASE WHEN $14 THEN '{"frequently_forwarded": true}'::jsonb ELSE '{}'::jsonb END
				|| CASE WHEN $16::jsonb IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('referral', $16::jsonb) END
				|| $10::jsonb
			FROM m
		), raw AS (
			INSERT INTO platform_webhooks (body) SELECT $17::bytea FROM m WHERE $17::bytea IS NOT NULL
		)
		SELECT EXISTS (SELECT 1 FROM k) AS contact, m.id, m.conversation_id, cv.window_expires_at
		FROM (SELECT) one LEFT JOIN m ON true LEFT JOIN cv ON true`
)

// RecordInbound records an inbound message: it finds the sender's contact (identityFor: by
// user id, by From and its other forms as a mobile or an alias; linking or merging when the
// message carries identifiers the contacts lack, each change with its contact.updated event)
// or creates it with its contact.created (or contact.created_without_number) event, keeps From
// as an alias when it differs from the contact's mobile, fills an empty contact name from the
// profile, keeps the username, applies Block (with an audit entry when it changes the contact:
// see OptOutDetail), finds or creates the conversation (setting last_inbound_at and extending
// the service window), inserts the message with its sender, quoted message, forwarded flags and
// referral, and writes its event: message.received, or message.received_without_number when
// neither the message nor the contact has a number; Body, when given, is stored with the
// message. A message whose platform id is already recorded changes nothing and comes back as
// Duplicate. It fails with an error for an empty platform id or a sender with neither number
// nor user id, and when the database fails (then nothing is written).
//
// The common message, from a person whose contact needs no change, is one statement
// (inboundMessageSQL), which commits on its own, after a read of the contacts unless the
// sender's contact is kept from an earlier message (inbound_senders.go); any other takes a
// transaction.
func (s *Store) RecordInbound(ctx context.Context, accountID int64, in InboundMessage) (InboundResult, error) {
	if in.PlatformMessageID == "" || (in.From == "" && in.UserID == "") {
		return InboundResult{}, errors.New("record inbound: platform message id and sender are required")
	}
	args, err := inboundArgs(in)
	if err != nil {
		return InboundResult{}, err
	}
	id := Identity{Mobile: in.From, MobileForms: in.FromForms, UserID: in.UserID, ParentUserID: in.ParentUserID,
		Username: in.Username, Name: in.ProfileName}
	for attempt := 1; ; attempt++ {
		res, err := s.recordInbound(ctx, accountID, in, id, args)
		// A contact merged away or changed meanwhile, or a deadlock with a merge (which locks
		// conversations before contacts): nothing was written, and the contacts are read again.
		if attempt < 3 && (errors.Is(err, errContactChanged) || pq.As(err, pqerror.TRDeadlockDetected) != nil) {
			continue
		}
		return res, err
	}
}

// errContactChanged: the contact a message was to be recorded against is no longer as read.
var errContactChanged = errors.New("the contact changed meanwhile")

// recordInbound records the message of a sender whose contact needs no write in one statement
// (the contact kept for the sender, inbound_senders.go, or read), and any other in a
// transaction.
func (s *Store) recordInbound(ctx context.Context, accountID int64, in InboundMessage, id Identity, args []any) (InboundResult, error) {
	key := senderKeyOf(accountID, in)
	c, ok := s.senders.get(key)
	read := identityUnread
	if !ok {
		byUser, byNumber, err := findIdentity(ctx, preparedQueryer{s}, accountID, id)
		if err != nil {
			return InboundResult{}, err
		}
		switch r := settled(id, byUser, byNumber); {
		case r != nil:
			c, ok = *r, true
		case byUser == nil && byNumber == nil:
			read = identityUnknown
		default:
			read = identityUnsettled
		}
	}
	if !ok || contactWritesFor(in, c) != (contactWrites{}) {
		s.senders.drop(key)
		return s.recordInboundTx(ctx, accountID, in, id, args, read)
	}
	st, err := s.prepared(ctx, inboundMessageSQL)
	if err != nil {
		return InboundResult{}, err
	}
	res, err := s.recordInboundMessage(ctx, st, accountID, in, c, true, args)
	switch {
	case errors.Is(err, errContactChanged):
		s.senders.drop(key)
	case err == nil:
		s.senders.put(key, c)
		if !res.Duplicate {
			s.eventsWritten()
		}
	}
	return res, err
}

// inboundArgs are the parameters of inboundMessageSQL that come from the message alone, $3 to
// $17 in order, with $8 (from) and $9 (name) left for the contact to fill.
func inboundArgs(in InboundMessage) ([]any, error) {
	content := string(in.Content)
	if len(in.Content) == 0 {
		content = "{}"
	}
	fields := string(in.EventFields)
	if len(in.EventFields) == 0 {
		fields = "{}"
	}
	var referral *string
	if len(in.Referral) > 0 {
		r := string(in.Referral)
		referral = &r
	}
	window := in.Window
	if window <= 0 {
		window = defaultWindow
	}
	sender, err := json.Marshal(struct {
		WaID         string `json:"wa_id,omitempty"`
		UserID       string `json:"user_id,omitempty"`
		ParentUserID string `json:"parent_user_id,omitempty"`
		Username     string `json:"username,omitempty"`
		Name         string `json:"name,omitempty"`
	}{in.From, in.UserID, in.ParentUserID, in.Username, in.ProfileName})
	if err != nil {
		return nil, err
	}
	body := in.Body // nil is NULL: no delivery to store
	if len(body) == 0 {
		body = nil
	}
	return []any{in.SentAt.UTC(), in.Type, in.Destination, content, in.PlatformMessageID, "", "", fields,
		fmt.Sprintf("%d microseconds", window.Microseconds()), in.ReplyToPlatformID, in.Forwarded,
		in.FrequentlyForwarded, string(sender), referral, body}, nil
}

// recordInboundTx records a message whose contact is created, linked, merged or changed, in
// one transaction; read says what recordInbound's read of the contacts found (identityFor).
func (s *Store) recordInboundTx(ctx context.Context, accountID int64, in InboundMessage, id Identity, args []any, read identityRead) (InboundResult, error) {
	stmts, err := s.preparedAll(ctx, inboundDupSQL, inboundAliasSQL, inboundContactUpdateSQL, inboundMessageSQL)
	if err != nil {
		return InboundResult{}, err
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
	c, err := identityFor(ctx, tx, accountID, id, read)
	if err != nil {
		return InboundResult{}, err
	}
	w := contactWritesFor(in, c)
	if w.alias {
		if _, err := st(1).ExecContext(ctx, accountID, in.From, c.ID); err != nil {
			return InboundResult{}, translate(err)
		}
	}
	if w.update {
		var block *bool
		if w.block {
			block = in.Block
		}
		if _, err := st(2).ExecContext(ctx, accountID, c.ID, in.ProfileName, block, in.Username); err != nil {
			return InboundResult{}, translate(err)
		}
	}
	if w.block {
		// The person by number when it is known, else by user id.
		target := c.Mobile.String
		if target == "" {
			target = in.UserID
		}
		if err := auditOptOut(ctx, tx, accountID, target, *in.Block); err != nil {
			return InboundResult{}, err
		}
	}
	res, err := s.recordInboundMessage(ctx, st(3), accountID, in, c, false, args)
	if err != nil || res.Duplicate {
		return res, err // a duplicate (recorded concurrently by another delivery) rolls everything back
	}
	if err := tx.Commit(); err != nil {
		return InboundResult{}, translate(err)
	}
	s.eventsWritten()
	return res, nil
}

// recordInboundMessage runs inboundMessageSQL (st, on its own or in a transaction) for the
// message of contact c, checking first, when check is set, that c's row is still as read; the
// caller wakes the dispatchers once it is committed.
func (s *Store) recordInboundMessage(ctx context.Context, st *sqlx.Stmt, accountID int64, in InboundMessage, c identityRow, check bool, args []any) (InboundResult, error) {
	name := in.ProfileName
	if name == "" {
		name = c.Name
	}
	from := in.From
	if from == "" {
		from = c.Mobile.String
	}
	a := append([]any{accountID, c.ID}, args...)
	a[7], a[8] = from, name // $8 and $9
	a = append(a, check, c.Mobile, c.UserID, c.Username, c.Name, c.Blocked)
	var m struct {
		Contact        bool          `db:"contact"`
		ID             sql.NullInt64 `db:"id"`
		ConversationID sql.NullInt64 `db:"conversation_id"`
		Window         sql.NullTime  `db:"window_expires_at"`
	}
	switch err := st.GetContext(ctx, &m, a...); {
	case err != nil:
		return InboundResult{}, translate(err)
	case !m.Contact:
		return InboundResult{}, errContactChanged
	case !m.ID.Valid:
		return InboundResult{Duplicate: true}, nil
	}
	typ := EventMessageReceived
	if from == "" {
		typ = EventMessageReceivedWithoutNumber
	}
	return InboundResult{MessageID: m.ID.Int64, ContactID: c.ID, ConversationID: m.ConversationID.Int64,
		ContactCreated: c.Created, EventType: typ, WindowExpiresAt: m.Window.Time}, nil
}
