package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"time"

	"gateway/store"
)

// Throttles, counted in PostgreSQL (every replica sees them) in a fixed window. A sign-in
// attempt is counted before the password is checked (store.CountAttempt), so concurrent
// guesses cannot all pass the check. The lockout is per email and client address: a stranger
// at another address reaches their own pair's and address's limits, never the real user's;
// only guesses from many addresses reach the email's ceiling, which is much higher.
const (
	throttleWindow       = 15 * time.Minute
	maxSignInsPerPair    = 5   // failed sign-ins for one email from one client address
	maxSignInsPerAddr    = 20  // failed sign-ins from one client address, any email
	maxSignInsPerEmail   = 100 // failed sign-ins for one email, from every address together
	maxSignUpsPerAddr    = 10  // sign-up posts from one client address, successful or not
	throttleRetrySeconds = "900"
)

// hashPassword hashes a new password (a variable so that tests can count the hashes).
var hashPassword = HashPassword

// cookieName is the session cookie's name.
func (d *Dashboard) cookieName() string {
	if d.cfg.Development {
		return "session"
	}
	return "__Host-session"
}

func hashToken(tok string) []byte {
	h := sha256.Sum256([]byte(tok))
	return h[:]
}

// newToken returns 256 random bits, base64url.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

type sessionHandler func(w http.ResponseWriter, r *http.Request, s *store.Session)

type sessionKey struct{}

// access is who may use a route.
type access int

const (
	// workspaceAction: any member; in a deactivated workspace only reading (GET) is allowed.
	workspaceAction access = iota
	// ownerAction: owners only (developers get a 403 page naming the task); read-only when
	// deactivated.
	ownerAction
	// selfAction: the user's own settings (password, which workspace is open), allowed in a
	// deactivated workspace too.
	selfAction
)

// requireSession runs h with the request's live session, or redirects to the sign-in page.
// Owner routes (ownerTask names what they do, e.g. "see the audit log") answer developers 403
// with "Only owners can …". A deactivated workspace is read-only, as the API refuses its keys
// (403): every post but the user's own settings is refused with 403.
func (d *Dashboard) requireSession(h sessionHandler, who access, ownerTask string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, ok := d.session(r)
		if !ok {
			http.Redirect(w, r, Prefix+"/signin", http.StatusSeeOther)
			return
		}
		if who == ownerAction && s.Role != store.RoleOwner {
			d.render(w, r, http.StatusForbidden, "forbidden", page{Title: "Only owners can " + ownerTask, Session: &s, Data: ownerTask})
			return
		}
		if who != selfAction && !s.AccountActive && r.Method != http.MethodGet && r.Method != http.MethodHead {
			d.render(w, r, http.StatusForbidden, "refused", page{Title: "Workspace deactivated", Session: &s, Error: errInactive})
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, &s)), &s)
	})
}

// errInactive is the refusal of a change in a deactivated workspace.
const errInactive = "This workspace is deactivated, so it is read-only: nothing can be sent or changed here " +
	"(the API refuses its keys too). Contact the operator of this server to reactivate it."

// session reads the request's session cookie and its live session.
func (d *Dashboard) session(r *http.Request) (store.Session, bool) {
	c, err := r.Cookie(d.cookieName())
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return store.Session{}, false
	}
	s, err := d.cfg.Store.SessionByHash(r.Context(), hashToken(c.Value), SessionIdle, SessionAbsolute)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			d.log.ErrorContext(r.Context(), "read session", "error", err.Error())
		}
		return store.Session{}, false
	}
	return s, true
}

