package store

import (
	"context"
	"time"
)

// Sends made with test and demo keys: kept in test_messages, apart from the account's live data.

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
	// Type is the message's type for its message.sent event: "" is a template, else an
	// answer's kind ("text", "image", ...).
	Type string
}

const testMessageColumns = `id, account_id, destination, template_name, delivery, platform_message_id, created_at,
	client_reference`

// RecordTestSend stores a test-mode send and its message.sent event (marked test, with the
// message's type) in one statement. It fails only when the database does (or for a delivery other than simulated or
// real), and then nothing is written.
func (s *Store) RecordTestSend(ctx context.Context, accountID int64, in TestSendInput) (TestMessage, error) {
	var m TestMessage
	typ := in.Type
	if typ == "" {
		typ = TypeTemplate
	}
	err := s.getPrepared(ctx, &m, `WITH t AS (
			INSERT INTO test_messages (account_id, destination, template_name, delivery, platform_message_id, created_at,
				client_reference)
			VALUES ($1::bigint, $2::text, $3::text, $4::text, $5::text, $6::timestamptz, $9::text)
			RETURNING `+testMessageColumns+`
		), e AS (
			INSERT INTO events (account_id, type, test, data)
			SELECT $1::bigint, 'message.sent', true, jsonb_build_object('message_id', t.id,
				'chat_message_id', t.platform_message_id, 'conversation_id', $7::bigint, 'contact_id', $8::bigint,
				'destination', t.destination, 'template', t.template_name, 'source', 'api', 'type', $10::text)
				|| jsonb_strip_nulls(jsonb_build_object('client_reference', t.client_reference))
			FROM t
		)
		SELECT * FROM t`, accountID, in.Destination, in.TemplateName, in.Delivery, in.PlatformMessageID,
		in.CreatedAt.UTC(), in.ConversationID, in.ContactID, nullString(in.ClientReference), typ)
	if err == nil {
		s.eventsWritten()
	}
	return m, err
}
