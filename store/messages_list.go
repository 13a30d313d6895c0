package store

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"
)

// The message listing (GET /v1/messages, the dashboard's messages and contact pages): newest
// first, filtered, a page at a time by keyset on (created_at, id) descending, so a page never
// shifts while new messages arrive. Each filter combination walks one of the newest-first
// indexes of messages, or for failed and pending its partial indexes (store/schema.sql lists
// them all; no index names the other statuses, so that delivered and read updates stay
// heap-only: those filters skip rows of the walk).

// MessageFilter selects messages of an account. Zero values do not filter.
type MessageFilter struct {
	Status     string // sent, delivered, read, failed (or pending, received with the options below)
	CampaignID int64  // the campaign
	ContactID  int64  // the contact
	// ContactIDs, when not nil, keeps the messages of these contacts only (an empty list keeps
	// none): the dashboard's search by name or number, resolved to contacts first.
	ContactIDs []int64
	Template   string // the template name
	// TemplateContains keeps the messages whose template name contains it, case-insensitively.
	TemplateContains string
	CreatedAfter     time.Time // created_at >= this
	CreatedBefore    time.Time // created_at < this
	// Direction is "out" (sent messages, the default), "in" (received) or "all".
	Direction string
	// WithPending lists sends the platform has not answered yet (status pending); the API leaves
	// them out.
	WithPending bool
	// Detailed also reads the contact's name and mobile, the caller's reference and the
	// delivered and read times (the dashboard's list and its export); the API's listing leaves
	// them out.
	Detailed bool
	// After is the position to continue from: the NextCursor of the previous page.
	After *MessageCursor
	// Limit is the page size (1 to 1000; 50 when 0).
	Limit int
}

// MessageCursor is a position in a listing: the created_at and id of the last row of a page.
type MessageCursor struct {
	CreatedAt time.Time
	ID        int64
}

// String encodes the cursor as an opaque URL-safe token.
func (c MessageCursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.CreatedAt.UnixMicro(), 10) + "." + strconv.FormatInt(c.ID, 10)))
}

// ErrBadCursor is returned by ParseMessageCursor for a token it did not make.
var ErrBadCursor = errors.New("malformed cursor")

// ParseMessageCursor decodes what MessageCursor.String made; ErrBadCursor otherwise.
func ParseMessageCursor(s string) (MessageCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return MessageCursor{}, ErrBadCursor
	}
	at, id, ok := strings.Cut(string(b), ".")
	if !ok {
		return MessageCursor{}, ErrBadCursor
	}
	us, err1 := strconv.ParseInt(at, 10, 64)
	n, err2 := strconv.ParseInt(id, 10, 64)
	if err1 != nil || err2 != nil || n < 1 || !CursorTimeOK(time.UnixMicro(us)) {
		return MessageCursor{}, ErrBadCursor
	}
	return MessageCursor{CreatedAt: time.UnixMicro(us).UTC(), ID: n}, nil
}

// CursorTimeOK reports whether a page cursor's time can be a row's: within the years 1 to
// 9999, which PostgreSQL's timestamptz holds (a time outside it fails the statement).
func CursorTimeOK(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 1 && y <= 9999
}

