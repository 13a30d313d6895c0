package dashboard

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"gateway/store"
)

// The team's side of a thread: who it is assigned to, resolve and reopen, and internal notes
// only the team sees. Each action is recorded in the audit log by the store, in the same
// statement as the change.

// teamData is a thread's team section; Found is false for a conversation the customer never
// wrote in (it is not in the inbox, so it has no team state).
type teamData struct {
	Found   bool
	Row     store.InboxRow
	Members []store.Member
	Notes   []store.ConversationNote
	// Note is the note being written (shown again when it was refused).
	Note string
}

// AssignedTo reports whether the conversation is assigned to the user.
func (t teamData) AssignedTo(userID int64) bool {
	return t.Row.AssigneeID != nil && *t.Row.AssigneeID == userID
}

// maxNote is the longest internal note, in characters.
const maxNote = 2000

// teamSection reads the conversation's team state, its members and its notes.
func (d *Dashboard) teamSection(ctx context.Context, accountID, conv int64) (teamData, error) {
	row, err := d.cfg.Store.InboxConversation(ctx, accountID, conv)
	if errors.Is(err, store.ErrNotFound) {
		return teamData{}, nil
	} else if err != nil {
		return teamData{}, err
	}
	t := teamData{Found: true, Row: row}
	if t.Members, err = d.cfg.Store.MembersByAccount(ctx, accountID, 200); err != nil {
		return t, err
	}
	t.Notes, err = d.cfg.Store.ConversationNotes(ctx, accountID, conv, 100)
	return t, err
}

// assignConversation assigns the conversation to the chosen member, or to nobody ("0").
func (d *Dashboard) assignConversation(w http.ResponseWriter, r *http.Request, s *store.Session) {
	to, err := strconv.ParseInt(r.PostFormValue("assignee"), 10, 64)
	if err != nil || to < 0 {
		d.threadForm(w, r, s, http.StatusUnprocessableEntity, "Choose a teammate, or nobody.")
		return
	}
	notice := "assigned"
	if to == 0 {
		notice = "unassigned"
	} else if ok, err := d.isMember(r.Context(), s.AccountID, to); err != nil {
		d.serverError(w, r, err)
		return
	} else if !ok {
		d.threadForm(w, r, s, http.StatusUnprocessableEntity, "That teammate is not a member of this workspace.")
		return
	}
	d.teamAction(w, r, s, notice, func(ctx context.Context, conv int64) error {
		_, err := d.cfg.Store.AssignConversation(ctx, s.AccountID, conv, s.UserID, to)
		return err
	})
}

// resolveConversation marks the conversation resolved (a new customer message reopens it).
func (d *Dashboard) resolveConversation(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.teamAction(w, r, s, "resolved", func(ctx context.Context, conv int64) error {
		_, err := d.cfg.Store.ResolveConversation(ctx, s.AccountID, conv, s.UserID)
		return err
	})
}

// reopenConversation reopens a resolved conversation.
func (d *Dashboard) reopenConversation(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.teamAction(w, r, s, "reopened", func(ctx context.Context, conv int64) error {
		_, err := d.cfg.Store.ReopenConversation(ctx, s.AccountID, conv, s.UserID)
		return err
	})
}

// addNote adds an internal note to the conversation.
func (d *Dashboard) addNote(w http.ResponseWriter, r *http.Request, s *store.Session) {
	body := strings.TrimSpace(r.PostFormValue("note"))
	if body == "" || len([]rune(body)) > maxNote {
		d.threadForm(w, r, s, http.StatusUnprocessableEntity, "A note takes 1 to 2,000 characters.")
		return
	}
	d.teamAction(w, r, s, "note-added", func(ctx context.Context, conv int64) error {
		_, err := d.cfg.Store.AddConversationNote(ctx, s.AccountID, conv, s.UserID, body)
		return err
	})
}

// teamAction runs a team action on the path's conversation and shows the thread again with
// its notice. A conversation not in the inbox is a 404; an assignee who is not a member of the
// workspace is refused before (isMember).
func (d *Dashboard) teamAction(w http.ResponseWriter, r *http.Request, s *store.Session, notice string, act func(context.Context, int64) error) {
	conv, _, ok := d.conversationOf(w, r, s)
	if !ok {
		return
	}
	err := act(r.Context(), conv)
	switch {
	case errors.Is(err, store.ErrNotFound):
		d.notFound(w, r, s)
		return
	case err != nil:
		d.serverError(w, r, err)
		return
	}
	redirect(w, r, Prefix+"/inbox/"+strconv.FormatInt(conv, 10), notice)
}

// isMember reports whether the user is a member of the workspace (an assignee must be).
func (d *Dashboard) isMember(ctx context.Context, accountID, userID int64) (bool, error) {
	ms, err := d.cfg.Store.MembersByAccount(ctx, accountID, 200)
	for _, m := range ms {
		if m.UserID == userID {
			return true, err
		}
	}
	return false, err
}
