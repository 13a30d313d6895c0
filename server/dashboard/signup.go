package dashboard

import (
	"errors"
	"net/http"
	"net/mail"
	"strings"

	"gateway/store"
)

// The sign-up page: a new user with a workspace of their own, or a new user accepting an
// invitation. A visitor already signed in is told so and offered to sign out first.

// signupForm is the sign-up page: the empty form (or the invitation's), or, for a visitor
// already signed in, who that is and the way to sign out first.
func (d *Dashboard) signupForm(w http.ResponseWriter, r *http.Request) {
	f, ok := d.invitedForm(w, r, "signup", "Sign up")
	if !ok {
		return
	}
	if f.Invite == "" && !d.cfg.SignupOpen {
		d.render(w, r, http.StatusForbidden, "signup", page{Title: "Sign up", Error: errSignupClosed, Data: f})
		return
	}
	if s, signedIn := d.session(r); signedIn && f.Invite == "" {
		f.SignedIn = &s
		d.render(w, r, http.StatusOK, "signup", page{Title: "Sign up", Session: &s, Data: f})
		return
	}
	d.render(w, r, http.StatusOK, "signup", page{Title: "Sign up", Data: f})
}

// errSignedIn is the refusal of a sign-up posted by a visitor who is signed in: a new user would
// replace the session without a word (the sign-up page offers to sign out first).
const errSignedIn = "You are still signed in, so no account was created. Sign out first, then sign up."

func (d *Dashboard) signup(w http.ResponseWriter, r *http.Request) {
	f := authForm{Email: strings.TrimSpace(r.PostFormValue("email")), Workspace: strings.TrimSpace(r.PostFormValue("workspace")),
		Invite: r.PostFormValue("invite"), SignupOpen: d.cfg.SignupOpen, FieldErrors: map[string]string{}}
	pw := r.PostFormValue("password")
	if sess, signedIn := d.session(r); signedIn && f.Invite == "" {
		f.SignedIn = &sess
		d.render(w, r, http.StatusConflict, "signup", page{Title: "Sign up", Session: &sess, Error: errSignedIn, Data: f})
		return
	}
	// Everything that needs no password hash comes first: the throttle, whether sign-up is
	// open, the invitation and its email. Only a post that passes them all costs an argon2id.
	keys := []string{"signup:" + d.cfg.ClientAddr(r)}
	counts, err := d.cfg.Store.CountAttempt(r.Context(), keys, throttleWindow)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	if counts[keys[0]] > maxSignUpsPerAddr {
		if err := d.cfg.Store.UncountAttempt(r.Context(), keys); err != nil {
			d.log.ErrorContext(r.Context(), "uncount sign-up attempt", "error", err.Error())
		}
		w.Header().Set("Retry-After", throttleRetrySeconds)
		d.renderAgain(w, r, http.StatusTooManyRequests, "signup", "Sign up", "Too many sign-ups from your network. Wait 15 minutes, then try again.", f)
		return
	}
	if f.Invite == "" && !d.cfg.SignupOpen {
		d.renderAgain(w, r, http.StatusForbidden, "signup", "Sign up", errSignupClosed, f)
		return
	}
	if f.Invite != "" {
		inv, ok := d.invitation(r.Context(), &f)
		if !ok {
			f.Invite = ""
			d.renderAgain(w, r, http.StatusNotFound, "signup", "Sign up", errBadInvitation, f)
			return
		}
		if !strings.EqualFold(inv.Email, f.Email) {
			f.FieldErrors["email"] = wrongInvitationEmail(inv.Email)
			d.renderAgain(w, r, http.StatusForbidden, "signup", "Sign up", "This invitation cannot be accepted with this email.", f)
			return
		}
	}
	if a, err := mail.ParseAddress(f.Email); err != nil || a.Address != f.Email || len(f.Email) > 254 {
		f.FieldErrors["email"] = "Enter an email address like name@example.com"
	}
	if err := CheckNewPassword(pw); err != nil {
		f.FieldErrors["password"] = err.Error()
	}
	if f.Invite == "" && (f.Workspace == "" || len(f.Workspace) > 100) {
		f.FieldErrors["workspace"] = "Enter a workspace name (up to 100 characters)"
	}
	if len(f.FieldErrors) > 0 {
		d.renderAgain(w, r, http.StatusUnprocessableEntity, "signup", "Sign up", "Please correct the fields below.", f)
		return
	}
	hash, err := hashPassword(pw)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	var accountID, userID int64
	if f.Invite != "" {
		inv, u, err := d.cfg.Store.AcceptInvitation(r.Context(), hashToken(f.Invite), f.Email, hash)
		switch {
		case errors.Is(err, store.ErrNotFound):
			f.Invite = ""
			d.renderAgain(w, r, http.StatusNotFound, "signup", "Sign up", errBadInvitation, f)
			return
		case errors.Is(err, store.ErrWrongEmail): // the invitation changed since it was read
			d.renderAgain(w, r, http.StatusForbidden, "signup", "Sign up", "This invitation cannot be accepted with this email.", f)
			return
		case errors.Is(err, store.ErrEmailTaken):
			f.FieldErrors["email"] = "This email cannot be used to sign up. If it is yours, sign in to accept the invitation (the link below)."
			d.renderAgain(w, r, http.StatusUnprocessableEntity, "signup", "Sign up", "Please correct the fields below.", f)
			return
		case err != nil:
			d.serverError(w, r, err)
			return
		}
		accountID, userID = inv.AccountID, u.ID
		d.audit(r, accountID, userID, store.AuditInvitationAccepted, u.Email, "role "+inv.Role)
	} else {
		var a store.Account
		var u store.User
		for range 5 {
			a, u, err = d.cfg.Store.SignUp(r.Context(), f.Workspace, f.Email, hash, NewJoinCode())
			if err == nil || !errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrEmailTaken) {
				break
			}
		}
		switch {
		case errors.Is(err, store.ErrEmailTaken):
			f.FieldErrors["email"] = "This email cannot be used to sign up. If it is yours, sign in instead."
			d.renderAgain(w, r, http.StatusUnprocessableEntity, "signup", "Sign up", "Please correct the fields below.", f)
			return
		case err != nil:
			d.serverError(w, r, err)
			return
		}
		accountID, userID = a.ID, u.ID
		d.audit(r, accountID, userID, store.AuditWorkspaceCreated, a.Name, "")
	}
	if err := d.startSession(w, r, accountID, userID); err != nil {
		d.serverError(w, r, err)
		return
	}
	redirect(w, r, Prefix+"/", "")
}
