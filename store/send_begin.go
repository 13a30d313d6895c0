package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// The send path (server/send.go) writes twice around the platform call, each time in one
// prepared statement: BeginSend records the intent (contact, conversation, campaign, the
// pending message, contact.created) and RecordSentWrites the platform's acceptance (platform
// id, status sent, history, message.sent), in a statement shared by concurrent sends. A
// rejected or unanswered send is closed by RecordSendFailure instead, without any message.sent
// event.

// SendInput is a live send to record before the platform is called: a template, or an answer
// inside the service window (Answer).
type SendInput struct {
	Mobile       string          // the destination, digits only ("" when UserID is set)
	UserID       string          // or the recipient's business-scoped user id, never read as a number
	Name         string          // the contact's name, used only when the send creates the contact
	CampaignName string          // the campaign to group the send under
	TemplateID   int64           // the service's template id
	TemplateName string          // the template's name
	Content      json.RawMessage // what was sent (language and variables), a JSON object
	// ClientReference is the caller's own id for the send ("" for none): kept on the message
	// and put in its message.sent and message.status events.
	ClientReference string
	// Source is where the send came from: "api" ("" means api) or "panel" (the dashboard's
	// send form); kept on the message and put in its message.sent event.
	Source string
	// IdempotencyKey is the Idempotency-Key the request holds, as stored (IdempotencyKeyFrom);
	// "" for none.
	IdempotencyKey string
	// Type is the message's type: TypeTemplate ("" means template) or an answer's kind ("text",
	// "image", ...).
	Type string
	// Answer: a non-template message, allowed only while the contact's service window is open
	// at Now (the zero Now is the time of the call); when it is closed, or the person is not a
	// contact, nothing is written and SendRecord.WindowClosed is true.
	Answer bool
	Now    time.Time
}

// TypeTemplate is the type of a template message.
const TypeTemplate = "template"

// SendRecord is what BeginSend wrote. When Blocked is true the contact has opted out, and when
// WindowClosed is true an answer's service window is closed (WindowExpiresAt says when it
// closed, nil when the person never wrote; ContactID is 0 when they are not a contact); then
// nothing was written: MessageID, ConversationID and CampaignID are 0.
type SendRecord struct {
	ContactID       int64      `db:"contact_id"`
	ContactCreated  bool       `db:"contact_created"`
	Blocked         bool       `db:"blocked"`
	WindowClosed    bool       `db:"window_closed"`
	WindowExpiresAt *time.Time `db:"window_expires_at"`
	ConversationID  int64      `db:"conversation_id"`
	CampaignID      int64      `db:"campaign_id"`
	MessageID       int64      `db:"message_id"`
	// FansOut: the contact.created event the send wrote fans out to a delivery.
	FansOut bool `db:"fans"`
}

