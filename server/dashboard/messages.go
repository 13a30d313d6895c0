package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"gateway/server/domain"
	"gateway/store"
)

// messagesPage is the number of messages on one page of the list.
const messagesPage = 50

// countUpTo is how far the list's total counts before it says "more than": a bounded read
// whatever the filter and the workspace's size.
const countUpTo = 10000

// searchContacts is how many contacts a search by name or number looks at; the list says so
// when more match.
const searchContacts = 500

var messageStatuses = []string{"pending", "sent", "delivered", "read", "failed", "received"}

// messageDirections are the list's direction filter: all, sent by the business, received.
var messageDirections = []struct{ Value, Text string }{{"", "Sent and received"}, {"out", "Sent"}, {"in", "Received"}}

// messageFilterKeys are the query parameters of the list's filter, in the order links write them.
var messageFilterKeys = []string{"q", "direction", "status", "campaign", "template", "contact", "from", "to"}

type messagesData struct {
	Messages   []store.ListedMessage
	Campaigns  []store.CampaignReport
	Templates  []string // the workspace's template names, suggested by the template filter
	Statuses   []string
	Directions []struct{ Value, Text string }
	// The filter as given (form values).
	Q, Direction, Status, Campaign, Template, Contact, From, To string
	// ContactShown is the contact of a contact=ID link (kept from the list's earlier filter).
	ContactShown *store.Contact
	// SearchNote says when the search matched more contacts than it looks at.
	SearchNote string
	// Total is how many messages match (at least countUpTo when TotalCapped).
	Total       int
	TotalCapped bool
	Filtered    bool      // any filter is set
	Query       pageQuery // the filter's query, for the export link
	Next        pageQuery // query of the next (older) page; "" on the last
}

// messageListFilter reads the list's filter from the query (shared by the list and its export):
// the store's filter, the form's values, and none=true when the filter can match nothing (a
// search that found no contact). A contact search is resolved to the matching contacts first
// (the contacts list's search: a name's part, or a number's digits in any notation).
func (d *Dashboard) messageListFilter(r *http.Request, s *store.Session) (f store.MessageFilter, data messagesData, none bool, err error) {
	q := r.URL.Query()
	data = messagesData{Statuses: messageStatuses, Directions: messageDirections, Q: strings.TrimSpace(q.Get("q")),
		Direction: q.Get("direction"), Status: q.Get("status"), Campaign: q.Get("campaign"),
		Template: strings.TrimSpace(q.Get("template")), Contact: q.Get("contact"), From: q.Get("from"), To: q.Get("to")}
	f = store.MessageFilter{Limit: messagesPage, WithPending: true, TemplateContains: data.Template, Detailed: true, Direction: "all"}
	switch data.Direction {
	case "out", "in":
		f.Direction = data.Direction
	default:
		data.Direction = ""
	}
	if slices.Contains(messageStatuses, data.Status) {
		f.Status = data.Status
	}
	f.CampaignID, _ = strconv.ParseInt(data.Campaign, 10, 64)
	f.ContactID, _ = strconv.ParseInt(data.Contact, 10, 64)
	// The dates are days in the viewer's zone.
	loc := viewerZone(r)
	if t, err := time.ParseInLocation("2006-01-02", data.From, loc); err == nil {
		f.CreatedAfter = t
	}
	if t, err := time.ParseInLocation("2006-01-02", data.To, loc); err == nil {
		f.CreatedBefore = t.AddDate(0, 0, 1) // the whole day
	}
	ctx := r.Context()
	if f.ContactID != 0 {
		c, err := d.cfg.Store.ContactByID(ctx, s.AccountID, f.ContactID)
		if errors.Is(err, store.ErrNotFound) {
			return f, data, true, nil
		} else if err != nil {
			return f, data, false, err
		}
		data.ContactShown = &c
	}
	if data.Q != "" {
		term := data.Q
		// A number typed with its notation (+55 (11) 98765-4321) is searched by its digits.
		if digits, ok := domain.NormalizeMobile(term); ok {
			term = digits
		}
		cp, err := d.cfg.Store.ListContactsWith(ctx, s.AccountID, store.ContactListOptions{Search: term, Limit: searchContacts, WithoutMobile: true})
		if err != nil {
			return f, data, false, err
		}
		if cp.Total > len(cp.Contacts) {
			data.SearchNote = fmt.Sprintf("%d contacts match “%s”: the list shows the messages of the newest %d of them. Type more of the name or number to narrow it.",
				cp.Total, data.Q, len(cp.Contacts))
		}
		if len(cp.Contacts) == 0 {
			return f, data, true, nil
		}
		f.ContactIDs = make([]int64, len(cp.Contacts))
		for i, c := range cp.Contacts {
			f.ContactIDs[i] = c.ID
		}
	}
	return f, data, false, nil
}

