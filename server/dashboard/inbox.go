package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"gateway/store"
)

// The team inbox (/dashboard/inbox): the conversations customers wrote in, latest activity
// first, one view at a time (All, Mine, Unassigned, Window open, Resolved), searchable, with
// each row's unread count, last message in words, time and window state. A self-hosted script
// (static/inbox.js) follows the live stream (inbox_stream.go) and updates the list, the open
// thread and the navigation's unread badge when a conversation changed, so new messages show
// without a reload; where the stream is unavailable it polls liveInbox instead.

// inboxPage is how many conversations one page of the inbox lists.
const inboxPage = 50

// inboxViewWords are the views' names on the page.
var inboxViewWords = map[string]string{
	store.InboxAll: "All", store.InboxMine: "Mine", store.InboxUnassigned: "Unassigned",
	store.InboxWindowOpen: "Window open", store.InboxResolved: "Resolved",
}

// inboxTab is one view's link.
type inboxTab struct {
	Code, Label string
	Query       pageQuery
	Current     bool
}

// inboxRowView is one conversation of the list.
type inboxRowView struct {
	store.InboxRow
	Label   string // the contact's name, else its number, username or user id
	Last    string // the last message in words ("You: " before ours)
	Open    bool   // the service window is open
	TimeTip string // the time left in the window, in words ("" when closed)
	// At is the last message's time as a <time> element in the viewer's zone ("" for none);
	// Activity orders the rows as the list does (last activity, then id), for inbox.js to put
	// a row the live stream sends in its place.
	At       template.HTML
	Activity string
}

type inboxData struct {
	Tabs   []inboxTab
	View   string
	Search string
	Rows   []inboxRowView
	Next   pageQuery
	// Live is the change feed's position when the page was made (inbox.js follows from it).
	Live string
	// Patch: the page is the view's first page, without a search, so the live stream's rows of
	// that view can be put in place in its list (otherwise inbox.js fetches the list again).
	Patch bool
}

// inbox lists a view of the inbox.
func (d *Dashboard) inbox(w http.ResponseWriter, r *http.Request, s *store.Session) {
	q := r.URL.Query()
	view := q.Get("view")
	if _, ok := inboxViewWords[view]; !ok {
		view = store.InboxAll
	}
	search := strings.TrimSpace(q.Get("search"))
	if len(search) > 100 {
		search = search[:100]
	}
	before, err := store.ParseInboxCursor(q.Get("before"))
	if err != nil {
		d.badPageLink(w, r, s, "before")
		return
	}
	ctx := r.Context()
	now := d.cfg.Clock()
	live, err := d.cfg.Store.InboxChanges(ctx, s.AccountID, store.InboxChangeCursor{})
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	p, err := d.inboxOps().List(ctx, actorOf(s), store.InboxFilter{View: view, Search: search, Before: before,
		Limit: inboxPage, Now: now})
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	data := inboxData{View: view, Search: search, Live: live.Next.String(), Rows: make([]inboxRowView, 0, len(p.Rows)),
		Patch: search == "" && before.ID == 0}
	link := func(v string, cur store.InboxCursor) pageQuery {
		u := url.Values{}
		if v != store.InboxAll {
			u.Set("view", v)
		}
		if search != "" {
			u.Set("search", search)
		}
		if c := cur.String(); c != "" {
			u.Set("before", c)
		}
		return pageQuery(u.Encode())
	}
	for _, v := range store.InboxViews {
		data.Tabs = append(data.Tabs, inboxTab{Code: v, Label: inboxViewWords[v], Query: link(v, store.InboxCursor{}), Current: v == view})
	}
	for _, row := range p.Rows {
		data.Rows = append(data.Rows, inboxRowOf(row, now, viewerZone(r)))
	}
	if p.Next.ID != 0 {
		data.Next = link(view, p.Next)
	}
	d.render(w, r, http.StatusOK, "inbox", page{Title: "Inbox", Nav: "inbox", Session: s, Flash: flash(r), Data: data})
}