// startSession makes a new session id for the membership, replacing any session the browser
// had, and sets the cookie. It fails with store.ErrNotFound when the user is not a member of
// the account; the browser's session is then left as it was.
func (d *Dashboard) startSession(w http.ResponseWriter, r *http.Request, accountID, userID int64) error {
	tok, err := newToken()
	if err != nil {
		return err
	}
	if err := d.cfg.Store.CreateSession(r.Context(), hashToken(tok), accountID, userID, SessionIdle, SessionAbsolute); err != nil {
		return err
	}
	if c, err := r.Cookie(d.cookieName()); err == nil && c.Value != "" {
		d.cfg.Store.DeleteSession(r.Context(), hashToken(c.Value))
	}
	http.SetCookie(w, &http.Cookie{
		Name: d.cookieName(), Value: tok, Path: "/", HttpOnly: true, Secure: !d.cfg.Development,
		SameSite: http.SameSiteLaxMode, Expires: d.cfg.Clock().Add(SessionAbsolute),
	})
	return nil
}

func (d *Dashboard) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: d.cookieName(), Value: "", Path: "/", HttpOnly: true, Secure: !d.cfg.Development,
		SameSite: http.SameSiteLaxMode, MaxAge: -1})
}

type authForm struct {
	Email       string
	Workspace   string
	Invite      string
	InviteName  string
	InviteEmail string // the email the invitation is for: only it can accept
	SignupOpen  bool
	FieldErrors map[string]string
	// SignedIn is the session of a visitor already signed in (the sign-up page then says who
	// is signed in and offers to sign out first instead of its form); nil otherwise.
	SignedIn *store.Session
}

// wrongInvitationEmail is the refusal of an invitation accepted with another email. The
// invited email is shown: the invitation page shows it to whoever holds the link already.
func wrongInvitationEmail(invited string) string {
	return "This invitation was made for " + invited + ". Only an account with that email can accept it; " +
		"if that is not you, ask the workspace's owner to invite your email."
}

// signinForm is the sign-in page; with ?invite= it also accepts the invitation, for someone
// who already has an account (the sign-up form takes only new emails).
func (d *Dashboard) signinForm(w http.ResponseWriter, r *http.Request) {
	f, ok := d.invitedForm(w, r, "signin", "Sign in")
	if !ok {
		return
	}
	if f.Invite == "" {
		if _, ok := d.session(r); ok {
			http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
			return
		}
	}
	d.render(w, r, http.StatusOK, "signin", page{Title: "Sign in", Data: f})
}

// invitedForm is the empty form of the sign-up or sign-in page (tmpl, titled title) and, for
// an invitation link (?invite=), the invitation's email and workspace filled in. An invitation
// that cannot be used gets the page's plain form with errBadInvitation (404), and ok false;
// one opened by a signed-in user of another email gets the refusal (403), and ok false.
func (d *Dashboard) invitedForm(w http.ResponseWriter, r *http.Request, tmpl, title string) (f authForm, ok bool) {
	f = authForm{Invite: r.URL.Query().Get("invite"), SignupOpen: d.cfg.SignupOpen}
	if f.Invite == "" {
		return f, true
	}
	inv, ok := d.invitation(r.Context(), &f)
	if !ok {
		d.render(w, r, http.StatusNotFound, tmpl, page{Title: title, Error: errBadInvitation, Data: authForm{SignupOpen: d.cfg.SignupOpen}})
		return f, false
	}
	f.Email = inv.Email
	if s, signedIn := d.session(r); signedIn && !strings.EqualFold(s.Email, inv.Email) {
		d.render(w, r, http.StatusForbidden, tmpl, page{Title: title, Data: f,
			Error: wrongInvitationEmail(inv.Email) + " You are signed in as " + s.Email + "; sign out first if you have an account with the invited email."})
		return f, false
	}
	return f, true
}

// renderAgain shows the sign-up or sign-in page (tmpl, titled title) again with msg; a form
// that carries an invitation still names the inviting workspace. The invitation is read only
// here, where the page needs it: the success paths read it once, in the statement that uses it.
func (d *Dashboard) renderAgain(w http.ResponseWriter, r *http.Request, status int, tmpl, title, msg string, f authForm) {
	d.invitation(r.Context(), &f)
	d.render(w, r, status, tmpl, page{Title: title, Error: msg, Data: f})
}