// ListedMessage is one row of a message listing.
type ListedMessage struct {
	ID                int64      `db:"id"`
	ContactID         int64      `db:"contact_id"`
	ConversationID    int64      `db:"conversation_id"`
	CampaignID        *int64     `db:"campaign_id"`
	CampaignName      string     `db:"campaign_name"` // "" without a campaign
	Direction         string     `db:"direction"`     // out or in
	Type              string     `db:"type"`
	Destination       string     `db:"destination"`
	TemplateName      string     `db:"template_name"`
	PlatformMessageID string     `db:"platform_message_id"`
	Status            string     `db:"status"`
	Source            string     `db:"source"` // api or panel
	ErrorCode         *int       `db:"error_code"`
	ErrorTitle        *string    `db:"error_title"`
	ErrorDetails      *string    `db:"error_details"`
	CreatedAt         time.Time  `db:"created_at"`
	SentAt            *time.Time `db:"sent_at"`
	// Read only with MessageFilter.Detailed and by CampaignMessagesAfter (the variables by the
	// latter only).
	ContactName     string     `db:"contact_name"`
	ContactMobile   string     `db:"contact_mobile"` // "" for a contact known only by a user id
	ClientReference *string    `db:"client_reference"`
	DeliveredAt     *time.Time `db:"delivered_at"`
	ReadAt          *time.Time `db:"read_at"`
	// BodyVariables and HeaderVariables are the values the template was filled with, each a
	// JSON array as PostgreSQL writes it (["Ana", "ORD-7781"]); "" when the send had none.
	BodyVariables   string `db:"body_variables"`
	HeaderVariables string `db:"header_variables"`
}

// MessagePage is one page of a listing; Next is nil on the last page.
type MessagePage struct {
	Messages []ListedMessage
	Next     *MessageCursor
}

// ListMessages returns one page of the account's messages matching f, newest first, in one
// statement. It fails only when the database does.
func (s *Store) ListMessages(ctx context.Context, accountID int64, f MessageFilter) (MessagePage, error) {
	q, args := messageListQuery(accountID, f)
	limit := args[len(args)-1].(int) - 1
	page := MessagePage{Messages: []ListedMessage{}}
	// Not a prepared statement: a cached generic plan cannot tell a campaign of 1 % of the
	// messages from one of 50 % and walks the wrong index; planned per call with the values it
	// picks the index that matches, for a planning cost far below a wrong index's.
	if err := s.selectMayLag(ctx, &page.Messages, q, args...); err != nil {
		return page, translate(err)
	}
	if len(page.Messages) > limit {
		page.Messages = page.Messages[:limit]
		last := page.Messages[limit-1]
		page.Next = &MessageCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return page, nil
}

// messageListQuery builds the statement of a listing and its arguments; the last argument is
// the page size plus one (the extra row tells whether another page follows).
func messageListQuery(accountID int64, f MessageFilter) (string, []any) {
	where, args := messageListWhere(accountID, f)
	if f.After != nil {
		args = append(args, f.After.CreatedAt.UTC(), f.After.ID)
		where = append(where, `(m.created_at, m.id) < ($`+strconv.Itoa(len(args)-1)+`::timestamptz, $`+strconv.Itoa(len(args))+`::bigint)`)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 1000)
	args = append(args, limit+1)
	inner, outer, join := "", "", ""
	if f.Detailed {
		inner = `, m.client_reference, m.delivered_at, m.read_at`
		outer = `, m.client_reference, m.delivered_at, m.read_at,
			COALESCE(c.name, '') AS contact_name, COALESCE(c.mobile, '') AS contact_mobile`
		join = `
		LEFT JOIN contacts c ON c.account_id = m.account_id AND c.id = m.contact_id`
	}
	q := `SELECT m.id, m.contact_id, m.conversation_id, m.campaign_id, COALESCE(p.name, '') AS campaign_name,
			m.direction, m.type, m.destination, m.template_name, m.platform_message_id, m.status, m.source,
			m.error_code, m.error_title, m.error_details, m.created_at, m.sent_at` + outer + `
		FROM (SELECT m.id, m.account_id, m.contact_id, m.conversation_id, m.campaign_id, m.direction, m.type,
				m.destination, m.template_name, COALESCE(m.platform_message_id, '') AS platform_message_id, m.status,
				m.source, m.error_code, m.error_title, m.error_details, m.created_at, m.sent_at` + inner + `
			FROM messages m WHERE ` + strings.Join(where, " AND ") + `
			ORDER BY m.created_at DESC, m.id DESC LIMIT $` + strconv.Itoa(len(args)) + `) m
		LEFT JOIN campaigns p ON p.account_id = m.account_id AND p.id = m.campaign_id` + join + `
		ORDER BY m.created_at DESC, m.id DESC`
	return q, args
}

// messageListWhere is the conditions of a listing's filter (without its cursor) and their
// arguments, the account id first.
func messageListWhere(accountID int64, f MessageFilter) ([]string, []any) {
	args := []any{accountID}
	where := []string{`m.account_id = $1`}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(args))))
	}
	switch f.Direction {
	case "all":
	case "in":
		where = append(where, `m.direction = 'in'`)
	default:
		where = append(where, `m.direction = 'out'`)
	}
	if !f.WithPending {
		where = append(where, `m.status <> 'pending'`)
	}
	if f.Status != "" {
		add(`m.status = $?::text`, f.Status)
		if f.Status == "failed" {
			// Equivalent (failed is terminal and always has its time), and it is the predicate
			// of messages_failed_idx, which the planner can then use.
			where = append(where, `m.failed_at IS NOT NULL`)
		}
		if f.Status == "pending" {
			// Equivalent (an outbound message is pending exactly when neither sent_at nor
			// failed_at is set), split by outcome so that each half implies the predicate of
			// an index: messages_pending_idx (known outcome, all accounts, transient) and
			// messages_pending_unknown_idx (unknown outcome, per account).
			where = append(where, `((m.direction = 'out' AND m.sent_at IS NULL AND m.failed_at IS NULL AND NOT m.outcome_unknown)
				OR (m.direction = 'out' AND m.sent_at IS NULL AND m.failed_at IS NULL AND m.outcome_unknown))`)
		}
	}
	if f.CampaignID != 0 {
		add(`m.campaign_id = $?::bigint`, f.CampaignID)
	}
	if f.ContactID != 0 {
		add(`m.contact_id = $?::bigint`, f.ContactID)
	}
	if f.ContactIDs != nil {
		add(`m.contact_id = ANY($?::bigint[])`, pq.Array(f.ContactIDs))
	}
	if f.Template != "" {
		add(`m.template_name = $?::text`, f.Template)
	}
	if f.TemplateContains != "" {
		add(`m.template_name ILIKE $?::text`, "%"+escapeLike(f.TemplateContains)+"%")
	}
	if !f.CreatedAfter.IsZero() {
		add(`m.created_at >= $?::timestamptz`, f.CreatedAfter.UTC())
	}
	if !f.CreatedBefore.IsZero() {
		add(`m.created_at < $?::timestamptz`, f.CreatedBefore.UTC())
	}
	return where, args
}

