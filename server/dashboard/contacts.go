package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"gateway/server/domain"
	"gateway/store"
)

// records is the workspace's contacts and reports as the domain keeps them (the API's live
// key reads the same).
func (d *Dashboard) records() domain.LiveRecords { return domain.LiveRecords{Store: d.cfg.Store} }

// contactsPage is the number of contacts on one page of the list.
const contactsPage = 50

type contactsData struct {
	Contacts    []store.Contact
	Search      string
	Tag         string             // the tag the list is narrowed to ("" for none)
	Tags        []store.TagCount   // the workspace's tags, for the filter
	ContactTags map[int64][]string // each listed contact's tags
	Page        int
	Pages       int
	Total       int
	Prev, Next  pageQuery // queries of the neighbouring pages; "" when none
	// Indexing: a name search may miss some contacts of a recent large import, which are
	// still joining the name index (store.NameBacklog).
	Indexing bool
}

// contacts lists and searches the workspace's contacts as GET /v1/contacts does
// (domain.LiveRecords.Contacts: newest first, search by name or number).
func (d *Dashboard) contacts(w http.ResponseWriter, r *http.Request, s *store.Session) {
	q := r.URL.Query()
	search := strings.TrimSpace(q.Get("search"))
	if len(search) > 100 {
		search = search[:100]
	}
	n, _ := strconv.Atoi(q.Get("page"))
	n = min(max(n, 1), 1000000)
	tag := strings.TrimSpace(q.Get("tag"))
	p, err := d.contactListing(r, s, tag, search, n)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	data := contactsData{Contacts: p.Contacts, Search: search, Tag: tag, Page: n, Total: p.Total,
		Pages: (p.Total + contactsPage - 1) / contactsPage}
	if data.Tags, data.ContactTags, err = d.contactTagsOf(r, s, p.Contacts); err != nil {
		d.serverError(w, r, err)
		return
	}
	if search != "" {
		if data.Indexing, err = d.cfg.Store.NameBacklog(r.Context(), s.AccountID); err != nil {
			d.serverError(w, r, err)
			return
		}
	}
	link := func(page int) pageQuery {
		v := url.Values{}
		if search != "" {
			v.Set("search", search)
		}
		if tag != "" {
			v.Set("tag", tag)
		}
		v.Set("page", strconv.Itoa(page))
		return pageQuery(v.Encode())
	}
	if n > 1 {
		data.Prev = link(n - 1)
	}
	if n < data.Pages {
		data.Next = link(n + 1)
	}
	d.render(w, r, http.StatusOK, "contacts", page{Title: "Contacts", Nav: "contacts", Session: s, Flash: flash(r), Data: data})
}

type contactData struct {
	Contact  store.Contact
	Messages []store.ListedMessage
	Next     pageQuery
	// BlockedBy is the audit entry that blocked the contact (a member, or the contact's STOP);
	// nil when it is not blocked or no entry is kept.
	BlockedBy *store.AuditEntry
	// ByOptOut reports that the contact blocked itself with STOP.
	ByOptOut bool
	// Answer is the answer section: the service window and its form (answer.go).
	Answer answerData
}

// contactPage is one contact: details, the edit form, block or unblock, and its conversation's
// messages (sent and received), newest first.
func (d *Dashboard) contactPage(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.contactForm(w, r, s, http.StatusOK, "")
}

func (d *Dashboard) contactForm(w http.ResponseWriter, r *http.Request, s *store.Session, status int, errMsg string) {
	c, ok := d.contactOf(w, r, s)
	if !ok {
		return
	}
	f := store.MessageFilter{ContactID: c.ID, Direction: "all", WithPending: true, Limit: messagesPage}
	if v := r.URL.Query().Get("after"); v != "" {
		cur, err := store.ParseMessageCursor(v)
		if err != nil {
			d.badPageLink(w, r, s, "after")
			return
		}
		f.After = &cur
	}
	p, err := d.records().Messages(r.Context(), s.AccountID, f)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	data := contactData{Contact: c, Messages: p.Messages}
	if data.Answer, err = d.answerSection(r, s, c); err != nil {
		d.serverError(w, r, err)
		return
	}
	if c.Blocked {
		e, err := d.cfg.Store.LastBlock(r.Context(), s.AccountID, c.Mobile)
		if err == nil {
			data.BlockedBy, data.ByOptOut = &e, e.Detail == store.OptOutDetail
		} else if !errors.Is(err, store.ErrNotFound) {
			d.serverError(w, r, err)
			return
		}
	}
	if p.Next != nil {
		data.Next = pageQuery("after=" + url.QueryEscape(p.Next.String()))
	}
	title := c.Name
	if title == "" {
		title = c.Mobile
	}
	d.render(w, r, status, "contact", page{Title: "Contact " + title, Nav: "contacts", Session: s, Flash: flash(r), Error: errMsg, Data: data})
}

// contactOf reads the contact of the path's id; it answers 404 (another workspace's id
// included) or 500 itself and returns false.
func (d *Dashboard) contactOf(w http.ResponseWriter, r *http.Request, s *store.Session) (store.Contact, bool) {
	return loadByPathID(d, w, r, s, d.records().Contact)
}

// editContact changes the contact's name and note through the same upsert as POST
// /v1/contacts, and records it in the audit log.
func (d *Dashboard) editContact(w http.ResponseWriter, r *http.Request, s *store.Session) {
	c, ok := d.contactOf(w, r, s)
	if !ok {
		return
	}
	name, note := strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("note")
	if len([]rune(name)) > 121 || len([]rune(note)) > 500 || strings.ContainsRune(name+note, 0) {
		d.contactForm(w, r, s, http.StatusUnprocessableEntity, "The name takes up to 121 characters and the note up to 500.")
		return
	}
	if _, _, err := d.records().UpsertContact(r.Context(), s.AccountID, store.ContactInput{Mobile: c.Mobile, Name: &name, Note: &note}); err != nil {
		d.serverError(w, r, err)
		return
	}
	d.audit(r, s.AccountID, s.UserID, store.AuditContactUpdated, c.Mobile, "name and note")
	redirect(w, r, Prefix+"/contacts/"+strconv.FormatInt(c.ID, 10), "contact-saved")
}

func (d *Dashboard) blockContact(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.setBlocked(w, r, s, true)
}

func (d *Dashboard) unblockContact(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.setBlocked(w, r, s, false)
}

// setBlocked blocks or unblocks the contact (the operation the API leaves to the dashboard):
// a blocked contact's next send is a 409. Recorded in the audit log.
func (d *Dashboard) setBlocked(w http.ResponseWriter, r *http.Request, s *store.Session, blocked bool) {
	c, ok := d.contactOf(w, r, s)
	if !ok {
		return
	}
	_, action, err := d.records().SetContactBlocked(r.Context(), s.AccountID, c.Mobile, blocked)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	notice := "contact-unblocked"
	if blocked {
		notice = "contact-blocked"
	}
	d.audit(r, s.AccountID, s.UserID, action, c.Mobile, c.Name)
	redirect(w, r, Prefix+"/contacts/"+strconv.FormatInt(c.ID, 10), notice)
}