// invitation reads the form's invitation and fills in the inviting workspace's name; ok is
// false when the form has none or it is unknown, used or expired.
func (d *Dashboard) invitation(ctx context.Context, f *authForm) (inv store.Invitation, ok bool) {
	if f.Invite == "" {
		return inv, false
	}
	inv, err := d.cfg.Store.InvitationByToken(ctx, hashToken(f.Invite))
	if err != nil {
		return inv, false
	}
	f.InviteName, f.InviteEmail = inv.AccountName, inv.Email
	return inv, true
}

// errBadSignIn is the one message of every failed sign-in, whether or not the email exists.
const errBadSignIn = "The email or password is incorrect."

// errSignupClosed is the message of a sign-up without an invitation on a closed server.
const errSignupClosed = "Sign-up is closed on this server. Ask a workspace owner for an invitation."

// errBadInvitation is the message of an invitation link that cannot be used.
const errBadInvitation = "This invitation link is not valid: it was used, has expired, or was mistyped."

func (d *Dashboard) signin(w http.ResponseWriter, r *http.Request) {
	email := strings.TrimSpace(r.PostFormValue("email"))
	pw := r.PostFormValue("password")
	f := authForm{Email: email, Invite: r.PostFormValue("invite"), SignupOpen: d.cfg.SignupOpen}
	addr, lower := d.cfg.ClientAddr(r), strings.ToLower(email)
	pair, byEmail, byAddr := "pair:"+lower+" "+addr, "email:"+lower, "addr:"+addr
	keys := []string{pair, byEmail, byAddr}
	counts, err := d.cfg.Store.CountAttempt(r.Context(), keys, throttleWindow)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	if counts[pair] > maxSignInsPerPair || counts[byAddr] > maxSignInsPerAddr || counts[byEmail] > maxSignInsPerEmail {
		// Refused unchecked, so it does not count: hammering a locked pair does not raise the
		// email's ceiling for the real user.
		if err := d.cfg.Store.UncountAttempt(r.Context(), keys); err != nil {
			d.log.ErrorContext(r.Context(), "uncount sign-in attempt", "error", err.Error())
		}
		w.Header().Set("Retry-After", throttleRetrySeconds)
		d.renderAgain(w, r, http.StatusTooManyRequests, "signin", "Sign in", "Too many failed sign-in attempts. Wait 15 minutes, then try again.", f)
		return
	}
	u, err := d.cfg.Store.UserByEmail(r.Context(), email)
	hash := u.PasswordHash
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			d.serverError(w, r, err)
			return
		}
		hash = dummyHash
	}
	ok := len(pw) <= MaxPasswordLen && CheckPassword(hash, pw) && err == nil
	accountID := int64(0) // the workspace to open: the invitation's, else the first
	if ok && f.Invite == "" {
		ms, err := d.cfg.Store.MembershipsByUser(r.Context(), u.ID)
		if err != nil {
			d.serverError(w, r, err)
			return
		}
		if ok = len(ms) > 0; ok { // a user of no workspace cannot sign in: a failure
			accountID = ms[0].AccountID
		}
	}
	if !ok {
		d.renderAgain(w, r, http.StatusUnauthorized, "signin", "Sign in", errBadSignIn, f)
		return
	}
	// The right password: this attempt was no failure.
	if err := d.cfg.Store.ClearAttempts(r.Context(), keys[:1]); err != nil {
		d.log.ErrorContext(r.Context(), "clear sign-in attempts", "error", err.Error())
	}
	if err := d.cfg.Store.UncountAttempt(r.Context(), keys[1:]); err != nil {
		d.log.ErrorContext(r.Context(), "uncount sign-in attempt", "error", err.Error())
	}
	notice := "" // what the invitation did, said on the page it opens
	if f.Invite != "" {
		inv, found := d.invitation(r.Context(), &f)
		if found && !strings.EqualFold(inv.Email, u.Email) {
			d.render(w, r, http.StatusForbidden, "signin", page{Title: "Sign in", Error: wrongInvitationEmail(inv.Email), Data: f})
			return
		}
		inv, joined, err := d.cfg.Store.JoinInvitation(r.Context(), hashToken(f.Invite), u.ID)
		if errors.Is(err, store.ErrNotFound) {
			f.Invite = ""
			d.renderAgain(w, r, http.StatusNotFound, "signin", "Sign in", errBadInvitation, f)
			return
		}
		if err != nil {
			d.serverError(w, r, err)
			return
		}
		accountID, notice = inv.AccountID, "already-member"
		if joined { // a member already keeps their role: nothing joined
			d.audit(r, inv.AccountID, u.ID, store.AuditInvitationAccepted, u.Email, "role "+inv.Role)
			notice = "joined"
		}
	}
	if err := d.startSession(w, r, accountID, u.ID); err != nil {
		d.serverError(w, r, err)
		return
	}
	redirect(w, r, Prefix+"/", notice)
}