// inboxRowOf is a row as the list shows it at now, its time in zone.
func inboxRowOf(row store.InboxRow, now time.Time, zone *time.Location) inboxRowView {
	v := inboxRowView{InboxRow: row, Label: row.Name, Open: row.WindowOpen(now),
		Activity: fmt.Sprintf("%016d.%016d", row.LastActivityAt.UnixMicro(), row.ConversationID)}
	if row.LastMessageAt != nil {
		v.At = page{Zone: zone}.Time(*row.LastMessageAt)
	}
	if v.Label == "" {
		v.Label = contactLabel(store.Contact{Mobile: deref(row.Mobile), Username: deref(row.Username), UserID: deref(row.UserID)})
	}
	switch {
	case row.LastMessageID == 0:
		v.Last = "No messages"
	case row.LastMessageText != "":
		v.Last = row.LastMessageText
	default:
		v.Last = orHumanize(messageTypeWords, row.LastMessageType)
	}
	if row.LastMessageDirection == "out" {
		v.Last = "You: " + v.Last
	}
	if v.Open {
		v.TimeTip = durationWords(row.WindowExpiresAt.Sub(now)) + " left"
	}
	return v
}

// durationWords is a positive duration in hours and minutes ("5 h 20 min", "12 min").
func durationWords(d time.Duration) string {
	m := int(d.Round(time.Minute) / time.Minute)
	if m < 60 {
		return fmt.Sprintf("%d min", max(m, 1))
	}
	if m%60 == 0 {
		return fmt.Sprintf("%d h", m/60)
	}
	return fmt.Sprintf("%d h %d min", m/60, m%60)
}

// unreadBadge is the navigation's count of conversations with unread messages (unreadWords).
func (d *Dashboard) unreadBadge(ctx context.Context, accountID int64) string {
	if d.cfg.Store == nil {
		return ""
	}
	return unreadWords(d.cfg.Store.InboxUnreadTotal(ctx, accountID))
}

// unreadWords is the unread badge's words for n conversations with unread messages: "" for
// none, "1000+" beyond store.InboxUnreadCap. A failed count (err) shows no badge: the page or
// the change itself matters more.
func unreadWords(n int, err error) string {
	switch {
	case err != nil || n == 0:
		return ""
	case n >= store.InboxUnreadCap:
		return strconv.Itoa(store.InboxUnreadCap) + "+"
	}
	return strconv.Itoa(n)
}

// renderRows renders rows as the inbox list shows them at now, times in zone (the live hub's
// rows: each once per pass, whatever the number of streams that show it).
func (d *Dashboard) renderRows(zone *time.Location, rows []store.InboxRow, now time.Time) ([]liveRow, error) {
	t := d.pages["inbox"]
	out := make([]liveRow, 0, len(rows))
	var b strings.Builder
	for _, row := range rows {
		v := inboxRowOf(row, now, zone)
		b.Reset()
		if err := t.ExecuteTemplate(&b, "inboxrow", v); err != nil {
			return nil, err
		}
		out = append(out, liveRow{ID: row.ConversationID, Activity: v.Activity, HTML: b.String()})
	}
	return out, nil
}

// liveInbox answers GET /dashboard/live/inbox?since=CURSOR with the conversations changed since
// the cursor (inbox.js, when it cannot use the stream, refreshes what shows them), the next
// cursor and the unread badge, as JSON: {"next": "...", "changed": [ids], "reload": false,
// "unread": "3"}. A malformed cursor is a 400.
func (d *Dashboard) liveInbox(w http.ResponseWriter, r *http.Request, s *store.Session) {
	since, err := store.ParseInboxChangeCursor(r.URL.Query().Get("since"))
	if err != nil {
		http.Error(w, "malformed cursor", http.StatusBadRequest)
		return
	}
	ch, err := d.cfg.Store.InboxChanges(r.Context(), s.AccountID, since)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(struct {
		Next    string  `json:"next"`
		Changed []int64 `json:"changed"`
		Reload  bool    `json:"reload"`
		Unread  string  `json:"unread"`
	}{ch.Next.String(), ch.ConversationIDs, ch.Reload, d.unreadBadge(r.Context(), s.AccountID)})
}
