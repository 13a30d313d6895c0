package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"gateway/store"
)

// messagesPage is the number of messages on one page of the list.
const messagesPage = 50

var messageStatuses = []string{"pending", "sent", "delivered", "read", "failed"}

type messagesData struct {
	Messages  []store.ListedMessage
	Campaigns []store.CampaignReport
	Statuses  []string
	// The filter as given (form values).
	Status, Campaign, Template, Contact, From, To string
	Next                                          pageQuery // query of the next (older) page; "" on the last
}

// messages lists the workspace's sent messages newest first with the list's filters (status,
// campaign, template, contact, date range), by keyset pages (domain.LiveRecords.Messages).
func (d *Dashboard) messages(w http.ResponseWriter, r *http.Request, s *store.Session) {
	q := r.URL.Query()
	data := messagesData{Statuses: messageStatuses, Status: q.Get("status"), Campaign: q.Get("campaign"),
		Template: q.Get("template"), Contact: q.Get("contact"), From: q.Get("from"), To: q.Get("to")}
	f := store.MessageFilter{Limit: messagesPage, WithPending: true, Template: data.Template}
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
	if v := q.Get("after"); v != "" {
		c, err := store.ParseMessageCursor(v)
		if err != nil {
			d.badPageLink(w, r, s, "after")
			return
		}
		f.After = &c
	}
	ctx := r.Context()
	p, err := d.records().Messages(ctx, s.AccountID, f)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	data.Messages = p.Messages
	if data.Campaigns, err = d.records().Campaigns(ctx, s.AccountID, 0, 200); err != nil {
		d.serverError(w, r, err)
		return
	}
	if p.Next != nil {
		nq := url.Values{}
		for _, k := range []string{"status", "campaign", "template", "contact", "from", "to"} {
			if v := q.Get(k); v != "" {
				nq.Set(k, v)
			}
		}
		nq.Set("after", p.Next.String())
		data.Next = pageQuery(nq.Encode())
	}
	d.render(w, r, http.StatusOK, "messages", page{Title: "Messages", Nav: "messages", Session: s, Data: data})
}

type messageData struct {
	Message store.Message
	Content []byte // what was sent: language and variables, as stored (JSON)
	Sent    sentWith
	// CampaignName is the message's campaign's name ("" without one).
	CampaignName string
	Contact      store.Contact
	Attempts     []store.LoggedAttempt
}

// messagePage is one message: its status history with the platform's timestamps, the
// platform's error when it failed, the variables it was sent with, and the webhook attempts of
// its events, each linking into the request log.
func (d *Dashboard) messagePage(w http.ResponseWriter, r *http.Request, s *store.Session) {
	m, ok := loadByPathID(d, w, r, s, d.cfg.Store.MessageByID)
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
	if m.CampaignID != nil {
		c, err := d.cfg.Store.CampaignByID(ctx, s.AccountID, *m.CampaignID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			d.serverError(w, r, err)
			return
		}
		data.CampaignName = c.Name
	}
	if data.Attempts, err = d.cfg.Store.MessageAttempts(ctx, s.AccountID, m.ID, m.CreatedAt, 100); err != nil {
		d.serverError(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "messagedetail", page{Title: "Message " + strconv.FormatInt(m.ID, 10), Nav: "messages", Session: s, Flash: flash(r), Data: data})
}
