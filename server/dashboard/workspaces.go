package dashboard

import (
	"errors"
	"net/http"

	"gateway/store"
)

// workspacesData is the workspaces page: every workspace the user is a member of.
type workspacesData struct {
	Current     int64
	Memberships []store.Membership
}

// workspaces lists the user's workspaces, each with a button that opens it.
func (d *Dashboard) workspaces(w http.ResponseWriter, r *http.Request, s *store.Session) {
	ms, err := d.cfg.Store.MembershipsByUser(r.Context(), s.UserID)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "workspaces", page{Title: "Workspaces", Nav: "workspaces", Session: s, Flash: flash(r),
		Data: workspacesData{Current: s.AccountID, Memberships: ms}})
}

// switchWorkspace opens another of the user's workspaces: a new session for that membership
// replaces this one. A workspace the user is not a member of is a 404, and the session is
// left as it was (startSession).
func (d *Dashboard) switchWorkspace(w http.ResponseWriter, r *http.Request, s *store.Session) {
	id, ok := pathID(r, "id")
	if !ok {
		d.notFound(w, r, s)
		return
	}
	switch err := d.startSession(w, r, id, s.UserID); {
	case errors.Is(err, store.ErrNotFound):
		d.notFound(w, r, s)
	case err != nil:
		d.serverError(w, r, err)
	default:
		redirect(w, r, Prefix+"/", "switched")
	}
}
