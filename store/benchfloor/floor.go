package benchfloor

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"gateway/store"
)

// The floor itself: the minimal SQL of the service's three hot paths (the package notes).

// Account is what the floor server loads once at startup: the account's connected
// number (token decrypted), its approved bench template and its standing campaign.
type Account struct {
	AccountID  int64
	Connection store.Connection
	TemplateID int64
	Template   string
	Language   string
	BodyParams int
	CampaignID int64
}

// Setup loads the floor's account by email, with the template (name, language).
// It returns store.ErrNotFound when the account, its number, the approved template or the "API"
// campaign is missing (run the bench's seeding first).
func (s *Floor) Setup(ctx context.Context, email, template, language string) (Account, error) {
	var fa Account
	acct, err := s.st.AccountByEmail(ctx, email)
	if err != nil {
		return fa, err
	}
	fa.AccountID = acct.ID
	if fa.Connection, err = s.st.ConnectionByAccount(ctx, acct.ID); err != nil {
		return fa, err
	}
	err = s.db.QueryRowxContext(ctx, `SELECT id, name, language, body_params FROM templates
		WHERE account_id = $1 AND name = $2 AND language = $3 AND status = 'APPROVED'`, acct.ID, template, language).
		Scan(&fa.TemplateID, &fa.Template, &fa.Language, &fa.BodyParams)
	if err != nil {
		return fa, translate(err)
	}
	err = s.db.GetContext(ctx, &fa.CampaignID, `SELECT id FROM campaigns WHERE account_id = $1 AND name = 'API'`, acct.ID)
	return fa, translate(err)
}

// AccountByKeyHash is the floor's authentication: one prepared lookup of a live key's
// hash (not revoked, account active). It returns store.ErrNotFound for any other hash.
func (s *Floor) AccountByKeyHash(ctx context.Context, hash []byte) (int64, error) {
	st, err := s.prepared(ctx, `SELECT k.account_id FROM api_keys k JOIN accounts a ON a.id = k.account_id
		WHERE k.key_hash = $1 AND k.mode = 'live' AND k.revoked_at IS NULL AND a.active`)
	if err != nil {
		return 0, err
	}
	var id int64
	return id, translate(st.QueryRowContext(ctx, hash).Scan(&id))
}

// SendInput is one floor send's row data.
type SendInput struct {
	AccountID    int64
	Mobile       string
	Name         string
	CampaignID   int64
	TemplateID   int64
	TemplateName string
	Content      []byte // the message's content JSON
}

// Sent is what Send recorded. Blocked means the contact is blocked and
// nothing else was written (MessageID and ConversationID are then 0).
type Sent struct {
	ContactID      int64
	ContactCreated bool
	Blocked        bool
	ConversationID int64
	MessageID      int64
}

// Send is the floor's send transaction, one prepared statement: upsert the contact
// by (account, mobile), find or insert its conversation, insert the message 'pending' and,
// for a new contact, its contact.created event. It fails on any database error.
func (s *Floor) Send(ctx context.Context, in SendInput) (Sent, error) {
	st, err := s.prepared(ctx, `WITH c AS (
			INSERT INTO contacts (account_id, mobile, name) VALUES ($1, $2, $3)
			ON CONFLICT (account_id, mobile) DO UPDATE SET updated_at = now()
			RETURNING id, blocked, (xmax = 0) AS created),
		cv AS (
			INSERT INTO conversations (account_id, contact_id) SELECT $1, c.id FROM c WHERE NOT c.blocked
			ON CONFLICT (account_id, contact_id) DO UPDATE SET last_inbound_at = conversations.last_inbound_at
			RETURNING id),
		m AS (
			INSERT INTO messages (account_id, contact_id, conversation_id, campaign_id, template_id, direction, type,
				destination, template_name, content, status)
			SELECT $1, c.id, cv.id, $4::bigint, $5::bigint, 'out', 'template', $2, $6::text, $7::jsonb, 'pending' FROM c, cv
			RETURNING id),
		e AS (
			INSERT INTO events (account_id, type, data)
			SELECT $1, 'contact.created', jsonb_build_object('contact_id', c.id, 'mobile', $2::text, 'name', $3::text)
			FROM c, m WHERE c.created
			RETURNING 1)
		SELECT c.id, c.created, c.blocked, coalesce(cv.id, 0), coalesce(m.id, 0)
		FROM c LEFT JOIN cv ON true LEFT JOIN m ON true`)
	if err != nil {
		return Sent{}, err
	}
	var out Sent
	err = st.QueryRowContext(ctx, in.AccountID, in.Mobile, in.Name, in.CampaignID, in.TemplateID, in.TemplateName, string(in.Content)).
		Scan(&out.ContactID, &out.ContactCreated, &out.Blocked, &out.ConversationID, &out.MessageID)
	return out, translate(err)
}

