package store

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/lib/pq"
)

// A conversation's thread as the dashboard's inbox shows it: every message of one contact,
// sent and received, with its content, oldest first on the page, paged backwards by keyset on
// (created_at, id) over messages_contact_idx (a conversation is its contact's: one per contact).

// MaxThreadPage is the most messages one page of a thread holds.
const MaxThreadPage = 500

// ThreadMessage is one message of a thread, with what the page needs to show it.
type ThreadMessage struct {
	ID                int64           `db:"id"`
	Direction         string          `db:"direction"` // out or in
	Type              string          `db:"type"`
	TemplateName      string          `db:"template_name"`
	Content           json.RawMessage `db:"content"`
	PlatformMessageID string          `db:"platform_message_id"`
	Status            string          `db:"status"`
	Source            string          `db:"source"` // api or panel
	CampaignName      string          `db:"campaign_name"`
	BroadcastName     string          `db:"broadcast_name"` // "" unless a broadcast sent it
	ErrorCode         *int            `db:"error_code"`
	ErrorTitle        *string         `db:"error_title"`
	CreatedAt         time.Time       `db:"created_at"`
	ReplyToMessageID  *int64          `db:"reply_to_message_id"`
	ReplyToPlatformID string          `db:"reply_to_platform_id"`
	Forwarded         bool            `db:"forwarded"`
	EditedAt          *time.Time      `db:"edited_at"`
	EditedContent     json.RawMessage `db:"edited_content"`
	DeletedAt         *time.Time      `db:"deleted_at"`
	PricingCategory   string          `db:"pricing_category"`
}

// ThreadPage is one page of a thread, oldest first; Older continues with the messages before
// it, nil when there are none.
type ThreadPage struct {
	Messages []ThreadMessage
	Older    *MessageCursor
}

// ThreadMessages returns the newest limit (1 to MaxThreadPage) messages of the contact's
// conversation before the cursor (all when nil), oldest first. It fails only when the
// database does.
func (s *Store) ThreadMessages(ctx context.Context, accountID, contactID int64, before *MessageCursor, limit int) (ThreadPage, error) {
	limit = min(max(limit, 1), MaxThreadPage)
	at, id := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), int64(1<<62)
	if before != nil {
		at, id = before.CreatedAt.UTC(), before.ID
	}
	page := ThreadPage{Messages: []ThreadMessage{}}
	err := s.selectMayLag(ctx, &page.Messages, `SELECT m.id, m.direction, m.type, m.template_name, m.content,
			COALESCE(m.platform_message_id, '') AS platform_message_id, m.status, m.source,
			COALESCE(p.name, '') AS campaign_name, COALESCE(b.name, '') AS broadcast_name,
			m.error_code, m.error_title, m.created_at, m.reply_to_message_id,
			COALESCE(m.reply_to_platform_id, '') AS reply_to_platform_id, m.forwarded, m.edited_at,
			COALESCE(m.edited_content, 'null') AS edited_content, m.deleted_at, COALESCE(m.pricing_category, '') AS pricing_category
		FROM (SELECT * FROM messages m WHERE m.account_id = $1 AND m.contact_id = $2
				AND (m.created_at, m.id) < ($3::timestamptz, $4::bigint)
			ORDER BY m.created_at DESC, m.id DESC LIMIT $5) m
		LEFT JOIN campaigns p ON p.account_id = m.account_id AND p.id = m.campaign_id
		LEFT JOIN LATERAL (SELECT b.name FROM broadcast_recipients r
				JOIN broadcasts b ON b.account_id = r.account_id AND b.id = r.broadcast_id
			WHERE r.account_id = m.account_id AND r.message_id = m.platform_message_id
				AND m.direction = 'out' AND m.platform_message_id IS NOT NULL LIMIT 1) b ON true
		ORDER BY m.created_at DESC, m.id DESC`, accountID, contactID, at, id, limit+1)
	if err != nil {
		return page, translate(err)
	}
	if len(page.Messages) > limit {
		page.Messages = page.Messages[:limit]
		last := page.Messages[limit-1]
		page.Older = &MessageCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	slices.Reverse(page.Messages)
	return page, nil
}

// ThreadQuoted returns the account's messages of those ids (a thread's quoted messages that
// are not on its page), in no particular order; unknown ids and another account's are left
// out. It fails only when the database does.
func (s *Store) ThreadQuoted(ctx context.Context, accountID int64, ids []int64) ([]ThreadMessage, error) {
	out := []ThreadMessage{}
	if len(ids) == 0 {
		return out, nil
	}
	err := s.selectMayLag(ctx, &out, `SELECT m.id, m.direction, m.type, m.template_name, m.content,
			COALESCE(m.platform_message_id, '') AS platform_message_id, m.status, m.source, '' AS campaign_name,
			'' AS broadcast_name, m.error_code, m.error_title, m.created_at, m.reply_to_message_id,
			COALESCE(m.reply_to_platform_id, '') AS reply_to_platform_id, m.forwarded, m.edited_at,
			COALESCE(m.edited_content, 'null') AS edited_content, m.deleted_at, COALESCE(m.pricing_category, '') AS pricing_category
		FROM messages m WHERE m.account_id = $1 AND m.id = ANY($2::bigint[])`, accountID, pq.Array(ids))
	return out, translate(err)
}

// ConversationContact returns the contact of the account's conversation with that id, in one
// statement; ErrNotFound when the account has none (another account's id included).
func (s *Store) ConversationContact(ctx context.Context, accountID, conversationID int64) (Contact, error) {
	var c Contact
	err := s.getPrepared(ctx, &c, `SELECT `+contactColumns+` FROM contacts WHERE account_id = $1
		AND id = (SELECT contact_id FROM conversations WHERE account_id = $1 AND id = $2)`, accountID, conversationID)
	return c, err
}