// beginSendSQL records sends before the platform is called, in one statement, one commit: per
// element of the JSON array $1 (beginRow) it finds or creates the contact (the name is set only
// on creation), stops at a blocked contact, stops an answer (a non-template message: window
// true) whose contact's service window is closed at its now, finds or creates the conversation
// and the campaign, inserts the pending message, and writes contact.created for a new contact
// (contact.created_without_number for one known only by a user id). The send path batches
// concurrent sends into it (group commit, server/groupcommit); BeginSend runs it with one.
//
// Rows that already exist are read, not rewritten: each *_new insert runs only when its *_old
// read found nothing, and ON CONFLICT DO UPDATE returns the row a concurrent send committed
// after this statement's snapshot (which the plain read cannot see). Inserts shared by
// elements (the conversation of one contact, a campaign) insert each row once, in key order,
// so concurrent batches take their locks in one order. No two elements are the same person
// (SendKeys; BeginSends refuses such a batch), so each element creates its contact alone and
// its contact.created is its own. The message ids are drawn first, one per element that is
// sent, so each element gets its own.
//
// The contact is the person: for a number (ContactByMobile) the mobile or another form of it,
// as a mobile or an alias, and it is blocked when any contact that is this person is; for a
// user id (never read as a number) the contact with that user id. An answer never creates a
// contact: a person the account does not know never wrote, so their window is closed. When the
// send holds an Idempotency-Key, the key is bound to the new message in the same statement:
// from then on the platform call may happen, and the key is never released for a re-send
// (IdempotencyRecord).
var beginSendSQL = `WITH r AS (
		SELECT * FROM jsonb_to_recordset($1::jsonb) AS r (i int, account_id bigint, mobile text, user_id text, forms text[],
			name text, campaign text, template_id bigint, template_name text, type text, content jsonb, client_reference text,
			idem text, source text, "window" boolean, now timestamptz)
	), x AS (
		SELECT r.i, m.id, m.src, array_position(r.forms, m.matched) AS pos FROM r, LATERAL (
			SELECT k.id, 0 AS src, k.mobile AS matched FROM unnest(r.forms) AS f(n) JOIN contacts k ON k.account_id = r.account_id AND k.mobile = f.n
			WHERE r.user_id = ''
			UNION ALL
			SELECT a.contact_id, 1, a.alias FROM unnest(r.forms) AS f(n) JOIN contact_aliases a ON a.account_id = r.account_id AND a.alias = f.n
			WHERE r.user_id = ''
			UNION ALL
			SELECT id, 0, user_id FROM contacts WHERE account_id = r.account_id AND r.user_id <> '' AND user_id = r.user_id
		) m
	), c_old AS (
		SELECT r.i, k.id, k.name, k.mobile, EXISTS (SELECT 1 FROM contacts b
				WHERE b.account_id = r.account_id AND b.blocked AND b.id IN (SELECT id FROM x WHERE x.i = r.i)) AS blocked,
			false AS created
		FROM r JOIN contacts k ON k.account_id = r.account_id
			AND k.id = (SELECT id FROM x WHERE x.i = r.i ORDER BY pos, src LIMIT 1)
	), c_new AS (
		INSERT INTO contacts (account_id, mobile, name)
		SELECT r.account_id, r.mobile, r.name FROM r
		WHERE r.user_id = '' AND NOT r."window" AND NOT EXISTS (SELECT 1 FROM c_old WHERE c_old.i = r.i)
		ORDER BY r.account_id, r.mobile
		ON CONFLICT (account_id, mobile) DO UPDATE SET mobile = EXCLUDED.mobile
		RETURNING account_id, mobile, id, name, blocked, (xmax = 0) AS created
	), c_new_u AS (
		INSERT INTO contacts (account_id, user_id, name)
		SELECT r.account_id, r.user_id, r.name FROM r
		WHERE r.user_id <> '' AND NOT r."window" AND NOT EXISTS (SELECT 1 FROM c_old WHERE c_old.i = r.i)
		ORDER BY r.account_id, r.user_id
		ON CONFLICT (account_id, user_id) WHERE user_id IS NOT NULL DO UPDATE SET user_id = EXCLUDED.user_id
		RETURNING account_id, user_id, mobile, id, name, blocked, (xmax = 0) AS created
	), c AS (
		SELECT * FROM c_old
		UNION ALL
		SELECT r.i, n.id, n.name, n.mobile, n.blocked, n.created FROM r JOIN c_new n ON n.account_id = r.account_id AND n.mobile = r.mobile
		WHERE r.user_id = '' AND NOT EXISTS (SELECT 1 FROM c_old WHERE c_old.i = r.i)
		UNION ALL
		SELECT r.i, n.id, n.name, n.mobile, n.blocked, n.created FROM r JOIN c_new_u n ON n.account_id = r.account_id AND n.user_id = r.user_id
		WHERE r.user_id <> '' AND NOT EXISTS (SELECT 1 FROM c_old WHERE c_old.i = r.i)
	), win AS (
		SELECT r.i, v.window_expires_at FROM r JOIN c ON c.i = r.i
			JOIN conversations v ON v.account_id = r.account_id AND v.contact_id = c.id
		WHERE r."window"
	), s AS (
		SELECT r.i, r.account_id, c.id AS contact_id, c.mobile, r.campaign FROM r JOIN c ON c.i = r.i
		WHERE NOT c.blocked AND (NOT r."window" OR EXISTS (SELECT 1 FROM win WHERE win.i = r.i AND win.window_expires_at > r.now))
	), conv_old AS (
		SELECT s.i, v.id FROM s JOIN conversations v ON v.account_id = s.account_id AND v.contact_id = s.contact_id
	), conv_new AS (
		INSERT INTO conversations (account_id, contact_id)
		SELECT DISTINCT s.account_id, s.contact_id FROM s WHERE NOT EXISTS (SELECT 1 FROM conv_old WHERE conv_old.i = s.i)
		ORDER BY 1, 2
		ON CONFLICT (account_id, contact_id) DO UPDATE SET contact_id = EXCLUDED.contact_id
		RETURNING account_id, contact_id, id
	), conv AS (
		SELECT * FROM conv_old
		UNION ALL
		SELECT s.i, n.id FROM s JOIN conv_new n ON n.account_id = s.account_id AND n.contact_id = s.contact_id
		WHERE NOT EXISTS (SELECT 1 FROM conv_old WHERE conv_old.i = s.i)
	), camp_old AS (
		SELECT s.i, p.id FROM s JOIN campaigns p ON p.account_id = s.account_id AND p.name = s.campaign
	), camp_new AS (
		INSERT INTO campaigns (account_id, name)
		SELECT DISTINCT s.account_id, s.campaign FROM s WHERE NOT EXISTS (SELECT 1 FROM camp_old WHERE camp_old.i = s.i)
		ORDER BY 1, 2
		ON CONFLICT (account_id, name) DO UPDATE SET name = EXCLUDED.name
		RETURNING account_id, name, id
	), camp AS (
		SELECT * FROM camp_old
		UNION ALL
		SELECT s.i, n.id FROM s JOIN camp_new n ON n.account_id = s.account_id AND n.name = s.campaign
		WHERE NOT EXISTS (SELECT 1 FROM camp_old WHERE camp_old.i = s.i)
	), ids AS MATERIALIZED (
		SELECT s.i, nextval('messages_id_seq'::regclass) AS id FROM s
	), m AS (
		INSERT INTO messages (id, account_id, contact_id, conversation_id, campaign_id, template_id, direction, type,
			destination, template_name, content, status, client_reference, source)
		SELECT ids.id, r.account_id, s.contact_id, conv.id, camp.id, NULLIF(r.template_id, 0), 'out', r.type,
			CASE WHEN r.user_id = '' THEN r.mobile ELSE COALESCE(s.mobile, r.user_id) END,
			r.template_name, r.content, 'pending', NULLIF(r.client_reference, ''), r.source
		FROM r JOIN s ON s.i = r.i JOIN ids ON ids.i = r.i JOIN conv ON conv.i = r.i JOIN camp ON camp.i = r.i
		ORDER BY r.i
		RETURNING id
	), e AS (
		INSERT INTO events (account_id, type, data)
		SELECT r.account_id, CASE WHEN c.mobile IS NULL THEN 'contact.created_without_number' ELSE 'contact.created' END,
			CASE WHEN c.mobile IS NULL THEN jsonb_build_object('contact_id', c.id, 'name', c.name, 'user_id', r.user_id)
				ELSE jsonb_build_object('contact_id', c.id, 'mobile', c.mobile, 'name', c.name) END
		FROM r JOIN c ON c.i = r.i WHERE c.created ORDER BY r.i
	), k AS (
		UPDATE idempotency_keys SET message_id = m.id FROM r JOIN ids ON ids.i = r.i JOIN m ON m.id = ids.id
		WHERE r.idem <> '' AND idempotency_keys.account_id = r.account_id AND idempotency_keys.key = r.idem
			AND idempotency_keys.status_code IS NULL
	)
	SELECT r.i, COALESCE(c.id, 0) AS contact_id, COALESCE(c.created, false) AS contact_created, COALESCE(c.blocked, false) AS blocked,
		r."window" AND NOT COALESCE(c.blocked, false) AND ids.i IS NULL AS window_closed, win.window_expires_at,
		COALESCE(conv.id, 0) AS conversation_id, COALESCE(camp.id, 0) AS campaign_id, COALESCE(m.id, 0) AS message_id,
		COALESCE(c.created, false) AND ` + fansOutOf("r.account_id") + ` AS fans
	FROM r LEFT JOIN c ON c.i = r.i LEFT JOIN win ON win.i = r.i LEFT JOIN conv ON conv.i = r.i LEFT JOIN camp ON camp.i = r.i
		LEFT JOIN ids ON ids.i = r.i LEFT JOIN m ON m.id = ids.id
	ORDER BY r.i`

