package dashboard

import (
	"context"
	"errors"
	"net/http"

	"gateway/store"
)

// List bounds of the members page.
const (
	maxMembersListed     = 500
	maxInvitationsListed = 200
)

// membersData is the members page: the workspace's members and, for owners, its pending
// invitations; Link and LinkEmail are a resent invitation's new link, shown once.
type membersData struct {
	Members     []store.Member
	Invitations []store.Invitation
	Link        string
	LinkEmail   string
	Now         int64 // unix seconds, to mark expired invitations
}

// members lists the workspace's members (every member sees who is in it); owners also get
// the pending invitations and the actions.
func (d *Dashboard) members(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.membersPage(w, r, s, http.StatusOK, membersData{}, "")
}

func (d *Dashboard) membersPage(w http.ResponseWriter, r *http.Request, s *store.Session, status int, data membersData, errMsg string) {
	ms, err := d.cfg.Store.MembersByAccount(r.Context(), s.AccountID, maxMembersListed)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	data.Members, data.Now = ms, d.cfg.Clock().Unix()
	if s.Role == store.RoleOwner {
		if data.Invitations, err = d.cfg.Store.PendingInvitations(r.Context(), s.AccountID, maxInvitationsListed); err != nil {
			d.serverError(w, r, err)
			return
		}
	}
	d.render(w, r, status, "members", page{Title: "Members", Nav: "members", Session: s, Flash: flash(r), Error: errMsg, Data: data})
}

// memberData is a member's page: the role form and the removal.
type memberData struct {
	Member store.Member
	Self   bool // the member is the signed-in user
}

func (d *Dashboard) memberPage(w http.ResponseWriter, r *http.Request, s *store.Session) {
	m, ok := loadByPathID(d, w, r, s, d.cfg.Store.MemberByID)
	if !ok {
		return
	}
	d.renderMember(w, r, s, http.StatusOK, m, "")
}

func (d *Dashboard) renderMember(w http.ResponseWriter, r *http.Request, s *store.Session, status int, m store.Member, errMsg string) {
	d.render(w, r, status, "member", page{Title: "Member " + m.Email, Nav: "members", Session: s, Error: errMsg,
		Data: memberData{Member: m, Self: m.UserID == s.UserID}})
}

// errLastOwner is the refusal to remove or demote the workspace's only owner.
const errLastOwner = "This is the workspace's only owner, so they cannot be removed or made a developer. Make another member an owner first."

// memberChangeFailed answers a refused role change or removal: the last owner's refusal (409, on the
// member's page), a 404 for someone not a member, or the error page.
func (d *Dashboard) memberChangeFailed(w http.ResponseWriter, r *http.Request, s *store.Session, id int64, err error) {
	switch {
	case errors.Is(err, store.ErrLastOwner):
		m, merr := d.cfg.Store.MemberByID(r.Context(), s.AccountID, id)
		if merr != nil {
			d.serverError(w, r, merr)
			return
		}
		d.renderMember(w, r, s, http.StatusConflict, m, errLastOwner)
	case errors.Is(err, store.ErrNotFound):
		d.notFound(w, r, s)
	default:
		d.serverError(w, r, err)
	}
}

func (d *Dashboard) setMemberRole(w http.ResponseWriter, r *http.Request, s *store.Session) {
	id, ok := pathID(r, "id")
	if !ok {
		d.notFound(w, r, s)
		return
	}
	role := r.PostFormValue("role")
	if role != store.RoleOwner && role != store.RoleDeveloper {
		m, ok := loadByPathID(d, w, r, s, d.cfg.Store.MemberByID)
		if ok {
			d.renderMember(w, r, s, http.StatusUnprocessableEntity, m, "Choose owner or developer.")
		}
		return
	}
	was, err := d.cfg.Store.SetMemberRole(r.Context(), s.AccountID, id, role)
	if err != nil {
		d.memberChangeFailed(w, r, s, id, err)
		return
	}
	if was.Role != role {
		d.audit(r, s.AccountID, s.UserID, store.AuditMemberRoleChanged, was.Email, was.Role+" → "+role)
	}
	redirect(w, r, Prefix+"/members", "role-changed")
}

func (d *Dashboard) removeMember(w http.ResponseWriter, r *http.Request, s *store.Session) {
	id, ok := pathID(r, "id")
	if !ok {
		d.notFound(w, r, s)
		return
	}
	was, err := d.cfg.Store.RemoveMember(r.Context(), s.AccountID, id)
	if err != nil {
		d.memberChangeFailed(w, r, s, id, err)
		return
	}
	d.audit(r, s.AccountID, s.UserID, store.AuditMemberRemoved, was.Email, "role "+was.Role)
	if id == s.UserID { // the session ended with the membership
		redirect(w, r, Prefix+"/signin", "")
		return
	}
	redirect(w, r, Prefix+"/members", "member-removed")
}

func (d *Dashboard) revokeInvitation(w http.ResponseWriter, r *http.Request, s *store.Session) {
	inv, ok := loadByPathID(d, w, r, s, d.cfg.Store.RevokeInvitation)
	if !ok {
		return
	}
	d.audit(r, s.AccountID, s.UserID, store.AuditInvitationRevoked, inv.Email, "role "+inv.Role)
	redirect(w, r, Prefix+"/members", "invitation-revoked")
}

// resendInvitation gives a pending invitation a new token and a new expiry: the old link stops
// working and the new one is shown once, to be sent to the invited email.
func (d *Dashboard) resendInvitation(w http.ResponseWriter, r *http.Request, s *store.Session) {
	tok, err := newToken()
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	inv, ok := loadByPathID(d, w, r, s, func(ctx context.Context, accountID, id int64) (store.Invitation, error) {
		return d.cfg.Store.RenewInvitation(ctx, accountID, id, hashToken(tok), InvitationTTL)
	})
	if !ok {
		return
	}
	d.audit(r, s.AccountID, s.UserID, store.AuditInvitationResent, inv.Email, "role "+inv.Role+"; new link, expires "+inv.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC"))
	d.membersPage(w, r, s, http.StatusOK, membersData{Link: d.invitationLink(r, tok), LinkEmail: inv.Email}, "")
}

// invitationLink is the sign-up link of an invitation token.
func (d *Dashboard) invitationLink(r *http.Request, tok string) string {
	return d.baseURL(r) + InvitationPath(tok)
}

// InvitationPath is the dashboard path of an invitation token's sign-up link.
func InvitationPath(tok string) string { return Prefix + "/signup?invite=" + tok }

// NewInvitationToken makes an invitation token (256 random bits) and the hash that is stored
// in its place (for `gateway admin invitation create`).
func NewInvitationToken() (token string, hash []byte, err error) {
	token, err = newToken()
	return token, hashToken(token), err
}
