package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The team inbox's reads: the conversations a customer wrote in, by latest activity, one view at
// a time with keyset paging, and one conversation's row. The team's actions are in
// inbox_actions.go, the live change feed in inbox_changes.go. The state they read is kept on
// conversations (migration 000046: last_activity_at, unread_count, assigned_user_id,
// resolved_at).

// Inbox views.
const (
	InboxAll        = "all"         // open conversations
	InboxMine       = "mine"        // open conversations assigned to InboxFilter.UserID
	InboxUnassigned = "unassigned"  // open conversations assigned to nobody
	InboxWindowOpen = "window_open" // open conversations whose service window is open at Now
	InboxResolved   = "resolved"    // resolved conversations
)

// InboxViews lists the views in the order the dashboard shows them.
var InboxViews = []string{InboxAll, InboxMine, InboxUnassigned, InboxWindowOpen, InboxResolved}

// maxServiceWindow is the longest service window after a customer message (72 hours after a
// click-to-WhatsApp ad). A conversation whose window is open at Now had a customer message
// after Now minus this, and that message's arrival set last_activity_at: the Window open view
// reads only that stretch of the open index.
const maxServiceWindow = 72 * time.Hour

// InboxCursor is a position in a view: the row after which the next page starts (the zero
// cursor is the first page). It is the last row's latest activity and conversation id.
type InboxCursor struct {
	At time.Time
	ID int64
}

// String encodes the cursor for a URL ("" for the first page).
func (c InboxCursor) String() string {
	if c.ID == 0 {
		return ""
	}
	return strconv.FormatInt(c.At.UnixMicro(), 10) + "." + strconv.FormatInt(c.ID, 10)
}

// ParseInboxCursor reads a cursor written by String; "" is the first page.
func ParseInboxCursor(s string) (InboxCursor, error) {
	if s == "" {
		return InboxCursor{}, nil
	}
	at, id, ok := strings.Cut(s, ".")
	us, err1 := strconv.ParseInt(at, 10, 64)
	n, err2 := strconv.ParseInt(id, 10, 64)
	if !ok || err1 != nil || err2 != nil || n <= 0 {
		return InboxCursor{}, fmt.Errorf("inbox cursor %q: not a cursor", s)
	}
	return InboxCursor{At: time.UnixMicro(us).UTC(), ID: n}, nil
}

// InboxFilter selects a page of a view. UserID is the teammate whose Mine it is. Search, when
// not empty, keeps the conversations whose contact's name or username contains it, whose
// number contains its digits (a term that is part of a number), or whose user id it is (a
// term shaped like one). Limit is 1 to 200 (0: 50). Now is the time the Window open view and
// each row's window state are read at (zero: the call's time).
type InboxFilter struct {
	View   string
	UserID int64
	Search string
	Before InboxCursor
	Limit  int
	Now    time.Time
}

// InboxRow is one conversation as the inbox lists it.
type InboxRow struct {
	ConversationID  int64      `db:"conversation_id"`
	ContactID       int64      `db:"contact_id"`
	Name            string     `db:"name"`
	Mobile          *string    `db:"mobile"`
	Username        *string    `db:"username"`
	UserID          *string    `db:"user_id"`
	LastActivityAt  time.Time  `db:"last_activity_at"`
	WindowExpiresAt *time.Time `db:"window_expires_at"`
	UnreadCount     int        `db:"unread_count"`
	AssigneeID      *int64     `db:"assignee_id"`
	AssigneeName    string     `db:"assignee_name"` // the teammate's email; "" when unassigned
	ResolvedAt      *time.Time `db:"resolved_at"`
	// The thread's last message, whatever its kind or source (a template or a broadcast too):
	// its id, direction (in, out), type, time, and its text (at most 200 characters) for a text
	// message, "" for another kind or a deleted message. LastMessageID is 0 when the
	// conversation has no message left.
	LastMessageID        int64      `db:"last_message_id"`
	LastMessageDirection string     `db:"last_message_direction"`
	LastMessageType      string     `db:"last_message_type"`
	LastMessageText      string     `db:"last_message_text"`
	LastMessageAt        *time.Time `db:"last_message_at"`
}

// InboxPage is a page of a view and the cursor of the next one (zero when this is the last).
type InboxPage struct {
	Rows []InboxRow
	Next InboxCursor
}

// WindowOpen reports whether the row's service window is open at now.
func (r InboxRow) WindowOpen(now time.Time) bool {
	return r.WindowExpiresAt != nil && r.WindowExpiresAt.After(now)
}

// inboxRowSQL reads the rows of conversations v (a condition on v follows): the contact, the
// assignee and the thread's last message (the newest by the contact's message index).
const inboxRowSQL = `SELECT v.id AS conversation_id, v.contact_id, k.name, k.mobile, k.username, k.user_id, v.last_activity_at,
		v.window_expires_at, v.unread_count, v.assigned_user_id AS assignee_id, COALESCE(u.email, '') AS assignee_name,
		v.resolved_at, COALESCE(lm.id, 0) AS last_message_id, COALESCE(lm.direction, '') AS last_message_direction,
		COALESCE(lm.type, '') AS last_message_type, COALESCE(lm.text, '') AS last_message_text, lm.created_at AS last_message_at
	FROM conversations v
	JOIN contacts k ON k.account_id = v.account_id AND k.id = v.contact_id
	LEFT JOIN users u ON u.id = v.assigned_user_id
	LEFT JOIN LATERAL (
		SELECT m.id, m.direction, m.type, m.created_at,
			CASE WHEN m.type = 'text' AND m.deleted_at IS NULL
				THEN left(COALESCE(m.edited_content, m.content) -> 'text' ->> 'body', 200) END AS text
		FROM messages m WHERE m.account_id = v.account_id AND m.contact_id = v.contact_id AND m.conversation_id = v.id
		ORDER BY m.created_at DESC, m.id DESC LIMIT 1
	) lm ON true
	WHERE v.account_id = $1 AND v.last_activity_at IS NOT NULL`

