package domain

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"gateway/server/refusal"
	"gateway/store"
)

// Inbox is the team inbox's operations (the dashboard's inbox pages): its views and the team's
// actions on a conversation, each done by a teammate (Actor, the signed-in member) with its
// rules: an assignee is a member of the account; a note is not blank and at most NoteMaxLen
// characters; resolving and reopening are idempotent. A refusal is a *SendError: KindInvalid
// with the broken rule's field (assignee, body, message_id), KindNotFound for a conversation
// the account's inbox does not have. The records are the store's (store/inbox*.go), which
// audits each action.
type Inbox struct{ Store *store.Store }

// NoteMaxLen is the most characters a note holds.
const NoteMaxLen = 2000

// Actor is the teammate doing an action: their user id in the account.
type Actor struct{ AccountID, UserID int64 }

// errConversationNotFound refuses an action on a conversation the account's inbox lacks.
func errConversationNotFound() *SendError {
	return &SendError{Kind: KindNotFound, Message: "No such conversation in this workspace's inbox"}
}

// inboxErr turns the store's not-found into the domain's refusal.
func inboxErr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return errConversationNotFound()
	}
	return err
}

// List returns a page of one of the inbox's views for the actor (Mine is theirs).
func (i Inbox) List(ctx context.Context, a Actor, f store.InboxFilter) (store.InboxPage, error) {
	f.UserID = a.UserID
	if !validView(f.View) {
		return store.InboxPage{}, Invalid(refusal.One("view", "must be one of "+strings.Join(store.InboxViews, ", ")))
	}
	return i.Store.ListInbox(ctx, a.AccountID, f)
}

func validView(v string) bool {
	for _, w := range store.InboxViews {
		if v == w {
			return true
		}
	}
	return false
}

// Conversation is one conversation's inbox row.
func (i Inbox) Conversation(ctx context.Context, a Actor, conversationID int64) (store.InboxRow, error) {
	r, err := i.Store.InboxConversation(ctx, a.AccountID, conversationID)
	return r, inboxErr(err)
}

// Assign gives the conversation to assigneeID (0: to nobody), who must be a member of the
// account. It reports whether the assignee changed.
func (i Inbox) Assign(ctx context.Context, a Actor, conversationID, assigneeID int64) (bool, error) {
	changed, err := i.Store.AssignConversation(ctx, a.AccountID, conversationID, a.UserID, assigneeID)
	if errors.Is(err, store.ErrNotMember) {
		return false, Invalid(refusal.One("assignee", "must be a member of this workspace"))
	}
	return changed, inboxErr(err)
}

// Resolve resolves the conversation; resolving a resolved one changes nothing (false).
func (i Inbox) Resolve(ctx context.Context, a Actor, conversationID int64) (bool, error) {
	changed, err := i.Store.ResolveConversation(ctx, a.AccountID, conversationID, a.UserID)
	return changed, inboxErr(err)
}

// Reopen reopens a resolved conversation; reopening an open one changes nothing (false).
func (i Inbox) Reopen(ctx context.Context, a Actor, conversationID int64) (bool, error) {
	changed, err := i.Store.ReopenConversation(ctx, a.AccountID, conversationID, a.UserID)
	return changed, inboxErr(err)
}

// AddNote adds an internal note (trimmed; not blank, at most NoteMaxLen characters) by the
// actor.
func (i Inbox) AddNote(ctx context.Context, a Actor, conversationID int64, body string) (store.ConversationNote, error) {
	body = strings.TrimSpace(body)
	switch {
	case body == "":
		return store.ConversationNote{}, Invalid(refusal.One("body", "must not be blank"))
	case !utf8.ValidString(body) || strings.ContainsRune(body, 0):
		return store.ConversationNote{}, Invalid(refusal.One("body", "must be text"))
	case utf8.RuneCountInString(body) > NoteMaxLen:
		return store.ConversationNote{}, Invalid(refusal.One("body", "must be at most 2000 characters"))
	}
	n, err := i.Store.AddConversationNote(ctx, a.AccountID, conversationID, a.UserID, body)
	return n, inboxErr(err)
}

// MarkRead records that the actor read the conversation up to one of its messages, for the
// whole team, and returns how many customer messages remain unread.
func (i Inbox) MarkRead(ctx context.Context, a Actor, conversationID, messageID int64) (int, error) {
	n, err := i.Store.MarkConversationRead(ctx, a.AccountID, conversationID, messageID)
	if errors.Is(err, store.ErrNotFound) {
		if _, cerr := i.Store.InboxConversation(ctx, a.AccountID, conversationID); cerr == nil {
			return 0, Invalid(refusal.One("message_id", "must be a message of this conversation"))
		}
	}
	return n, inboxErr(err)
}

// answered makes a sent answer its conversation's latest activity in the inbox (template sends
// do not reorder it). The answer is sent whatever happens here: a failure is logged, not
// returned, so that the caller never sends it again.
func (s *Sends) answered(ctx context.Context, accountID, conversationID int64) {
	err := s.cfg.Store.RecordConversationAnswer(context.WithoutCancel(ctx), accountID, conversationID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.WarnContext(ctx, "answer not recorded as the inbox's activity", "conversation_id", conversationID, "error", err.Error())
	}
}