// beginRow is one element of beginSendSQL's $1.
type beginRow struct {
	I               int             `json:"i"` // from 1, the order of the results
	AccountID       int64           `json:"account_id"`
	Mobile          string          `json:"mobile"`  // "" for a send to a user id
	UserID          string          `json:"user_id"` // "" for a send to a number
	Forms           []string        `json:"forms"`   // the mobile, then its other forms
	Name            string          `json:"name"`
	Campaign        string          `json:"campaign"`
	TemplateID      int64           `json:"template_id"`
	TemplateName    string          `json:"template_name"`
	Type            string          `json:"type"`
	Content         json.RawMessage `json:"content"`
	ClientReference string          `json:"client_reference"` // "" for none
	Idem            string          `json:"idem"`             // "" for none
	Source          string          `json:"source"`
	Window          bool            `json:"window"`
	Now             time.Time       `json:"now"`
}

// SendBegin is one account's send for BeginSends.
type SendBegin struct {
	AccountID int64
	SendInput
}

// SendKeys are the keys of a send that no other send of one BeginSends batch may share: the
// account with the destination and with each of its other forms, so that two sends that are
// one person never share a statement (the later one finds the contact the earlier created).
func SendKeys(accountID int64, mobile string) []any {
	return sendKeys(accountID, mobileAndForms(mobile))
}

