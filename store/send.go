package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lib/pq"
)

// The send path (server/send.go) writes twice around the platform call, each time in one
// prepared statement: BeginSend records the intent (contact, conversation, campaign, the
// pending message, contact.created) and RecordSentWrites the platform's acceptance (platform
// id, status sent, history, message.sent), in a statement shared by concurrent sends. A
// rejected or unanswered send is closed by RecordSendFailure instead, without any message.sent
// event.

// SendInput is a live template send to record before the platform is called.
type SendInput struct {
	Mobile       string          // the destination, digits only
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
}

// SendRecord is what BeginSend wrote. When Blocked is true the contact has opted out and
// nothing was written: MessageID, ConversationID and CampaignID are 0.
type SendRecord struct {
	ContactID      int64 `db:"contact_id"`
	ContactCreated bool  `db:"contact_created"`
	Blocked        bool  `db:"blocked"`
	ConversationID int64 `db:"conversation_id"`
	CampaignID     int64 `db:"campaign_id"`
	MessageID      int64 `db:"message_id"`
	// FansOut: the contact.created event the send wrote fans out to a delivery.
	FansOut bool `db:"fans"`
}

// beginSendSQL records sends before the platform is called, in one statement, one commit: per
// element of the JSON array $1 (beginRow) it finds or creates the contact (the name is set only
// on creation), stops at a blocked contact, finds or creates the conversation and the campaign,
// inserts the pending message, and writes contact.created for a new contact. The send path
// batches concurrent sends into it (group commit, server/groupcommit.go); BeginSend runs it
// with one. The rows come as JSON for one generic plan, as recordSentSQL's do.
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
// The contact is the person (ContactByMobile): the mobile or another form of it, as a mobile or
// an alias, and it is blocked when any contact that is this person is. When the send holds an
// Idempotency-Key, the key is bound to the new message in the same statement: from then on the
// platform call may happen, and the key is never released for a re-send (IdempotencyRecord).
var beginSendSQL = `WITH r AS (
		SELECT * FROM jsonb_to_recordset($1::jsonb) AS r (i int, account_id bigint, mobile text, forms text[],
			name text, campaign text, template_id bigint, template_name text, content jsonb, client_reference text,
			idem text, source text)
	), x AS (
		SELECT r.i, m.id, m.src, array_position(r.forms, m.matched) AS pos FROM r, LATERAL (
			SELECT id, 0 AS src, mobile AS matched FROM contacts WHERE account_id = r.account_id AND mobile = ANY(r.forms)
			UNION ALL
			SELECT contact_id, 1, alias FROM contact_aliases WHERE account_id = r.account_id AND alias = ANY(r.forms)
		) m
	), c_old AS (
		SELECT r.i, k.id, k.name, EXISTS (SELECT 1 FROM contacts b
				WHERE b.account_id = r.account_id AND b.blocked AND b.id IN (SELECT id FROM x WHERE x.i = r.i)) AS blocked,
			false AS created
		FROM r JOIN contacts k ON k.account_id = r.account_id
			AND k.id = (SELECT id FROM x WHERE x.i = r.i ORDER BY pos, src LIMIT 1)
	), c_new AS (
		INSERT INTO contacts (account_id, mobile, name)
		SELECT r.account_id, r.mobile, r.name FROM r WHERE NOT EXISTS (SELECT 1 FROM c_old WHERE c_old.i = r.i)
		ORDER BY r.account_id, r.mobile
		ON CONFLICT (account_id, mobile) DO UPDATE SET mobile = EXCLUDED.mobile
		RETURNING account_id, mobile, id, name, blocked, (xmax = 0) AS created
	), c AS (
		SELECT * FROM c_old
		UNION ALL
		SELECT r.i, n.id, n.name, n.blocked, n.created FROM r JOIN c_new n ON n.account_id = r.account_id AND n.mobile = r.mobile
		WHERE NOT EXISTS (SELECT 1 FROM c_old WHERE c_old.i = r.i)
	), s AS (
		SELECT r.i, r.account_id, c.id AS contact_id, r.campaign FROM r JOIN c ON c.i = r.i WHERE NOT c.blocked
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
		SELECT ids.id, r.account_id, s.contact_id, conv.id, camp.id, r.template_id, 'out', 'template', r.mobile,
			r.template_name, r.content, 'pending', NULLIF(r.client_reference, ''), r.source
		FROM r JOIN s ON s.i = r.i JOIN ids ON ids.i = r.i JOIN conv ON conv.i = r.i JOIN camp ON camp.i = r.i
		ORDER BY r.i
		RETURNING id
	), e AS (
		INSERT INTO events (account_id, type, data)
		SELECT r.account_id, 'contact.created', jsonb_build_object('contact_id', c.id, 'mobile', r.mobile, 'name', c.name)
		FROM r JOIN c ON c.i = r.i WHERE c.created ORDER BY r.i
	), k AS (
		UPDATE idempotency_keys SET message_id = m.id FROM r JOIN ids ON ids.i = r.i JOIN m ON m.id = ids.id
		WHERE r.idem <> '' AND idempotency_keys.account_id = r.account_id AND idempotency_keys.key = r.idem
			AND idempotency_keys.status_code IS NULL
	)
	SELECT r.i, c.id AS contact_id, c.created AS contact_created, c.blocked,
		COALESCE(conv.id, 0) AS conversation_id, COALESCE(camp.id, 0) AS campaign_id, COALESCE(m.id, 0) AS message_id,
		c.created AND ` + fansOutOf("r.account_id") + ` AS fans
	FROM r JOIN c ON c.i = r.i LEFT JOIN conv ON conv.i = r.i LEFT JOIN camp ON camp.i = r.i
		LEFT JOIN ids ON ids.i = r.i LEFT JOIN m ON m.id = ids.id
	ORDER BY r.i`

