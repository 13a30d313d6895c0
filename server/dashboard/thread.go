package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"gateway/server/domain"
	"gateway/store"
)

// The inbox's thread page (/dashboard/inbox/{conversation}): every message of a conversation
// in order, each kind as a person reads it, with the composer (thread_answer.go) under it.

// threadPage is how many messages one page of a thread shows (older ones behind a link).
const threadPage = 200

// threadItem is one message of the thread.
type threadItem struct {
	store.ThreadMessage
	Body      bodyView
	Edited    *bodyView // the content after an edit, nil when not edited
	Quote     *quoteView
	Reactions []reactionView
	// Sender says who sent a message of ours: a teammate, the API, a broadcast.
	Sender string
	// Problem is a failed message's reason in words.
	Problem string
	// Reaction is a reaction whose message is not on the page ("" otherwise): its emoji.
	Reaction string
}

// Out reports whether the business sent the message.
func (t threadItem) Out() bool { return t.Direction == "out" }

// quoteView is the message a reply quotes.
type quoteView struct {
	ID      int64
	Who     string
	Summary string
}

// reactionView is a reaction attached to its message.
type reactionView struct {
	Emoji string
	Who   string
}

type threadData struct {
	Contact        store.Contact
	ConversationID int64
	Items          []threadItem
	Older          pageQuery
	Answer         answerData
	// ReplyTo is the message the composer quotes (?reply=ID), nil for none.
	ReplyTo *quoteView
	// Attach says uploads are possible (the media operations are configured).
	Attach bool
	// Emojis are the reactions offered on each message.
	Emojis []string
	// Team is the assignment, resolve and notes section (inbox_team.go).
	Team teamData
	// Live is the change feed's position when the page was made (inbox.js polls from it).
	Live string
}

// reactionEmojis are the reactions a teammate can pick (the platform's quick reactions).
var reactionEmojis = []string{"👍", "❤️", "😂", "😮", "🙏"}

// threadPage shows a conversation and sends the read receipt of its newest received message
// (the API's mark-read operation) when it is the newest message of the thread.
func (d *Dashboard) threadPage(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.threadForm(w, r, s, http.StatusOK, "")
}

func (d *Dashboard) threadForm(w http.ResponseWriter, r *http.Request, s *store.Session, status int, errMsg string) {
	conv, c, ok := d.conversationOf(w, r, s)
	if !ok {
		return
	}
	var before *store.MessageCursor
	if v := r.URL.Query().Get("before"); v != "" {
		cur, err := store.ParseMessageCursor(v)
		if err != nil {
			d.badPageLink(w, r, s, "before")
			return
		}
		before = &cur
	}
	ctx := r.Context()
	// The feed's position is taken before the thread is read: a message that arrives between
	// the two is reported by the first poll (and shown again, harmlessly) rather than missed.
	live, err := d.cfg.Store.InboxChanges(ctx, s.AccountID, store.InboxChangeCursor{})
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	p, err := d.cfg.Store.ThreadMessages(ctx, s.AccountID, c.ID, before, threadPage)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	data := threadData{Contact: c, ConversationID: conv, Attach: d.cfg.Media != nil, Emojis: reactionEmojis, Live: live.Next.String()}
	if data.Items, err = d.threadItems(ctx, s.AccountID, p.Messages); err != nil {
		d.serverError(w, r, err)
		return
	}
	if p.Older != nil {
		data.Older = pageQuery("before=" + url.QueryEscape(p.Older.String()))
	}
	if data.Team, err = d.teamSection(ctx, s, conv); err != nil {
		d.serverError(w, r, err)
		return
	}
	// The inbox's row holds the conversation's window: the answer section reads it from there
	// instead of reading the conversation again.
	if data.Team.Found {
		data.Answer = d.answerFor(r, store.ServiceWindow{ContactID: c.ID, ExpiresAt: data.Team.Row.WindowExpiresAt})
	} else if data.Answer, err = d.answerSection(r, s, c); err != nil {
		d.serverError(w, r, err)
		return
	}
	data.Team.Note = r.PostFormValue("note")
	if id, _ := strconv.ParseInt(r.URL.Query().Get("reply"), 10, 64); id > 0 {
		data.ReplyTo = d.quoted(ctx, s.AccountID, id, data.Items)
	}
	if before == nil && status == http.StatusOK && r.Method == http.MethodGet {
		d.markThreadRead(ctx, s, conv, p.Messages)
	}
	title := c.Name
	if title == "" {
		title = contactLabel(c)
	}
	d.render(w, r, status, "inboxthread", page{Title: title, Nav: "inbox", Session: s, Flash: flash(r), Error: errMsg, Data: data})
}