// MessageAttempts returns the webhook attempts of the account's events about one message
// (message.sent and message.status, recorded at or after since, the message's creation),
// oldest first, at most limit: the dashboard's message page links each into the request log.
// It fails only when the database does.
func (s *Store) MessageAttempts(ctx context.Context, accountID, messageID int64, since time.Time, limit int) ([]LoggedAttempt, error) {
	out := []LoggedAttempt{}
	err := s.db.SelectContext(ctx, &out, loggedAttemptSelect+loggedAttemptFrom+`
		WHERE a.account_id = $1 AND e.account_id = $1 AND e.created_at >= $3::timestamptz
			AND e.type IN ('message.sent', 'message.status') AND e.data->>'message_id' = $2::bigint::text
		ORDER BY a.attempted_at, a.id LIMIT $4`, accountID, messageID, since.UTC(), limit)
	return out, translate(err)
}

// MessageContent returns what the account's message was sent with (template language and
// variables, a JSON object as stored); ErrNotFound when the account has no such message.
func (s *Store) MessageContent(ctx context.Context, accountID, id int64) ([]byte, error) {
	var b []byte
	err := s.db.GetContext(ctx, &b, `SELECT content FROM messages WHERE account_id = $1 AND id = $2`, accountID, id)
	return b, translate(err)
}
