package store

import (
	"context"
	"fmt"
	"time"
)

// The second write of a live send: the platform accepted it (RecordSentWrites), and the
// reports parked for its platform id meanwhile are found.

// recordSentSQL closes pending sends the platform accepted: platform id, status sent and
// sent_at (the history's sent), the message.sent event (with the message's type, and the user
// id a send to a user id keeps in its content), and the platform's wa_id as a contact alias
// when it differs from the destination. It takes a batch, one send per element of the
// JSON array $1 (sentRow), each for a different message: the send path batches concurrent
// recordings into it (group commit, server/groupcommit); an adoption runs it with one.
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
			messages.destination, messages.template_name, messages.client_reference, messages.source, messages.type,
			messages.content->>'user_id' AS user_id
	), e AS (
		INSERT INTO events (account_id, type, data)
		SELECT m.account_id, 'message.sent', jsonb_build_object('message_id', m.id, 'chat_message_id', m.wamid,
			'conversation_id', m.conversation_id, 'contact_id', m.contact_id, 'destination', m.destination,
			'template', m.template_name, 'source', m.source, 'type', m.type)
			|| jsonb_strip_nulls(jsonb_build_object('client_reference', m.client_reference, 'user_id', m.user_id))
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
// whether status reports are parked for that account's platform id.
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