func (d *Dashboard) signout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(d.cookieName()); err == nil && c.Value != "" {
		if err := d.cfg.Store.DeleteSession(r.Context(), hashToken(c.Value)); err != nil {
			d.serverError(w, r, err)
			return
		}
	}
	d.clearCookie(w)
	// The sign-up page's "Sign out first" returns to the sign-up form; any other value of
	// next is ignored (never a redirect to a URL from the form).
	if r.PostFormValue("next") == "signup" {
		http.Redirect(w, r, Prefix+"/signup", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, Prefix+"/signin", http.StatusSeeOther)
}

func (d *Dashboard) passwordForm(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.renderPassword(w, r, s, http.StatusOK, "")
}

// renderPassword shows the change-password page with errMsg ("" for none), its header link
// marked as the current page.
func (d *Dashboard) renderPassword(w http.ResponseWriter, r *http.Request, s *store.Session, status int, errMsg string) {
	d.render(w, r, status, "password", page{Title: "Change password", Nav: "password", Session: s, Flash: flash(r), Error: errMsg})
}

func (d *Dashboard) changePassword(w http.ResponseWriter, r *http.Request, s *store.Session) {
	cur, next := r.PostFormValue("current_password"), r.PostFormValue("new_password")
	u, err := d.cfg.Store.UserByID(r.Context(), s.UserID)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	if len(cur) > MaxPasswordLen || !CheckPassword(u.PasswordHash, cur) {
		d.renderPassword(w, r, s, http.StatusUnprocessableEntity, "The current password is incorrect.")
		return
	}
	if err := CheckNewPassword(next); err != nil {
		d.renderPassword(w, r, s, http.StatusUnprocessableEntity, err.Error())
		return
	}
	hash, err := HashPassword(next)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	c, _ := r.Cookie(d.cookieName())
	if err := d.cfg.Store.SetUserPassword(r.Context(), s.UserID, hash, hashToken(c.Value)); err != nil {
		d.serverError(w, r, err)
		return
	}
	d.audit(r, s.AccountID, s.UserID, store.AuditPasswordChanged, u.Email, "")
	redirect(w, r, Prefix+"/password", "password")
}

// audit records an action; a failure to record is logged, not shown.
func (d *Dashboard) audit(r *http.Request, accountID, userID int64, action, target, detail string) {
	if err := d.cfg.Store.AddAudit(r.Context(), accountID, userID, action, target, detail); err != nil {
		d.log.ErrorContext(r.Context(), "audit", "action", action, "error", err.Error())
	}
}

// NewJoinCode is a sandbox join code: two groups of four, e.g. "k7m2-q9x4".
func NewJoinCode() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	b := make([]byte, 9)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	b[4] = '-'
	return string(b)
}
