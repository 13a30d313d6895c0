package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Message is a template message the account sent, with its status history.
type Message struct {
	ID                int64      `db:"id" json:"id"`
	AccountID         int64      `db:"account_id" json:"account_id"`
	ContactID         int64      `db:"contact_id" json:"contact_id"`
	ConversationID    int64      `db:"conversation_id" json:"conversation_id"`
	CampaignID        *int64     `db:"campaign_id" json:"campaign_id,omitempty"`
	TemplateID        *int64     `db:"template_id" json:"template_id,omitempty"`
	Destination       string     `db:"destination" json:"destination"`
	TemplateName      string     `db:"template_name" json:"template_name"`
	PlatformMessageID string     `db:"platform_message_id" json:"platform_message_id"` // "" until the platform accepted it
	Status            string     `db:"status" json:"status"`                           // pending, sent, delivered, read or failed
	ErrorCode         *int       `db:"error_code" json:"error_code,omitempty"`
	ErrorTitle        *string    `db:"error_title" json:"error_title,omitempty"`
	ErrorDetails      *string    `db:"error_details" json:"error_details,omitempty"`
	CreatedAt         time.Time  `db:"created_at" json:"created_at"`
	SentAt            *time.Time `db:"sent_at" json:"sent_at,omitempty"`
	ClientReference   *string    `db:"client_reference" json:"client_reference,omitempty"`
	// OutcomeUnknown: the message is pending and its platform call may have happened, but the
	// answer was lost; a status report will adopt it (MarkOutcomeUnknown).
	OutcomeUnknown bool `db:"outcome_unknown" json:"outcome_unknown"`
	// ContactCreated: the send that recorded the message created its contact.
	ContactCreated bool `db:"contact_created" json:"-"`
	// History is every status recorded for the message, oldest first in whole seconds (the
	// platform's precision, which the send path's own times are truncated to), ties in rank
	// order (sent, delivered, read, failed), each with the platform's timestamp.
	History []StatusChange `db:"-" json:"history"`
}

// StatusChange is one status a message reached and when the platform says it happened.
type StatusChange struct {
	Status string    `json:"status"`
	At     time.Time `json:"at"`
}

// MessageByID returns the account's outbound message with its history, in one statement;
// ErrNotFound when the account sent no message with that id (inbound messages are not
// returned).
func (s *Store) MessageByID(ctx context.Context, accountID, id int64) (Message, error) {
	var row struct {
		Message
		History []byte `db:"history"`
	}
	err := s.getPrepared(ctx, &row, `SELECT m.id, m.account_id, m.contact_id, m.conversation_id, m.campaign_id,
			m.template_id, m.destination, m.template_name, COALESCE(m.platform_message_id, '') AS platform_message_id,
			m.status, m.error_code, m.error_title, m.error_details, m.created_at, m.sent_at, m.client_reference,
			m.outcome_unknown,
			COALESCE((SELECT c.created_at = m.created_at FROM contacts c
				WHERE c.account_id = m.account_id AND c.id = m.contact_id), false) AS contact_created,
			COALESCE((SELECT json_agg(json_build_object('status', h.status, 'at', h.occurred_at)
					ORDER BY date_trunc('second', h.occurred_at), status_rank(h.status))
				FROM message_statuses h WHERE h.account_id = m.account_id AND h.message_id = m.id), '[]') AS history
		FROM messages m WHERE m.account_id = $1 AND m.id = $2 AND m.direction = 'out'`, accountID, id)
	if err != nil {
		return Message{}, err
	}
	m := row.Message
	if err := json.Unmarshal(row.History, &m.History); err != nil {
		return Message{}, fmt.Errorf("message %d history: %w", id, err)
	}
	return m, nil
}

// TestMessageByID returns the account's test-mode send with that id; ErrNotFound when the
// account has none.
func (s *Store) TestMessageByID(ctx context.Context, accountID, id int64) (TestMessage, error) {
	var m TestMessage
	err := s.getPrepared(ctx, &m, `SELECT `+testMessageColumns+` FROM test_messages WHERE account_id = $1 AND id = $2`, accountID, id)
	return m, err
}
