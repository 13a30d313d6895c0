package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The team's actions on a conversation of the inbox (inbox.go): assign, resolve, reopen, add a
// note, mark read; and an answer's activity. Each action is one transaction that changes the
// conversation, makes it the latest activity, marks it changed for the live feed
// (inbox_changes.go) and writes the audit log. The rules (who may be assigned, a note's length)
// are the domain's (server/domain/inbox.go).

// Audit actions of the team inbox; the target is the conversation's id.
const (
	AuditConversationAssigned = "conversation.assigned"
	AuditConversationResolved = "conversation.resolved"
	AuditConversationReopened = "conversation.reopened"
	AuditConversationNote     = "conversation.note_added"
)

// inboxTouch is what every team action sets besides its own change: the conversation becomes
// the latest activity and is changed for the live feed.
const inboxTouch = `last_activity_at = GREATEST(v.last_activity_at, now()), change_xid = pg_current_xact_id()`

// inboxAction runs a team action: set ($1 account, $2 conversation, then args) on the
// conversation when it is in the inbox and unchanged holds (the action would change it), and
// the audit entry of user with action and detail (a SQL expression over v, the updated row).
// It reports whether the conversation changed; ErrNotFound when the account has no such
// conversation in its inbox.
func (s *Store) inboxAction(ctx context.Context, accountID, conversationID, userID int64, set, unchanged, action, detail string,
	args ...any) (bool, error) {
	var uid *int64
	if userID != 0 {
		uid = &userID
	}
	n := len(args) + 3
	q := `WITH up AS (
			UPDATE conversations v SET ` + set + `, ` + inboxTouch + `
			WHERE v.account_id = $1 AND v.id = $2 AND v.last_activity_at IS NOT NULL AND ` + unchanged + `
			RETURNING v.*
		), a AS (
			INSERT INTO audit_log (account_id, user_id, action, target, detail)
			SELECT $1, $` + strconv.Itoa(n) + `::bigint, $` + strconv.Itoa(n+1) + `, v.id::text, ` + detail + ` FROM up v
		)
		SELECT EXISTS (SELECT 1 FROM up) AS changed,
			EXISTS (SELECT 1 FROM conversations WHERE account_id = $1 AND id = $2 AND last_activity_at IS NOT NULL) AS found`
	all := append([]any{accountID, conversationID}, args...)
	all = append(all, uid, action)
	var r struct {
		Changed bool `db:"changed"`
		Found   bool `db:"found"`
	}
	if err := s.db.GetContext(ctx, &r, q, all...); err != nil {
		return false, translate(err)
	}
	if !r.Found {
		return false, ErrNotFound
	}
	return r.Changed, nil
}

// ErrNotMember is returned when an assignee is not a member of the account.
var ErrNotMember = errors.New("the assignee is not a member of the workspace")

// AssignConversation assigns the conversation to assigneeID, a member of the account (0: to
// nobody), by userID (0: the system). It reports whether the assignee changed (assigning to the
// current assignee changes nothing and writes no audit entry); ErrNotMember when the assignee
// is not a member (the membership is locked until the commit, so a removal waits and then
// unassigns: memberships_unassign); ErrNotFound when the conversation is not in the account's
// inbox.
func (s *Store) AssignConversation(ctx context.Context, accountID, conversationID, userID, assigneeID int64) (bool, error) {
	var a *int64
	if assigneeID != 0 {
		a = &assigneeID
	}
	changed, err := s.inboxAction(ctx, accountID, conversationID, userID, `assigned_user_id = $3`,
		`v.assigned_user_id IS DISTINCT FROM $3::bigint AND ($3 IS NULL OR EXISTS (SELECT 1 FROM memberships
			WHERE account_id = $1 AND user_id = $3 FOR KEY SHARE))`, AuditConversationAssigned,
		`COALESCE('assigned to ' || (SELECT email FROM users WHERE id = v.assigned_user_id), 'unassigned')`, a)
	if err == nil && !changed && assigneeID != 0 {
		var member bool
		if err := s.db.GetContext(ctx, &member, `SELECT EXISTS (SELECT 1 FROM memberships WHERE account_id = $1 AND user_id = $2)`,
			accountID, assigneeID); err != nil {
			return false, translate(err)
		}
		if !member {
			return false, ErrNotMember
		}
	}
	return changed, err
}

// ResolveConversation resolves the conversation, by userID. It reports whether it was open
// (resolving a resolved conversation changes nothing); ErrNotFound as AssignConversation.
func (s *Store) ResolveConversation(ctx context.Context, accountID, conversationID, userID int64) (bool, error) {
	return s.inboxAction(ctx, accountID, conversationID, userID, `resolved_at = now()`, `v.resolved_at IS NULL`,
		AuditConversationResolved, `''`)
}

// ReopenConversation reopens a resolved conversation, by userID. It reports whether it was
// resolved; ErrNotFound as AssignConversation. A customer message reopens it too (inbound.go).
func (s *Store) ReopenConversation(ctx context.Context, accountID, conversationID, userID int64) (bool, error) {
	return s.inboxAction(ctx, accountID, conversationID, userID, `resolved_at = NULL`, `v.resolved_at IS NOT NULL`,
		AuditConversationReopened, `''`)
}

