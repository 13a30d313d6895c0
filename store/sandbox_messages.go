package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/lib/pq"
)

// SandboxJoin is a handset's join of an account's sandbox.
type SandboxJoin struct {
	AccountID int64     `db:"account_id" json:"account_id"`
	Phone     string    `db:"phone" json:"phone"`
	JoinedAt  time.Time `db:"joined_at" json:"joined_at"`
}

// LatestSandboxJoin returns the most recent sandbox join of the handset known by any of phones
// (its wa_id forms), whatever its age; ErrNotFound when it never joined.
func (s *Store) LatestSandboxJoin(ctx context.Context, phones []string) (SandboxJoin, error) {
	var p SandboxJoin
	err := s.db.GetContext(ctx, &p, `SELECT account_id, phone, joined_at FROM sandbox_participants
		WHERE phone = ANY($1) ORDER BY joined_at DESC, account_id DESC LIMIT 1`, pq.Array(phones))
	return p, translate(err)
}

// SandboxMessage is a message a handset sent to the sandbox number.
type SandboxMessage struct {
	PlatformMessageID string
	AccountID         int64 // the workspace it reached; 0 = none
	Sender            string
	Name              string // the sender's profile name
	Type              string
	ReceivedAt        time.Time
	// Event, when set, writes a message.received event marked test for AccountID with data
	// {message_id, conversation_id, contact_id, from, name, type} merged with EventFields.
	Event          bool
	EventFields    json.RawMessage // a JSON object; nil = none
	ConversationID int64
	ContactID      int64
}

// RecordSandboxMessage records a message to the sandbox number, and its test event when asked,
// in one statement. It reports first = false (and writes nothing) when the platform message id
// was recorded before. It fails only when the database does.
func (s *Store) RecordSandboxMessage(ctx context.Context, m SandboxMessage) (id int64, first bool, err error) {
	var account *int64
	if m.AccountID != 0 {
		account = &m.AccountID
	}
	fields := m.EventFields
	if len(fields) == 0 {
		fields = json.RawMessage(`{}`)
	}
	var ids []int64
	err = s.db.SelectContext(ctx, &ids, `WITH m AS (
			INSERT INTO sandbox_messages (platform_message_id, account_id, sender, type, received_at)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (platform_message_id) DO NOTHING
			RETURNING id, account_id
		), e AS (
			INSERT INTO events (account_id, type, test, data)
			SELECT m.account_id, 'message.received', true, jsonb_build_object('message_id', m.id,
				'conversation_id', $7::bigint, 'contact_id', $8::bigint, 'from', $3::text, 'name', $9::text,
				'type', $4::text) || $10::jsonb
			FROM m WHERE $6::boolean AND m.account_id IS NOT NULL
		)
		SELECT id FROM m`, m.PlatformMessageID, account, m.Sender, m.Type, m.ReceivedAt.UTC(), m.Event,
		m.ConversationID, m.ContactID, m.Name, []byte(fields))
	if err != nil {
		return 0, false, translate(err)
	}
	if len(ids) == 0 {
		return 0, false, nil
	}
	if m.Event {
		s.eventsWritten()
	}
	return ids[0], true, nil
}

// DeleteSandboxMessagesBefore deletes up to limit sandbox message records created before cutoff
// (their events go with the events' own retention) and returns how many it deleted.
func (s *Store) DeleteSandboxMessagesBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM sandbox_messages WHERE id IN (
		SELECT id FROM sandbox_messages WHERE created_at < $1 ORDER BY created_at LIMIT $2)`, cutoff, limit)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

// SandboxMessageID returns the platform id of the message with that id the sandbox number
// received for the account; ErrNotFound when there is none.
func (s *Store) SandboxMessageID(ctx context.Context, accountID, id int64) (string, error) {
	var wamid string
	err := s.db.GetContext(ctx, &wamid, `SELECT platform_message_id FROM sandbox_messages WHERE account_id = $1 AND id = $2`,
		accountID, id)
	return wamid, translate(err)
}