// contactLabel names a contact without a name: its number, username or user id.
func contactLabel(c store.Contact) string {
	switch {
	case c.Mobile != "":
		return "+" + c.Mobile
	case c.Username != "":
		return c.Username
	}
	return c.UserID
}

// conversationOf reads the contact of the path's conversation (one statement); it answers 404
// (another workspace's id included) or 500 itself and returns false.
func (d *Dashboard) conversationOf(w http.ResponseWriter, r *http.Request, s *store.Session) (int64, store.Contact, bool) {
	conv, ok := pathID(r, "id")
	if !ok {
		d.notFound(w, r, s)
		return 0, store.Contact{}, false
	}
	c, err := d.cfg.Store.ConversationContact(r.Context(), s.AccountID, conv)
	if errors.Is(err, store.ErrNotFound) {
		d.notFound(w, r, s)
		return 0, c, false
	} else if err != nil {
		d.serverError(w, r, err)
		return 0, c, false
	}
	return conv, c, true
}

// markThreadRead records that the team read the conversation up to its newest message (the
// inbox's unread count) and sends the read receipt of that message when the customer sent it
// (the platform then marks every earlier one read too). A failure is logged: the page shows
// regardless.
func (d *Dashboard) markThreadRead(ctx context.Context, s *store.Session, conv int64, ms []store.ThreadMessage) {
	if len(ms) == 0 {
		return
	}
	accountID := s.AccountID
	last := ms[len(ms)-1]
	if _, err := d.inboxOps().MarkRead(ctx, actorOf(s), conv, last.ID); err != nil && domain.AsSendError(err) == nil {
		d.log.WarnContext(ctx, "inbox: read position not recorded", "conversation_id", conv, "error", err.Error())
	}
	if d.cfg.MarkRead == nil {
		return
	}
	if last.Direction != "in" || last.PlatformMessageID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := d.cfg.MarkRead(ctx, accountID, last.ID); err != nil {
		d.log.WarnContext(ctx, "inbox: read receipt not sent", "message_id", last.ID, "error", err.Error())
	}
}