// ConversationNote is an internal note on a conversation, seen only by the team.
type ConversationNote struct {
	ID             int64     `db:"id"`
	ConversationID int64     `db:"conversation_id"`
	UserID         *int64    `db:"user_id"`    // nil once the user is deleted, or for the system
	UserEmail      string    `db:"user_email"` // "" when UserID is nil
	Body           string    `db:"body"`
	CreatedAt      time.Time `db:"created_at"`
}

// AddConversationNote adds a note by userID to the conversation and returns it; ErrNotFound
// when the conversation is not in the account's inbox. The body is stored as given (the domain
// checks it); the audit entry says its length, not its text.
func (s *Store) AddConversationNote(ctx context.Context, accountID, conversationID, userID int64, body string) (ConversationNote, error) {
	var uid *int64
	if userID != 0 {
		uid = &userID
	}
	var n ConversationNote
	err := s.db.GetContext(ctx, &n, `WITH up AS (
			UPDATE conversations v SET `+inboxTouch+`
			WHERE v.account_id = $1 AND v.id = $2 AND v.last_activity_at IS NOT NULL
			RETURNING v.id
		), n AS (
			INSERT INTO conversation_notes (account_id, conversation_id, user_id, body)
			SELECT $1, up.id, $3, $4 FROM up
			RETURNING id, conversation_id, user_id, body, created_at
		), a AS (
			INSERT INTO audit_log (account_id, user_id, action, target, detail)
			SELECT $1, $3, $5, n.conversation_id::text, length(n.body) || ' characters' FROM n
		)
		SELECT n.id, n.conversation_id, n.user_id, COALESCE(u.email, '') AS user_email, n.body, n.created_at
		FROM n LEFT JOIN users u ON u.id = n.user_id`, accountID, conversationID, uid, safeText(body), AuditConversationNote)
	return n, translate(err)
}

// ConversationNotes lists the conversation's notes, oldest first, the newest limit of them.
func (s *Store) ConversationNotes(ctx context.Context, accountID, conversationID int64, limit int) ([]ConversationNote, error) {
	ns := []ConversationNote{}
	err := s.db.SelectContext(ctx, &ns, `SELECT * FROM (
			SELECT n.id, n.conversation_id, n.user_id, COALESCE(u.email, '') AS user_email, n.body, n.created_at
			FROM conversation_notes n LEFT JOIN users u ON u.id = n.user_id
			WHERE n.account_id = $1 AND n.conversation_id = $2 ORDER BY n.id DESC LIMIT $3
		) n ORDER BY id`, accountID, conversationID, limit)
	return ns, translate(err)
}

// MarkConversationRead records that a teammate read the conversation up to messageID (one of
// its messages) and returns its unread count: the customer messages after the latest message
// read. Reading an earlier message than the one already read changes nothing. The feed
// (inbox_changes.go) hears of it only when the count changes. ErrNotFound when the message is
// not the conversation's or the conversation is not in the account's inbox. Reads are not
// audited: they are not team actions, and a thread is read each time it is opened.
func (s *Store) MarkConversationRead(ctx context.Context, accountID, conversationID, messageID int64) (int, error) {
	var r struct {
		Unread *int `db:"unread"`
		Found  bool `db:"found"`
	}
	err := s.db.GetContext(ctx, &r, `WITH cv AS (
			SELECT v.id, v.contact_id, v.unread_count FROM conversations v
			WHERE v.account_id = $1 AND v.id = $2 AND v.last_activity_at IS NOT NULL
				AND EXISTS (SELECT 1 FROM messages m WHERE m.id = $3 AND m.account_id = $1 AND m.conversation_id = v.id)
		), n AS (
			SELECT count(*)::int AS unread FROM cv JOIN messages m ON m.account_id = $1 AND m.contact_id = cv.contact_id
				AND m.conversation_id = cv.id AND m.direction = 'in' AND m.id > $3
		), up AS (
			UPDATE conversations v SET last_read_message_id = $3, unread_count = n.unread,
				change_xid = CASE WHEN n.unread <> v.unread_count THEN pg_current_xact_id() ELSE v.change_xid END
			FROM cv, n WHERE v.account_id = $1 AND v.id = cv.id AND (v.last_read_message_id IS NULL OR v.last_read_message_id < $3)
			RETURNING v.unread_count
		)
		SELECT COALESCE((SELECT unread_count FROM up), (SELECT unread_count FROM cv)) AS unread, EXISTS (SELECT 1 FROM cv) AS found`,
		accountID, conversationID, messageID)
	if err != nil {
		return 0, translate(err)
	}
	if !r.Found || r.Unread == nil {
		return 0, ErrNotFound
	}
	return *r.Unread, nil
}

// RecordConversationAnswer makes an answer (a non-template message sent inside the window, from
// the API or the panel) the conversation's latest activity. Template sends and broadcasts do
// not call it: they do not reorder the inbox. ErrNotFound when the conversation is not in the
// account's inbox.
func (s *Store) RecordConversationAnswer(ctx context.Context, accountID, conversationID int64) error {
	var id int64
	err := s.getPrepared(ctx, &id, `UPDATE conversations v SET `+inboxTouch+`
		WHERE v.account_id = $1 AND v.id = $2 AND v.last_activity_at IS NOT NULL RETURNING v.id`, accountID, conversationID)
	if err != nil {
		return fmt.Errorf("record answer activity: %w", err)
	}
	return nil
}