// RecordSent is the floor's second write, after the platform accepted the send:
// one prepared statement records the platform id and 'sent' on the pending message and
// inserts its message.sent event. It returns store.ErrNotFound when no pending message matched.
func (s *Floor) RecordSent(ctx context.Context, accountID, messageID int64, wamid string) error {
	st, err := s.prepared(ctx, `WITH u AS (
			UPDATE messages SET platform_message_id = $3, status = 'sent', sent_at = now()
			WHERE account_id = $1 AND id = $2 AND status = 'pending'
			RETURNING id, contact_id, conversation_id, sent_at)
		INSERT INTO events (account_id, type, data)
		SELECT $1, 'message.sent', jsonb_build_object('message_id', u.id, 'chat_message_id', $3::text,
			'contact_id', u.contact_id, 'conversation_id', u.conversation_id, 'status', 'sent', 'sent_at', u.sent_at)
		FROM u`)
	if err != nil {
		return err
	}
	res, err := st.ExecContext(ctx, accountID, messageID, wamid)
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// Status is the floor's status update, one prepared statement: find the tenant by
// the platform's phone number id, move the message with that platform id forward to status
// (rank must be store.StatusRank(status); a lower or equal current rank is left alone) with
// the status's time, and insert the message.status event. It reports whether the status was
// applied, and fails on any database error.
func (s *Floor) Status(ctx context.Context, phoneNumberID, wamid, status string, rank int, at time.Time) (bool, error) {
	st, err := s.prepared(ctx, `WITH u AS (
			UPDATE messages m SET status = $3,
				delivered_at = CASE WHEN $3 = 'delivered' THEN $5::timestamptz ELSE m.delivered_at END,
				read_at = CASE WHEN $3 = 'read' THEN $5::timestamptz ELSE m.read_at END,
				failed_at = CASE WHEN $3 = 'failed' THEN $5::timestamptz ELSE m.failed_at END
			WHERE m.account_id = (SELECT account_id FROM connections WHERE phone_number_id = $1)
			AND m.platform_message_id = $2
			AND status_rank(m.status) BETWEEN 0 AND $4::int - 1
			RETURNING m.id, m.account_id)
		INSERT INTO events (account_id, type, data)
		SELECT account_id, 'message.status', jsonb_build_object('message_id', id, 'status', $3::text, 'timestamp', $5::timestamptz)
		FROM u`)
	if err != nil {
		return false, err
	}
	res, err := st.ExecContext(ctx, phoneNumberID, wamid, status, rank, at)
	if err != nil {
		return false, translate(err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// MessageRow is one message as the floor's poll reads it.
type MessageRow struct {
	ID           int64
	Wamid        string
	Status       string
	SentAt       sql.NullTime
	CreatedAt    time.Time
	ErrorCode    sql.NullInt64
	ErrorTitle   sql.NullString
	ErrorDetails sql.NullString
	History      json.RawMessage // [{"status":..., "timestamp":...}] oldest first
}

// Message is the floor's poll, one prepared SELECT by (id, account) with the status
// history built from the message's status times in the same statement. It returns store.ErrNotFound when the account has no
// outbound message with that id.
func (s *Floor) Message(ctx context.Context, accountID, id int64) (MessageRow, error) {
	st, err := s.prepared(ctx, `SELECT m.id, coalesce(m.platform_message_id, ''), m.status, m.sent_at, m.created_at,
			m.error_code, m.error_title, m.error_details,
			coalesce((SELECT json_agg(json_build_object('status', h.status, 'timestamp', h.at) ORDER BY h.at)
				FROM (VALUES ('sent', m.sent_at), ('delivered', m.delivered_at), ('read', m.read_at), ('failed', m.failed_at))
					h (status, at) WHERE h.at IS NOT NULL), '[]')
		FROM messages m WHERE m.id = $1 AND m.account_id = $2 AND m.direction = 'out'`)
	if err != nil {
		return MessageRow{}, err
	}
	var r MessageRow
	var hist []byte
	err = st.QueryRowContext(ctx, id, accountID).Scan(&r.ID, &r.Wamid, &r.Status, &r.SentAt, &r.CreatedAt,
		&r.ErrorCode, &r.ErrorTitle, &r.ErrorDetails, &hist)
	r.History = hist
	return r, translate(err)
}
