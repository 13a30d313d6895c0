package store

import (
	"context"
	"slices"
	"time"
)

// Message is a template message the account sent, with its status history and what a report
// names beside it.
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
	// Type is the message's kind: template for a template send.
	Type string `db:"type" json:"type"`
	// The message's recipient (its contact's name, number and business-scoped user id), its
	// template's language and its campaign's name, each "" when not known; and when its
	// contact's customer service window closes, nil when the person never wrote.
	RecipientName    string     `db:"recipient_name" json:"recipient_name"`
	RecipientMobile  string     `db:"recipient_mobile" json:"recipient_mobile"`
	RecipientUserID  string     `db:"recipient_user_id" json:"recipient_user_id,omitempty"`
	TemplateLanguage string     `db:"template_language" json:"template_language,omitempty"`
	CampaignName     string     `db:"campaign_name" json:"campaign_name,omitempty"`
	WindowExpiresAt  *time.Time `db:"window_expires_at" json:"window_expires_at,omitempty"`
	// Pricing is the platform's billing as its status reports gave it, nil until one did.
	Pricing *Pricing `db:"-" json:"-"`
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

// messageColumns are the columns of messages m that messageRow scans.
const messageColumns = `m.id, m.account_id, m.contact_id, m.conversation_id, m.campaign_id,
	m.template_id, m.destination, m.template_name, COALESCE(m.platform_message_id, '') AS platform_message_id,
	m.status, m.error_code, m.error_title, m.error_details, m.created_at, m.sent_at, m.client_reference,
	m.outcome_unknown, m.delivered_at, m.read_at, m.failed_at, m.pricing_type, m.pricing_category, m.pricing_model,
	m.type, COALESCE(mc.name, '') AS recipient_name, COALESCE(mc.mobile, '') AS recipient_mobile,
	COALESCE(mc.user_id, '') AS recipient_user_id, COALESCE(m.content->>'language', '') AS template_language,
	mv.window_expires_at`

// messageJoins are the rows messageColumns read beside messages m, each by its unique
// (account_id, id): the contact and the conversation (whose window_expires_at is the contact's
// service window), both of which change. LEFT joins: a message is read whether or not they are
// still there. Every join costs the poll, the API's most frequent read, an index scan, so what
// does not change is not joined: a template send keeps the language it sent in its content
// (the language of its template_id), and the campaign's name is read once per process
// (withCampaignName).
const messageJoins = `
	LEFT JOIN contacts mc ON mc.account_id = m.account_id AND mc.id = m.contact_id
	LEFT JOIN conversations mv ON mv.account_id = m.account_id AND mv.id = m.conversation_id`

// messageMatch is the condition on messages m that MessageByID reads by: the account's outbound
// message with that id (account and id are SQL expressions).
func messageMatch(account, id string) string {
	return `m.account_id = ` + account + ` AND m.id = ` + id + ` AND m.direction = 'out'`
}

// messageRow is a message as messageColumns select it.
type messageRow struct {
	Message
	DeliveredAt *time.Time `db:"delivered_at"`
	ReadAt      *time.Time `db:"read_at"`
	FailedAt    *time.Time `db:"failed_at"`
	// The pricing columns, NULL until a status report gave them.
	PricingType     *string `db:"pricing_type"`
	PricingCategory *string `db:"pricing_category"`
	PricingModel    *string `db:"pricing_model"`
}

// fields are pointers to r's fields in messageColumns' order: a Scan into them reads a row
// without reflection (TestMessageScanMatchesColumns holds the two in step).
func (r *messageRow) fields() []any {
	m := &r.Message
	return []any{&m.ID, &m.AccountID, &m.ContactID, &m.ConversationID, &m.CampaignID,
		&m.TemplateID, &m.Destination, &m.TemplateName, &m.PlatformMessageID,
		&m.Status, &m.ErrorCode, &m.ErrorTitle, &m.ErrorDetails, &m.CreatedAt, &m.SentAt, &m.ClientReference,
		&m.OutcomeUnknown, &r.DeliveredAt, &r.ReadAt, &r.FailedAt, &r.PricingType, &r.PricingCategory, &r.PricingModel,
		&m.Type, &m.RecipientName, &m.RecipientMobile, &m.RecipientUserID, &m.TemplateLanguage,
		&m.WindowExpiresAt}
}

// message is the row as a Message with its history.
func (r messageRow) message() Message {
	m := r.Message
	m.History = history(m.SentAt, r.DeliveredAt, r.ReadAt, r.FailedAt)
	if r.PricingType != nil || r.PricingCategory != nil || r.PricingModel != nil {
		deref := func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		}
		m.Pricing = &Pricing{Type: deref(r.PricingType), Category: deref(r.PricingCategory), Model: deref(r.PricingModel)}
	}
	return m
}

// messageByIDSQL reads account $1's outbound message $2.
var messageByIDSQL = `SELECT ` + messageColumns + ` FROM messages m` + messageJoins + ` WHERE ` + messageMatch("$1", "$2")

// MessageByID returns the account's outbound message with its history, in one statement
// reading one row (and its campaign's name the first time the process reads it); ErrNotFound when the account sent no message with that id (inbound messages
// are not returned). ContactCreated is left false: ContactCreatedBySend reads it.
func (s *Store) MessageByID(ctx context.Context, accountID, id int64) (Message, error) {
	st, err := s.prepared(ctx, messageByIDSQL)
	if err != nil {
		return Message{}, err
	}
	var row messageRow
	if err := st.QueryRowContext(ctx, accountID, id).Scan(row.fields()...); err != nil {
		return Message{}, translate(err)
	}
	m := row.message()
	return m, s.withCampaignName(ctx, &m)
}

// history is a message's status times as its history: each time it keeps, oldest first by
// whole second (the platform's precision), ties in rank order (sent, delivered, read, failed).
func history(sent, delivered, read, failed *time.Time) []StatusChange {
	h := make([]StatusChange, 0, 4)
	for _, c := range []struct {
		status string
		at     *time.Time
	}{{"sent", sent}, {"delivered", delivered}, {"read", read}, {"failed", failed}} {
		if c.at != nil {
			h = append(h, StatusChange{Status: c.status, At: *c.at})
		}
	}
	slices.SortStableFunc(h, func(a, b StatusChange) int {
		return a.At.Truncate(time.Second).Compare(b.At.Truncate(time.Second))
	})
	return h
}

// ContactCreatedBySend reports whether the account's message (sent to contactID at createdAt)
// created its contact: the contact was created in the send's statement, so at the same time.
// It returns false for a contact the account does not have, and fails only when the database
// does.
func (s *Store) ContactCreatedBySend(ctx context.Context, accountID, contactID int64, createdAt time.Time) (bool, error) {
	var created bool
	err := s.getPrepared(ctx, &created, `SELECT EXISTS (SELECT 1 FROM contacts
		WHERE account_id = $1 AND id = $2 AND created_at = $3)`, accountID, contactID, createdAt)
	return created, err
}

// TestMessageByID returns the account's test-mode send with that id; ErrNotFound when the
// account has none.
func (s *Store) TestMessageByID(ctx context.Context, accountID, id int64) (TestMessage, error) {
	var m TestMessage
	err := s.getPrepared(ctx, &m, `SELECT `+testMessageColumns+` FROM test_messages WHERE account_id = $1 AND id = $2`, accountID, id)
	return m, err
}
