package dashboard

import (
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"gateway/store"
)

// InvitationTTL is how long an invitation link stays valid (the operator's too).
const InvitationTTL = 7 * 24 * time.Hour

type auditData struct {
	Entries []store.AuditEntry
	Next    int64
}

func (d *Dashboard) auditLog(w http.ResponseWriter, r *http.Request, s *store.Session) {
	before, _ := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	es, err := d.cfg.Store.AuditLog(r.Context(), s.AccountID, before, 100)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	data := auditData{Entries: es}
	if len(es) == 100 {
		data.Next = es[len(es)-1].ID
	}
	d.render(w, r, http.StatusOK, "audit", page{Title: "Audit log", Nav: "audit", Session: s, Data: data})
}

func (d *Dashboard) auditEntry(w http.ResponseWriter, r *http.Request, s *store.Session) {
	e, ok := loadByPathID(d, w, r, s, d.cfg.Store.AuditEntryByID)
	if !ok {
		return
	}
	d.render(w, r, http.StatusOK, "auditentry", page{Title: "Audit entry", Nav: "audit", Session: s, Data: e})
}

type inviteData struct {
	Email string
	Role  string
	Link  string
}

func (d *Dashboard) inviteForm(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.render(w, r, http.StatusOK, "invite", page{Title: "Invite teammate", Nav: "members", Session: s, Data: inviteData{Role: store.RoleDeveloper}})
}

func (d *Dashboard) invite(w http.ResponseWriter, r *http.Request, s *store.Session) {
	f := inviteData{Email: strings.TrimSpace(r.PostFormValue("email")), Role: r.PostFormValue("role")}
	if a, err := mail.ParseAddress(f.Email); err != nil || a.Address != f.Email {
		d.render(w, r, http.StatusUnprocessableEntity, "invite", page{Title: "Invite teammate", Nav: "members", Session: s,
			Error: "Enter an email address like name@example.com.", Data: f})
		return
	}
	if f.Role != store.RoleOwner && f.Role != store.RoleDeveloper {
		f.Role = store.RoleDeveloper
	}
	tok, err := newToken()
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	if _, err := d.cfg.Store.CreateInvitation(r.Context(), s.AccountID, s.UserID, f.Email, f.Role, hashToken(tok), InvitationTTL); err != nil {
		d.serverError(w, r, err)
		return
	}
	d.audit(r, s.AccountID, s.UserID, store.AuditUserInvited, f.Email, "role "+f.Role)
	f.Link = d.invitationLink(r, tok)
	d.render(w, r, http.StatusOK, "invite", page{Title: "Invite teammate", Nav: "members", Session: s, Data: f})
}