// inboxViewSQL is each view's condition, written out so that each view's partial index
// (migration 000046) matches it, its arguments appended to args.
func inboxViewSQL(f InboxFilter, now time.Time, args *[]any) (string, error) {
	switch f.View {
	case InboxAll:
		return ` AND v.resolved_at IS NULL`, nil
	case InboxMine:
		if f.UserID == 0 {
			return "", fmt.Errorf("inbox: the Mine view needs a teammate")
		}
		*args = append(*args, f.UserID)
		return fmt.Sprintf(` AND v.resolved_at IS NULL AND v.assigned_user_id = $%d`, len(*args)), nil
	case InboxUnassigned:
		return ` AND v.resolved_at IS NULL AND v.assigned_user_id IS NULL`, nil
	case InboxWindowOpen:
		*args = append(*args, now, now.Add(-maxServiceWindow))
		n := len(*args)
		return fmt.Sprintf(` AND v.resolved_at IS NULL AND v.window_expires_at > $%d AND v.last_activity_at > $%d`, n-1, n), nil
	case InboxResolved:
		return ` AND v.resolved_at IS NOT NULL`, nil
	}
	return "", fmt.Errorf("inbox: unknown view %q", f.View)
}

// ListInbox returns a page of the account's inbox in one view, latest activity first. It fails
// with an error for an unknown view, a Mine without a teammate or a limit out of range, and
// when the database fails.
func (s *Store) ListInbox(ctx context.Context, accountID int64, f InboxFilter) (InboxPage, error) {
	limit := f.Limit
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > 200 {
		return InboxPage{}, fmt.Errorf("inbox: limit %d out of 1..200", limit)
	}
	now := f.Now
	if now.IsZero() {
		now = time.Now()
	}
	args := []any{accountID}
	cond, err := inboxViewSQL(f, now, &args)
	if err != nil {
		return InboxPage{}, err
	}
	if f.Before.ID != 0 {
		args = append(args, f.Before.At, f.Before.ID)
		cond += fmt.Sprintf(` AND (v.last_activity_at, v.id) < ($%d, $%d)`, len(args)-1, len(args))
	}
	rows := []InboxRow{}
	if term := strings.TrimSpace(f.Search); term != "" && !LooksLikeUserID(term) && !IsPhoneFragment(term) {
		if rows, err = s.inboxNameRows(ctx, accountID, cond, args, term, limit); err != nil {
			return InboxPage{}, err
		}
	} else {
		if term != "" {
			cond += inboxSearchSQL(term, &args)
		}
		args = append(args, limit+1)
		q := inboxRowSQL + cond + fmt.Sprintf(` ORDER BY v.last_activity_at DESC, v.id DESC LIMIT $%d`, len(args))
		if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
			return InboxPage{}, translate(err)
		}
	}
	page := InboxPage{Rows: rows}
	if len(rows) > limit {
		page.Rows = rows[:limit]
		last := page.Rows[limit-1]
		page.Next = InboxCursor{At: last.LastActivityAt, ID: last.ConversationID}
	}
	return page, nil
}

// inboxSearchSQL is the condition on the contact k that a user id or a phone fragment makes,
// its arguments appended to args: a user id is looked up as one, part of a number in the
// mobile. Any other term is a name or a username (inboxNameRows, inbox_search.go).
func inboxSearchSQL(term string, args *[]any) string {
	if LooksLikeUserID(term) {
		*args = append(*args, term)
		return fmt.Sprintf(` AND k.user_id = $%d`, len(*args))
	}
	*args = append(*args, "%"+onlyDigits(term)+"%")
	return fmt.Sprintf(` AND k.mobile LIKE $%d`, len(*args))
}

// InboxConversation returns one of the account's conversations as the inbox lists it, or
// ErrNotFound (also for a conversation the customer never wrote in).
func (s *Store) InboxConversation(ctx context.Context, accountID, conversationID int64) (InboxRow, error) {
	var r InboxRow
	err := s.db.GetContext(ctx, &r, inboxRowSQL+` AND v.id = $2`, accountID, conversationID)
	return r, translate(err)
}

// InboxUnreadCap is the most InboxUnreadTotal counts: the badge says "1000+" beyond it.
const InboxUnreadCap = 1000

// InboxUnreadTotal returns how many open conversations of the account have unread customer
// messages (the navigation's badge), at most InboxUnreadCap, from the unread index.
func (s *Store) InboxUnreadTotal(ctx context.Context, accountID int64) (int, error) {
	var n int
	err := s.getPrepared(ctx, &n, `SELECT count(*) FROM (SELECT 1 FROM conversations
		WHERE account_id = $1 AND last_activity_at IS NOT NULL AND resolved_at IS NULL AND unread_count > 0 LIMIT $2) u`,
		accountID, InboxUnreadCap)
	return n, err
}