// beginRow is one element of beginSendSQL's $1.
type beginRow struct {
	I               int             `json:"i"` // from 1, the order of the results
	AccountID       int64           `json:"account_id"`
	Mobile          string          `json:"mobile"`
	Forms           []string        `json:"forms"` // the mobile, then its other forms
	Name            string          `json:"name"`
	Campaign        string          `json:"campaign"`
	TemplateID      int64           `json:"template_id"`
	TemplateName    string          `json:"template_name"`
	Content         json.RawMessage `json:"content"`
	ClientReference string          `json:"client_reference"` // "" for none
	Idem            string          `json:"idem"`             // "" for none
	Source          string          `json:"source"`
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
		forms := mobileAndForms(w.Mobile)
		for _, k := range sendKeys(w.AccountID, forms) {
			if seen[k] {
				return nil, fmt.Errorf("begin send: %s twice in one batch", w.Mobile)
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
		rows[i] = beginRow{I: i + 1, AccountID: w.AccountID, Mobile: w.Mobile, Forms: forms, Name: w.Name,
			Campaign: w.CampaignName, TemplateID: w.TemplateID, TemplateName: w.TemplateName, Content: content,
			ClientReference: w.ClientReference, Idem: w.IdempotencyKey, Source: source}
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

// recordSentSQL closes pending sends the platform accepted: platform id, status sent and
// sent_at (the history's sent), the message.sent event, and the platform's wa_id as a contact
// alias when it differs from the destination. It takes a batch, one send per element of the
// JSON array $1 (sentRow), each for a different message: the send path batches concurrent
// recordings into it (group commit, server/groupcommit.go); an adoption runs it with one. The
// rows come as JSON, not as arrays, because PostgreSQL's estimate of a JSON row set does not
// depend on its value: the statement keeps one generic plan, where an array's known length made
// it plan every execution anew (planning was a large part of its cost).
//
// It returns, per element in order: recorded (the pending message took the id) and fans.
var recordSentSQL = `WITH r AS (
		SELECT * FROM jsonb_to_recordset($1::jsonb) AS r (i int, account_id bigint, message_id bigint, wamid text,
			at timestamptz, wa_id text)
	), m AS (
		UPDATE messages SET platform_message_id = r.wamid, status = 'sent', sent_at = r.at, outcome_unknown = false
		FROM r
		WHERE messages.account_id = r.account_id AND messages.id = r.message_id AND messages.status = 'pending'
		RETURNING r.i, r.account_id, r.wamid, r.wa_id, messages.id, messages.contact_id, messages.conversation_id,
			messages.destination, messages.template_name, messages.client_reference, messages.source
	), e AS (
		INSERT INTO events (account_id, type, data)
		SELECT m.account_id, 'message.sent', jsonb_build_object('message_id', m.id, 'chat_message_id', m.wamid,
			'conversation_id', m.conversation_id, 'contact_id', m.contact_id, 'destination', m.destination,
			'template', m.template_name, 'source', m.source)
			|| jsonb_strip_nulls(jsonb_build_object('client_reference', m.client_reference))
		FROM m ORDER BY m.i
	), a AS (
		INSERT INTO contact_aliases (account_id, alias, contact_id)
		SELECT m.account_id, m.wa_id, m.contact_id FROM m WHERE m.wa_id <> '' AND m.wa_id <> m.destination
		ORDER BY m.i
		ON CONFLICT (account_id, alias) DO NOTHING
	)
	SELECT r.i, m.i IS NOT NULL AS recorded, m.i IS NOT NULL AND ` + fansOutOf("r.account_id") + ` AS fans
	FROM r LEFT JOIN m ON m.i = r.i ORDER BY r.i`

// parkedForSQL says, per element of the JSON array $1 (sentRow: i, account_id, wamid) in order,
// whether status reports are parked for that account's platform id. JSON for one generic plan,
// as recordSentSQL.
const parkedForSQL = `SELECT r.i, EXISTS (SELECT 1 FROM parked_statuses p
		WHERE p.account_id = r.account_id AND p.platform_message_id = r.wamid) AS parked
	FROM jsonb_to_recordset($1::jsonb) AS r (i int, account_id bigint, wamid text) ORDER BY r.i`

// sentRow is one element of recordSentSQL's and parkedForSQL's $1.
type sentRow struct {
	I         int    `json:"i"` // from 1, the order of the results
	AccountID int64  `json:"account_id"`
	MessageID int64  `json:"message_id,omitempty"`
	Wamid     string `json:"wamid"`
	At        string `json:"at,omitempty"`
	WaID      string `json:"wa_id"`
}

// sentRows is ws as recordSentSQL's $1.
func sentRows(ws []SentWrite) []sentRow {
	rows := make([]sentRow, len(ws))
	for i, w := range ws {
		rows[i] = sentRow{I: i + 1, AccountID: w.AccountID, MessageID: w.MessageID, Wamid: w.PlatformMessageID,
			At: statusTime(w.At).Format(time.RFC3339Nano), WaID: w.WaID}
	}
	return rows
}

// jsonArg is v as a JSON statement argument.
func jsonArg(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// SentWrite is a platform's acceptance of an account's pending send, to record.
type SentWrite struct {
	AccountID         int64
	MessageID         int64
	PlatformMessageID string
	WaID              string // the platform's id for the recipient ("" when it gave none)
	At                time.Time
}

// SentApplied is what RecordSentWrites did for one write.
type SentApplied struct {
	I        int  `db:"i"`
	Recorded bool `db:"recorded"` // the pending message took the platform id (false: no such pending message)
	Fans     bool `db:"fans"`
	// Parked: status reports for the platform id were parked before it was recorded; apply
	// them (ApplyParkedStatuses). Read after the recording committed; Checked is false when
	// that read failed (ask HasParkedStatuses, or leave them to the reconciler).
	Parked  bool `db:"-"`
	Checked bool `db:"-"`
}

// RecordSentWrites records the acceptances in one statement (recordSentSQL), then reads in a
// second one, after the first committed, which of the recorded ids have parked status reports
// (ApplyStatus explains why that order closes the race with a report parked meanwhile). It
// returns what it did for each write, in order. Nothing is written when it fails: for two writes
// of one message, or when the database fails. When only the read fails the recordings stand and
// their Checked is false.
func (s *Store) RecordSentWrites(ctx context.Context, ws []SentWrite) ([]SentApplied, error) {
	seen := make(map[[2]int64]bool, len(ws))
	for _, w := range ws {
		k := [2]int64{w.AccountID, w.MessageID}
		if seen[k] {
			return nil, fmt.Errorf("record sent: message %d twice in one batch", w.MessageID)
		}
		seen[k] = true
	}
	rows := sentRows(ws)
	arg, err := jsonArg(rows)
	if err != nil {
		return nil, err
	}
	st, err := s.prepared(ctx, recordSentSQL)
	if err != nil {
		return nil, err
	}
	out := make([]SentApplied, 0, len(ws))
	if err := st.SelectContext(ctx, &out, arg); err != nil {
		return nil, translate(err)
	}
	if len(out) != len(ws) {
		return nil, fmt.Errorf("record sent: %d results for %d sends", len(out), len(ws))
	}
	var check []sentRow
	fans := false
	for _, a := range out {
		fans = fans || a.Fans
		if a.Recorded {
			r := rows[a.I-1]
			check = append(check, sentRow{I: len(check) + 1, AccountID: r.AccountID, Wamid: r.Wamid})
		}
	}
	if fans {
		s.eventsWritten()
	}
	if len(check) == 0 {
		return out, nil
	}
	parked, err := s.parkedFor(ctx, check)
	if err != nil {
		return out, nil // Checked stays false
	}
	j := 0
	for i := range out {
		if out[i].Recorded {
			out[i].Parked, out[i].Checked = parked[j], true
			j++
		}
	}
	return out, nil
}

// parkedFor runs parkedForSQL: whether reports are parked, per row in order.
func (s *Store) parkedFor(ctx context.Context, rows []sentRow) ([]bool, error) {
	arg, err := jsonArg(rows)
	if err != nil {
		return nil, err
	}
	st, err := s.prepared(ctx, parkedForSQL)
	if err != nil {
		return nil, err
	}
	var got []struct {
		I      int  `db:"i"`
		Parked bool `db:"parked"`
	}
	if err := st.SelectContext(ctx, &got, arg); err != nil {
		return nil, translate(err)
	}
	if len(got) != len(rows) {
		return nil, fmt.Errorf("parked reports: %d results for %d ids", len(got), len(rows))
	}
	out := make([]bool, len(got))
	for i, g := range got {
		out[i] = g.Parked
	}
	return out, nil
}

// recordSent runs recordSentSQL for one write.
func (s *Store) recordSent(ctx context.Context, w SentWrite) (SentApplied, error) {
	var a SentApplied
	arg, err := jsonArg(sentRows([]SentWrite{w}))
	if err == nil {
		err = s.getPrepared(ctx, &a, recordSentSQL, arg)
	}
	if err == nil && a.Fans {
		s.eventsWritten()
	}
	return a, err
}

// MarkOutcomeUnknown records that the platform call of the account's pending message may have
// happened but its answer was lost (a timeout, an unreadable answer, a recording that failed):
// the message stays pending, shown as sent with outcome_unknown, until a status report adopts
// it (ApplyStatus, through the callback data) or the send path records it. It returns
// ErrNotFound when the account has no such pending message, and fails otherwise only when the
// database does.
func (s *Store) MarkOutcomeUnknown(ctx context.Context, accountID, messageID int64) error {
	var n int
	err := s.getPrepared(ctx, &n, `WITH m AS (
			UPDATE messages SET outcome_unknown = true
			WHERE account_id = $1::bigint AND id = $2::bigint AND status = 'pending'
			RETURNING id
		)
		SELECT count(*) FROM m`, accountID, messageID)
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// MarkOrphanedSends is the reconciler's sweep for sends whose process died between recording
// the intent and recording the platform's answer: pending messages created before cutoff are
// marked outcome_unknown (at most limit per call), so GET /messages/{id} shows them and a
// status report can adopt them. It returns how many it marked and fails only when the
// database does.
func (s *Store) MarkOrphanedSends(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	// Pending is "outbound, neither sent nor failed"; the condition is messages_pending_idx's.
	res, err := s.db.ExecContext(ctx, `UPDATE messages SET outcome_unknown = true WHERE id IN (
			SELECT id FROM messages WHERE direction = 'out' AND sent_at IS NULL AND failed_at IS NULL AND NOT outcome_unknown
				AND created_at < $1 LIMIT $2) AND status = 'pending'`,
		cutoff.UTC(), limit)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

// statusTime is a time of ours as the status history keeps it: in the platform's precision,
// whole seconds (its webhook timestamps), so that our accepted time and the platform's reports
// order by time, ties broken by rank (MessageByID).
func statusTime(at time.Time) time.Time { return at.UTC().Truncate(time.Second) }

// SendFailure is why a pending send failed: the platform's error, or an unknown outcome.
type SendFailure struct {
	Code    *int // the platform's error code; nil when it gave none (no answer)
	Title   string
	Details string
}

// RecordSendFailure marks the account's pending message failed with the reason and the time
// (failed_at, the history's failed); no event is written. It returns ErrNotFound when the account has no
// such pending message, and fails otherwise only when the database does.
func (s *Store) RecordSendFailure(ctx context.Context, accountID, messageID int64, f SendFailure, at time.Time) error {
	var n int
	err := s.getPrepared(ctx, &n, `WITH m AS (
			UPDATE messages SET status = 'failed', error_code = $3::int, error_title = $4::text, error_details = $5::text,
				failed_at = $6::timestamptz
			WHERE account_id = $1::bigint AND id = $2::bigint AND status = 'pending'
			RETURNING id
		)
		SELECT count(*) FROM m`, accountID, messageID, f.Code, f.Title, f.Details, statusTime(at))
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// SandboxClaim says whether a test send may go out for real through the sandbox number.
type SandboxClaim struct {
	Joined   bool `db:"joined"`    // the phone joined the account's sandbox at some point
	Active   bool `db:"active"`    // ... and its 24-hour window is still open
	Claimed  bool `db:"claimed"`   // a real delivery was counted: send it
	RealSent int  `db:"real_sent"` // real deliveries counted so far, this one included
}

// ClaimSandboxDelivery counts one real delivery to phone, a participant of the account's
// sandbox that joined after since, unless limit real deliveries were already counted. It
// reports what it found in any case and fails only when the database does.
func (s *Store) ClaimSandboxDelivery(ctx context.Context, accountID int64, phone string, since time.Time, limit int) (SandboxClaim, error) {
	var c SandboxClaim
	err := s.getPrepared(ctx, &c, `WITH p AS (
			SELECT real_sent, joined_at > $3::timestamptz AS active FROM sandbox_participants
			WHERE account_id = $1::bigint AND phone = $2::text
		), u AS (
			UPDATE sandbox_participants SET real_sent = real_sent + 1
			WHERE account_id = $1::bigint AND phone = $2::text AND joined_at > $3::timestamptz AND real_sent < $4::int
			RETURNING real_sent
		)
		SELECT EXISTS (SELECT 1 FROM p) AS joined, COALESCE((SELECT active FROM p), false) AS active,
			EXISTS (SELECT 1 FROM u) AS claimed, COALESCE((SELECT real_sent FROM u), (SELECT real_sent FROM p), 0) AS real_sent`,
		accountID, phone, since.UTC(), limit)
	return c, err
}

// TestMessage is a send made with a test or demo key: simulated, or delivered for real as text
// through the sandbox number. It never touches the account's live data.
type TestMessage struct {
	ID                int64     `db:"id" json:"id"`
	AccountID         int64     `db:"account_id" json:"account_id"`
	Destination       string    `db:"destination" json:"destination"`
	TemplateName      string    `db:"template_name" json:"template_name"`
	Delivery          string    `db:"delivery" json:"delivery"` // simulated or real
	PlatformMessageID string    `db:"platform_message_id" json:"platform_message_id"`
	CreatedAt         time.Time `db:"created_at" json:"created_at"`
	ClientReference   *string   `db:"client_reference" json:"client_reference,omitempty"`
}

// TestSendInput is a test-mode send to record. ConversationID and ContactID are the fixture
// values the response shows; they go into the message.sent event.
type TestSendInput struct {
	Destination       string
	TemplateName      string
	Delivery          string // simulated or real
	PlatformMessageID string
	CreatedAt         time.Time
	ConversationID    int64
	ContactID         int64
	ClientReference   string // "" for none
}

const testMessageColumns = `id, account_id, destination, template_name, delivery, platform_message_id, created_at,
	client_reference`

// RecordTestSend stores a test-mode send and its message.sent event (marked test) in one
// statement. It fails only when the database does (or for a delivery other than simulated or
// real), and then nothing is written.
func (s *Store) RecordTestSend(ctx context.Context, accountID int64, in TestSendInput) (TestMessage, error) {
	var m TestMessage
	err := s.getPrepared(ctx, &m, `WITH t AS (
			INSERT INTO test_messages (account_id, destination, template_name, delivery, platform_message_id, created_at,
				client_reference)
			VALUES ($1::bigint, $2::text, $3::text, $4::text, $5::text, $6::timestamptz, $9::text)
			RETURNING `+testMessageColumns+`
		), e AS (
			INSERT INTO events (account_id, type, test, data)
			SELECT $1::bigint, 'message.sent', true, jsonb_build_object('message_id', t.id,
				'chat_message_id', t.platform_message_id, 'conversation_id', $7::bigint, 'contact_id', $8::bigint,
				'destination', t.destination, 'template', t.template_name, 'source', 'api')
				|| jsonb_strip_nulls(jsonb_build_object('client_reference', t.client_reference))
			FROM t
		)
		SELECT * FROM t`, accountID, in.Destination, in.TemplateName, in.Delivery, in.PlatformMessageID,
		in.CreatedAt.UTC(), in.ConversationID, in.ContactID, nullString(in.ClientReference))
	if err == nil {
		s.eventsWritten()
	}
	return m, err
}

// HasParkedStatuses reports whether status reports are parked for the account's platform
// message id. The send path learns it from RecordSentWrites; this is for a recording made
// elsewhere (an adoption). It fails only when the database does.
func (s *Store) HasParkedStatuses(ctx context.Context, accountID int64, platformMessageID string) (bool, error) {
	parked, err := s.parkedFor(ctx, []sentRow{{I: 1, AccountID: accountID, Wamid: platformMessageID}})
	if err != nil {
		return false, err
	}
	return parked[0], nil
}

// sendTargetRow is a connection with, when one matched, a template (t_* columns).
type sendTargetRow struct {
	connectionRow
	TFound           bool            `db:"t_found"`
	TID              int64           `db:"t_id"`
	TPlatformID      string          `db:"t_platform_id"`
	TName            string          `db:"t_name"`
	TLanguage        string          `db:"t_language"`
	TStatus          string          `db:"t_status"`
	TCategoryID      int64           `db:"t_category_id"`
	TCategoryName    string          `db:"t_category_name"`
	TCategoryLabel   string          `db:"t_category_label"`
	TParameterFormat string          `db:"t_parameter_format"`
	THeaderFormat    string          `db:"t_header_format"`
	THeaderParams    int             `db:"t_header_params"`
	TBodyParams      int             `db:"t_body_params"`
	TComponents      json.RawMessage `db:"t_components"`
	TButtons         TemplateButtons `db:"t_buttons"`
	TUnsupported     pq.StringArray  `db:"t_unsupported"`
	TCreatedAt       time.Time       `db:"t_created_at"`
	TUpdatedAt       time.Time       `db:"t_updated_at"`
}

const sendTargetSelect = `SELECT c.account_id, c.waba_id, c.phone_number_id, c.phone_number, c.display_name,
		c.access_token, c.connected_at, t.id IS NOT NULL AS t_found,
		COALESCE(t.id, 0) AS t_id, COALESCE(t.platform_id, '') AS t_platform_id, COALESCE(t.name, '') AS t_name,
		COALESCE(t.language, '') AS t_language, COALESCE(t.status, '') AS t_status,
		COALESCE(t.category_id, 0) AS t_category_id, COALESCE(t.category_name, '') AS t_category_name,
		COALESCE(t.category_label, '') AS t_category_label, COALESCE(t.parameter_format, '') AS t_parameter_format,
		COALESCE(t.header_format, '') AS t_header_format, COALESCE(t.header_params, 0) AS t_header_params,
		COALESCE(t.body_params, 0) AS t_body_params, COALESCE(t.components, '[]') AS t_components,
		COALESCE(t.buttons, '[]') AS t_buttons, COALESCE(t.unsupported, '{}') AS t_unsupported,
		COALESCE(t.created_at, c.connected_at) AS t_created_at, COALESCE(t.updated_at, c.connected_at) AS t_updated_at
	FROM connections c LEFT JOIN LATERAL (
		SELECT t.*, k.name AS category_name, k.label AS category_label
		FROM templates t JOIN template_categories k ON k.id = t.category_id
		WHERE t.account_id = c.account_id AND `

// SendTarget is, in one statement, what a live send needs before it writes anything: the
// account's connected number (access token decrypted) and the templates the request names.
// With templateID > 0 that is the account's template with that id whatever its status (at
// most one); otherwise the account's approved templates called name, in language when it is
// not "" (ordered by language, at most 20). It returns ErrNotFound when the account has no
// number connected, an empty list when no template matches, and fails otherwise only when the
// database does. While CacheSendTargets is on, an answer that found templates is kept and
// given again until the account's number or templates change (sendtargets.go); the caller
// must not change what it gets.
func (s *Store) SendTarget(ctx context.Context, accountID, templateID int64, name, language string) (Connection, []Template, error) {
	k := targetKey{account: accountID, templateID: templateID, name: name, language: language}
	e, gen, ok := s.targets.get(k)
	if ok {
		return e.conn, e.templates, nil
	}
	conn, ts, err := s.sendTarget(ctx, accountID, templateID, name, language)
	if err == nil && len(ts) > 0 {
		s.targets.put(k, gen, targetEntry{conn: conn, templates: ts})
	}
	return conn, ts, err
}

// sendTarget is SendTarget's statement.
func (s *Store) sendTarget(ctx context.Context, accountID, templateID int64, name, language string) (Connection, []Template, error) {
	st, args := "", []any{accountID}
	if templateID > 0 {
		st = sendTargetSelect + `t.id = $2) t ON true WHERE c.account_id = $1`
		args = append(args, templateID)
	} else {
		st = sendTargetSelect + `t.name = $2 AND ($3::text = '' OR t.language = $3::text) AND t.status = 'APPROVED'
			ORDER BY t.language LIMIT 20) t ON true WHERE c.account_id = $1 ORDER BY t.language`
		args = append(args, name, language)
	}
	stmt, err := s.prepared(ctx, st)
	if err != nil {
		return Connection{}, nil, err
	}
	var rows []sendTargetRow
	if err := stmt.SelectContext(ctx, &rows, args...); err != nil {
		return Connection{}, nil, translate(err)
	}
	if len(rows) == 0 {
		return Connection{}, nil, ErrNotFound
	}
	conn, err := s.unseal(rows[0].connectionRow)
	if err != nil {
		return Connection{}, nil, err
	}
	ts := []Template{}
	for _, r := range rows {
		if !r.TFound {
			continue
		}
		ts = append(ts, Template{ID: r.TID, AccountID: accountID, PlatformID: r.TPlatformID, Name: r.TName,
			Language: r.TLanguage, Status: r.TStatus, CategoryID: r.TCategoryID, CategoryName: r.TCategoryName,
			CategoryLabel: r.TCategoryLabel, ParameterFormat: r.TParameterFormat, HeaderFormat: r.THeaderFormat,
			HeaderParams: r.THeaderParams, BodyParams: r.TBodyParams, Components: r.TComponents,
			Buttons: r.TButtons, Unsupported: r.TUnsupported,
			CreatedAt: r.TCreatedAt, UpdatedAt: r.TUpdatedAt})
	}
	return conn, ts, nil
}
