package dashboard

import (
	"context"
	"net/http"
	"strconv"

	"gateway/server/domain"
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

// teamSection reads the conversation's team state, its members and its notes.
func (d *Dashboard) teamSection(ctx context.Context, s *store.Session, conv int64) (teamData, error) {
	accountID := s.AccountID
	row, err := d.inboxOps().Conversation(ctx, actorOf(s), conv)
	if refused := domain.AsSendError(err); refused != nil && refused.Kind == domain.KindNotFound {
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

// inboxOps is the team inbox's operations (domain.Inbox): the rules of each action (an assignee
// is a member, a note is text of 1 to domain.NoteMaxLen characters) are the domain's.
func (d *Dashboard) inboxOps() domain.Inbox { return domain.Inbox{Store: d.cfg.Store} }

// actorOf is the session's member acting in its workspace.
func actorOf(s *store.Session) domain.Actor {
	return domain.Actor{AccountID: s.AccountID, UserID: s.UserID}
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
	}
	d.teamAction(w, r, s, notice, "That teammate is not a member of this workspace.", func(ctx context.Context, a domain.Actor, conv int64) error {
		_, err := d.inboxOps().Assign(ctx, a, conv, to)
		return err
	})
}

// resolveConversation marks the conversation resolved (a new customer message reopens it).
func (d *Dashboard) resolveConversation(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.teamAction(w, r, s, "resolved", "", func(ctx context.Context, a domain.Actor, conv int64) error {
		_, err := d.inboxOps().Resolve(ctx, a, conv)
		return err
	})
}

// reopenConversation reopens a resolved conversation.
func (d *Dashboard) reopenConversation(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.teamAction(w, r, s, "reopened", "", func(ctx context.Context, a domain.Actor, conv int64) error {
		_, err := d.inboxOps().Reopen(ctx, a, conv)
		return err
	})
}

// addNote adds an internal note to the conversation.
func (d *Dashboard) addNote(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.teamAction(w, r, s, "note-added", "A note takes 1 to 2,000 characters.", func(ctx context.Context, a domain.Actor, conv int64) error {
		_, err := d.inboxOps().AddNote(ctx, a, conv, r.PostFormValue("note"))
		return err
	})
}

// teamAction runs a team action on the path's conversation and shows the thread again with
// its notice. A conversation not in the inbox is a 404; an action the domain refuses as invalid
// (an assignee who is not a member, a blank or long note) shows the thread again with refused.
func (d *Dashboard) teamAction(w http.ResponseWriter, r *http.Request, s *store.Session, notice, refused string,
	act func(context.Context, domain.Actor, int64) error) {
	conv, _, ok := d.conversationOf(w, r, s)
	if !ok {
		return
	}
	err := act(r.Context(), actorOf(s), conv)
	if re := domain.AsSendError(err); re != nil {
		switch re.Kind {
		case domain.KindNotFound:
			d.notFound(w, r, s)
			return
		case domain.KindInvalid:
			d.threadForm(w, r, s, http.StatusUnprocessableEntity, refused)
			return
		}
	}
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	redirect(w, r, Prefix+"/inbox/"+strconv.FormatInt(conv, 10), notice)
}
