package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"gateway/server/domain"
	"gateway/store"
)

// Tags on the contacts page, and saved audiences (contacts with every one of a set of tags),
// which broadcasts send to.

// Audit actions of tags and audiences.
const (
	auditContactsTagged   = "contacts.tagged"
	auditContactsUntagged = "contacts.untagged"
	auditAudienceSaved    = "audience.saved"
	auditAudienceDeleted  = "audience.deleted"
)

// maxTagsListed bounds the tag filter's choices and the audiences page's tags.
const maxTagsListed = 500

func (d *Dashboard) audienceOps() domain.Audiences { return domain.Audiences{Store: d.cfg.Store} }

// contactListing is the contacts page's list: narrowed to a tag (and a part of the name or
// number within it) or, without a tag, the listing of GET /v1/contacts.
func (d *Dashboard) contactListing(r *http.Request, s *store.Session, tag, search string, n int) (store.ContactPage, error) {
	if tag != "" {
		return d.cfg.Store.TaggedContacts(r.Context(), s.AccountID, tag, search, contactsPage, (n-1)*contactsPage)
	}
	// The console lists everyone, customers known only by a user id included (shown by
	// username or user id instead of a number).
	return d.records().Contacts(r.Context(), s.AccountID, store.ContactListOptions{Search: search,
		Limit: contactsPage, Offset: (n - 1) * contactsPage, WithoutMobile: true})
}

// contactTagsOf reads the workspace's tags (with their counts) and the listed contacts' tags.
func (d *Dashboard) contactTagsOf(r *http.Request, s *store.Session, cs []store.Contact) ([]store.TagCount, map[int64][]string, error) {
	tags, err := d.cfg.Store.ContactTagCounts(r.Context(), s.AccountID, maxTagsListed)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]int64, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	byContact, err := d.cfg.Store.ContactTags(r.Context(), s.AccountID, ids)
	return tags, byContact, err
}

// tagContacts gives a tag to (or takes it from) the selected contacts, or every contact of
// the listing the page shows (scope "all": the tag filter and the search within it), and
// returns to that listing.
func (d *Dashboard) tagContacts(w http.ResponseWriter, r *http.Request, s *store.Session) {
	filterTag, search := strings.TrimSpace(r.PostFormValue("filter_tag")), strings.TrimSpace(r.PostFormValue("search"))
	untag := r.PostFormValue("action") == "untag"
	tag := r.PostFormValue("tag")
	back := url.Values{}
	if filterTag != "" {
		back.Set("tag", filterTag)
	}
	if search != "" {
		back.Set("search", search)
	}
	var n int64
	var err error
	if r.PostFormValue("scope") == "all" {
		if filterTag == "" && search != "" {
			d.badRequest(w, r, s, "Tagging a whole search is not offered: select the contacts, or narrow the list by a tag.")
			return
		}
		n, err = d.audienceOps().TagListing(r.Context(), s.AccountID, filterTag, search, tag, untag)
	} else {
		var ids []int64
		for _, v := range r.PostForm["id"] {
			if id, perr := strconv.ParseInt(v, 10, 64); perr == nil && id > 0 {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			d.badRequest(w, r, s, "Select at least one contact, or choose “every contact in this list”.")
			return
		}
		n, err = d.audienceOps().Tag(r.Context(), s.AccountID, tag, ids, untag)
	}
	if errors.Is(err, domain.ErrInvalidTag) {
		d.badRequest(w, r, s, "A tag has 1 to 100 characters. Go back and enter one.")
		return
	}
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	action, notice := auditContactsTagged, "tagged"
	if untag {
		action, notice = auditContactsUntagged, "untagged"
	}
	d.audit(r, s.AccountID, s.UserID, action, strings.TrimSpace(tag), fmt.Sprintf("%d contacts", n))
	to := Prefix + "/contacts"
	if q := back.Encode(); q != "" {
		to += "?" + q
	}
	redirect(w, r, to, notice)
}

// audiencesData is the audiences page: the saved audiences with their counts, and the tags a
// new one can be made of.
type audiencesData struct {
	Audiences []domain.CountedAudience
	Tags      []store.TagCount
	Name      string
	Chosen    map[string]bool
}

func (d *Dashboard) audiences(w http.ResponseWriter, r *http.Request, s *store.Session) {
	chosen := map[string]bool{}
	if t := r.URL.Query().Get("tag"); t != "" {
		chosen[t] = true
	}
	d.renderAudiences(w, r, s, http.StatusOK, audiencesData{Chosen: chosen}, "")
}

func (d *Dashboard) renderAudiences(w http.ResponseWriter, r *http.Request, s *store.Session, status int, data audiencesData, errMsg string) {
	var err error
	if data.Audiences, err = d.audienceOps().List(r.Context(), s.AccountID); err != nil {
		d.serverError(w, r, err)
		return
	}
	if data.Tags, err = d.cfg.Store.ContactTagCounts(r.Context(), s.AccountID, maxTagsListed); err != nil {
		d.serverError(w, r, err)
		return
	}
	d.render(w, r, status, "audiences", page{Title: "Audiences", Nav: "contacts", Session: s, Flash: flash(r), Error: errMsg, Data: data})
}

// saveAudience saves the contacts with every chosen tag under a name.
func (d *Dashboard) saveAudience(w http.ResponseWriter, r *http.Request, s *store.Session) {
	data := audiencesData{Name: strings.TrimSpace(r.PostFormValue("name")), Chosen: map[string]bool{}}
	tags := r.PostForm["tags"]
	for _, t := range tags {
		data.Chosen[t] = true
	}
	a, err := d.audienceOps().Save(r.Context(), s.AccountID, data.Name, tags)
	switch {
	case errors.Is(err, domain.ErrInvalidAudience), errors.Is(err, domain.ErrInvalidTag):
		d.renderAudiences(w, r, s, http.StatusUnprocessableEntity, data, "Name the audience (up to 200 characters) and choose at least one tag.")
		return
	case errors.Is(err, store.ErrConflict):
		d.renderAudiences(w, r, s, http.StatusConflict, data, "An audience with this name exists already: choose another name.")
		return
	case err != nil:
		d.serverError(w, r, err)
		return
	}
	d.audit(r, s.AccountID, s.UserID, auditAudienceSaved, a.Name, "tags "+strings.Join(a.Filter.Tags, ", "))
	redirect(w, r, Prefix+"/audiences", "audience-saved")
}

// deleteAudience deletes the path's audience (404 for another workspace's, as loadByPathID
// answers it).
func (d *Dashboard) deleteAudience(w http.ResponseWriter, r *http.Request, s *store.Session) {
	id, ok := loadByPathID(d, w, r, s, func(ctx context.Context, accountID, id int64) (int64, error) {
		return id, d.audienceOps().Delete(ctx, accountID, id)
	})
	if !ok {
		return
	}
	d.audit(r, s.AccountID, s.UserID, auditAudienceDeleted, strconv.FormatInt(id, 10), "")
	redirect(w, r, Prefix+"/audiences", "audience-deleted")
}