// messages lists the workspace's messages, sent and received, newest first with the list's
// filters (a contact's name or number, direction, status, campaign, part of a template's name,
// date range), the total of the filter and its export, by keyset pages (store.ListMessages).
// The statuses on the page follow the platform's reports without a reload (live.js and
// liveMessages). An old link's contact=ID still filters by that contact.
func (d *Dashboard) messages(w http.ResponseWriter, r *http.Request, s *store.Session) {
	f, data, none, err := d.messageListFilter(r, s)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	q := r.URL.Query()
	if v := q.Get("after"); v != "" {
		c, err := store.ParseMessageCursor(v)
		if err != nil {
			d.badPageLink(w, r, s, "after")
			return
		}
		f.After = &c
	}
	ctx := r.Context()
	data.Messages = []store.ListedMessage{}
	if !none {
		p, err := d.records().Messages(ctx, s.AccountID, f)
		if err != nil {
			d.serverError(w, r, err)
			return
		}
		data.Messages = p.Messages
		if data.Total, data.TotalCapped, err = d.cfg.Store.CountMessages(ctx, s.AccountID, f, countUpTo); err != nil {
			d.serverError(w, r, err)
			return
		}
		if p.Next != nil {
			nq := filterQuery(q)
			nq.Set("after", p.Next.String())
			data.Next = pageQuery(nq.Encode())
		}
	}
	if data.Campaigns, err = d.records().Campaigns(ctx, s.AccountID, 0, 200); err != nil {
		d.serverError(w, r, err)
		return
	}
	ts, err := d.cfg.Store.TemplatesByAccount(ctx, s.AccountID, "", "")
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	for _, t := range ts {
		if !slices.Contains(data.Templates, t.Name) {
			data.Templates = append(data.Templates, t.Name)
		}
	}
	fq := filterQuery(q)
	data.Filtered = len(fq) > 0
	data.Query = pageQuery(fq.Encode())
	d.render(w, r, http.StatusOK, "messages", page{Title: "Messages", Nav: "messages", Session: s, Data: data})
}

// filterQuery is the list's filter of the query q (its set values only, no page cursor).
func filterQuery(q url.Values) url.Values {
	out := url.Values{}
	for _, k := range messageFilterKeys {
		if v := strings.TrimSpace(q.Get(k)); v != "" {
			out.Set(k, v)
		}
	}
	return out
}

type messageData struct {
	Message store.Message
	Content []byte // what was sent: language and variables, as stored (JSON)
	Sent    sentWith
	// Said is a message that is not a template in a few words (its text, else its kind), as
	// the inbox shows it; "" for a template message.
	Said     string
	Contact  store.Contact
	Attempts []store.LoggedAttempt
}

// messagePage is one message: a sent one's status history with the platform's timestamps, the
// platform's error when it failed and the variables it was sent with; a received one's words;
// and the webhook attempts of its events, each linking into the request log.
func (d *Dashboard) messagePage(w http.ResponseWriter, r *http.Request, s *store.Session) {
	m, ok := loadByPathID(d, w, r, s, d.cfg.Store.AnyMessageByID)
	if !ok {
		return
	}
	ctx := r.Context()
	data := messageData{Message: m}
	var err error
	if data.Contact, err = d.cfg.Store.ContactByID(ctx, s.AccountID, m.ContactID); err != nil {
		d.serverError(w, r, err)
		return
	}
	if data.Content, err = d.cfg.Store.MessageContent(ctx, s.AccountID, m.ID); err != nil {
		d.serverError(w, r, err)
		return
	}
	var tpl *store.Template
	if m.TemplateID != nil {
		if t, err := d.cfg.Store.TemplateByID(ctx, s.AccountID, *m.TemplateID); err == nil {
			tpl = &t
		} else if !errors.Is(err, store.ErrNotFound) {
			d.serverError(w, r, err)
			return
		}
	}
	data.Sent = describeSent(tpl, data.Content)
	if m.TemplateName == "" {
		data.Said = summaryOf(store.ThreadMessage{Type: m.Type, Content: data.Content})
	}
	if data.Attempts, err = d.cfg.Store.MessageAttempts(ctx, s.AccountID, m.ID, m.CreatedAt, 100); err != nil {
		d.serverError(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "messagedetail", page{Title: "Message " + strconv.FormatInt(m.ID, 10), Nav: "messages", Session: s, Flash: flash(r), Data: data})
}