// threadItems builds the thread's items: reactions attached to the message they are about,
// replies with the message they quote, edits and deletions, and who sent what.
func (d *Dashboard) threadItems(ctx context.Context, accountID int64, ms []store.ThreadMessage) ([]threadItem, error) {
	byPlatform, byID := map[string]int{}, map[int64]int{}
	items := make([]threadItem, 0, len(ms))
	type reaction struct {
		at     int // index of the reaction
		target int // index of its message, -1 when not on the page
	}
	latest := map[[2]string]reaction{} // the newest reaction per reacting side and message
	var order [][2]string
	onMessage := map[int]bool{} // the reactions whose message is on the page: not shown on their own
	var missing []int64
	for _, m := range ms {
		it := threadItem{ThreadMessage: m, Body: bodyOf(m, m.Content)}
		if m.EditedAt != nil && string(m.EditedContent) != "null" {
			edit := m
			var content json.RawMessage
			edit.Type, content = editedContent(m.EditedContent, m.Type)
			e := bodyOf(edit, content)
			it.Edited = &e
		}
		if it.Out() {
			it.Sender = senderWords(m)
			if m.Status == "failed" {
				it.Problem, _, _ = errorAdvice(m.ErrorCode)
				if it.Problem == "" && m.ErrorTitle != nil {
					it.Problem = *m.ErrorTitle
				}
			}
		}
		if m.Type == "reaction" {
			emoji, pid, oid := reactionOf(m.Content)
			target := -1
			if i, ok := byPlatform[pid]; ok && pid != "" {
				target = i
			} else if i, ok := byID[oid]; ok && oid != 0 {
				target = i
			}
			if target >= 0 {
				key := [2]string{m.Direction, strconv.Itoa(target)}
				if _, seen := latest[key]; !seen {
					order = append(order, key)
				}
				latest[key] = reaction{at: len(items), target: target}
				onMessage[len(items)] = true
				it.Reaction = emoji
				items = append(items, it)
				continue
			}
			it.Reaction = emoji
		}
		if q := replyTarget(m); q != 0 {
			if _, ok := byID[q]; !ok {
				missing = append(missing, q)
			}
		}
		byID[m.ID] = len(items)
		if m.PlatformMessageID != "" {
			byPlatform[m.PlatformMessageID] = len(items)
		}
		items = append(items, it)
	}
	for _, key := range order {
		rc := latest[key]
		if e := items[rc.at].Reaction; e != "" {
			who := "Customer"
			if key[0] == "out" {
				who = "You"
			}
			items[rc.target].Reactions = append(items[rc.target].Reactions, reactionView{Emoji: e, Who: who})
		}
	}
	quoted := map[int64]store.ThreadMessage{}
	if len(missing) > 0 {
		qs, err := d.cfg.Store.ThreadQuoted(ctx, accountID, missing)
		if err != nil {
			return nil, err
		}
		for _, q := range qs {
			quoted[q.ID] = q
		}
	}
	out := make([]threadItem, 0, len(items))
	for i, it := range items {
		if onMessage[i] { // shown on its message (or taken away)
			continue
		}
		if q := replyTarget(it.ThreadMessage); q != 0 {
			if i, ok := byID[q]; ok {
				it.Quote = quoteOf(items[i].ThreadMessage)
			} else if m, ok := quoted[q]; ok {
				it.Quote = quoteOf(m)
			} else {
				it.Quote = &quoteView{Summary: "An earlier message"}
			}
		} else if it.ReplyToPlatformID != "" {
			if i, ok := byPlatform[it.ReplyToPlatformID]; ok {
				it.Quote = quoteOf(items[i].ThreadMessage)
			} else {
				it.Quote = &quoteView{Summary: "An earlier message"}
			}
		}
		out = append(out, it)
	}
	return out, nil
}

// replyTarget is our id of the message m quotes: the row's, or the answer's reply_to.
func replyTarget(m store.ThreadMessage) int64 {
	if m.ReplyToMessageID != nil {
		return *m.ReplyToMessageID
	}
	if m.Direction != "out" {
		return 0
	}
	var a struct {
		ReplyTo int64 `json:"reply_to"`
	}
	json.Unmarshal(m.Content, &a)
	return a.ReplyTo
}

// quoteOf is a message as a reply quotes it.
func quoteOf(m store.ThreadMessage) *quoteView {
	who := "Customer"
	if m.Direction == "out" {
		who = "You"
	}
	return &quoteView{ID: m.ID, Who: who, Summary: summaryOf(m)}
}

// quoted is the message the composer quotes: from the page, else read by id; nil when the
// account has no such message.
func (d *Dashboard) quoted(ctx context.Context, accountID, id int64, items []threadItem) *quoteView {
	for _, it := range items {
		if it.ID == id {
			return quoteOf(it.ThreadMessage)
		}
	}
	qs, err := d.cfg.Store.ThreadQuoted(ctx, accountID, []int64{id})
	if err != nil || len(qs) == 0 {
		return nil
	}
	return quoteOf(qs[0])
}

// senderWords says who sent a message of ours.
func senderWords(m store.ThreadMessage) string {
	switch {
	case m.BroadcastName != "":
		return "Broadcast “" + m.BroadcastName + "”"
	case m.Source == "panel":
		return "A teammate, from the dashboard"
	case m.CampaignName != "":
		return "The API, campaign “" + m.CampaignName + "”"
	}
	return "The API"
}