// SendKeysOf are SendKeys of a send to a number, and for a send to a user id the account with
// the user id.
func SendKeysOf(accountID int64, in SendInput) []any {
	if in.UserID != "" {
		return []any{sendKey{accountID, userIDKey + in.UserID}}
	}
	return SendKeys(accountID, in.Mobile)
}

// userIDKey prefixes a user id among sendKey's mobiles (a number is digits only).
const userIDKey = "u:"

// sendKeys are SendKeys of the mobile's forms (mobileAndForms).
func sendKeys(accountID int64, forms []string) []any {
	keys := make([]any, len(forms))
	for i, f := range forms {
		keys[i] = sendKey{accountID, f}
	}
	return keys
}

type sendKey struct {
	account int64
	mobile  string
}

// BeginSend records one send before the platform is called: see SendRecord for a blocked
// contact. It fails only when the database does, and then nothing is written.
func (s *Store) BeginSend(ctx context.Context, accountID int64, in SendInput) (SendRecord, error) {
	rs, err := s.BeginSends(ctx, []SendBegin{{AccountID: accountID, SendInput: in}})
	if err != nil {
		return SendRecord{}, err
	}
	return rs[0], nil
}

// BeginSends records sends before the platform is called, in one statement (beginSendSQL),
// each exactly as BeginSend would alone, and returns their records in order. It refuses a batch
// in which two sends share a key (SendKeys). Nothing is written when it fails: for such a
// batch, or when the database fails (then for every send in it).
func (s *Store) BeginSends(ctx context.Context, ws []SendBegin) ([]SendRecord, error) {
	rows := make([]beginRow, len(ws))
	seen := make(map[any]bool, 2*len(ws))
	for i, w := range ws {
		forms := []string{w.UserID}
		if w.UserID == "" {
			forms = mobileAndForms(w.Mobile)
		}
		for _, k := range SendKeysOf(w.AccountID, w.SendInput) {
			if seen[k] {
				return nil, fmt.Errorf("begin send: %s%s twice in one batch", w.Mobile, w.UserID)
			}
			seen[k] = true
		}
		content := w.Content
		if len(content) == 0 {
			content = json.RawMessage("{}")
		}
		source := w.Source
		if source == "" {
			source = "api"
		}
		typ := w.Type
		if typ == "" {
			typ = TypeTemplate
		}
		now := w.Now
		if now.IsZero() {
			now = time.Now()
		}
		rows[i] = beginRow{I: i + 1, AccountID: w.AccountID, Mobile: w.Mobile, UserID: w.UserID, Forms: forms, Name: w.Name,
			Campaign: w.CampaignName, TemplateID: w.TemplateID, TemplateName: w.TemplateName, Type: typ, Content: content,
			ClientReference: w.ClientReference, Idem: w.IdempotencyKey, Source: source, Window: w.Answer, Now: now}
	}
	arg, err := jsonArg(rows)
	if err != nil {
		return nil, err
	}
	st, err := s.prepared(ctx, beginSendSQL)
	if err != nil {
		return nil, err
	}
	var out []beginResult
	if err := st.SelectContext(ctx, &out, arg); err != nil {
		return nil, translate(err)
	}
	if len(out) != len(ws) {
		return nil, fmt.Errorf("begin send: %d results for %d sends", len(out), len(ws))
	}
	rs := make([]SendRecord, len(out))
	fans := false
	for i, o := range out {
		rs[i] = o.SendRecord
		fans = fans || o.FansOut
	}
	if fans {
		s.eventsWritten()
	}
	return rs, nil
}

// beginResult is one row of beginSendSQL's answer.
type beginResult struct {
	I int `db:"i"`
	SendRecord
}
