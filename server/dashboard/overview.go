package dashboard

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"gateway/store"
)

// sandboxWindow and sandboxRealLimit mirror test mode's rules (server/testmode.go's constants
// of the same names), which the overview states.
const (
	sandboxWindow    = 24 * time.Hour
	sandboxRealLimit = 20
)

type participantView struct {
	Phone     string
	WindowEnd time.Time
	Left      int
}

type overviewData struct {
	Account      store.Account
	Connection   *store.ConnectionDetails
	Participants []participantView
	SandboxPhone string
	BaseURL      string
	Connect      connectConfig
	ConnectError string
	Form         tokenForm
	Health       overviewHealth
}

type connectConfig struct {
	Configured bool
	AppID      string
	ConfigID   string
	SDKURL     string
}

type tokenForm struct {
	WabaID        string
	PhoneNumberID string
}

func (d *Dashboard) baseURL(r *http.Request) string {
	if d.cfg.BaseURL != "" {
		return strings.TrimSuffix(d.cfg.BaseURL, "/")
	}
	scheme := "https"
	if r.TLS == nil && d.cfg.Development {
		scheme = "http"
	}
	return scheme + "://" + r.Host
}

func (d *Dashboard) overviewData(r *http.Request, s *store.Session) (overviewData, error) {
	ctx := r.Context()
	o := overviewData{SandboxPhone: d.cfg.SandboxPhoneNumber, BaseURL: d.baseURL(r), Connect: connectConfig{
		Configured: d.cfg.Connector != nil, AppID: d.cfg.PlatformAppID, ConfigID: d.cfg.PlatformESConfigID, SDKURL: d.cfg.PlatformSDKURL}}
	a, err := d.cfg.Store.AccountByID(ctx, s.AccountID)
	if err != nil {
		return o, err
	}
	o.Account = a
	c, err := d.cfg.Store.ConnectionDetailsByAccount(ctx, s.AccountID)
	switch {
	case err == nil:
		o.Connection = &c
	case !errors.Is(err, store.ErrNotFound):
		return o, err
	}
	if o.Health, err = d.overviewHealth(ctx, s.AccountID, o.Connection); err != nil {
		return o, err
	}
	now := d.cfg.Clock()
	ps, err := d.cfg.Store.SandboxParticipants(ctx, s.AccountID, now.Add(-sandboxWindow))
	if err != nil {
		return o, err
	}
	for _, p := range ps {
		o.Participants = append(o.Participants, participantView{Phone: p.Phone, WindowEnd: p.JoinedAt.Add(sandboxWindow),
			Left: max(0, sandboxRealLimit-p.RealSent)})
	}
	return o, nil
}

func (d *Dashboard) overview(w http.ResponseWriter, r *http.Request, s *store.Session) {
	o, err := d.overviewData(r, s)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "overview", page{Title: "Overview", Nav: "overview", Session: s, Flash: flash(r), Data: o})
}

// connectFailed shows the overview again with the failure (the step and the platform's
// reason, from the Connector's error) and the forms to retry.
func (d *Dashboard) connectFailed(w http.ResponseWriter, r *http.Request, s *store.Session, msg string, f tokenForm) {
	d.connectRefused(w, r, s, http.StatusUnprocessableEntity, msg, f)
}

func (d *Dashboard) connectRefused(w http.ResponseWriter, r *http.Request, s *store.Session, status int, msg string, f tokenForm) {
	o, err := d.overviewData(r, s)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	o.ConnectError, o.Form = msg, f
	d.render(w, r, status, "overview", page{Title: "Overview", Nav: "overview", Session: s,
		Error: "Connecting the number failed. " + msg, Data: o})
}

// errAlreadyConnected refuses a connect while a number is connected: connecting never
// replaces a number silently. The owner disconnects it first (its own page says what that
// stops), then connects the new one; both steps are in the audit log.
const errAlreadyConnected = "This workspace already has a number connected. Disconnect it first (Disconnect number, below), then connect the new one."

// connectedAlready answers 409 and returns true when the workspace has a number; a failure to
// read it is answered 500 (true too).
func (d *Dashboard) connectedAlready(w http.ResponseWriter, r *http.Request, s *store.Session, f tokenForm) bool {
	_, err := d.cfg.Store.ConnectionByAccount(r.Context(), s.AccountID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false
	case err != nil:
		d.serverError(w, r, err)
	default:
		d.connectRefused(w, r, s, http.StatusConflict, errAlreadyConnected, f)
	}
	return true
}

func (d *Dashboard) connected(w http.ResponseWriter, r *http.Request, s *store.Session, c store.Connection, how string) {
	d.audit(r, s.AccountID, s.UserID, store.AuditNumberConnected, c.PhoneNumber, how+"; phone number id "+c.PhoneNumberID+", WABA "+c.WabaID)
	redirect(w, r, Prefix+"/", "connected")
}

func (d *Dashboard) connectEmbedded(w http.ResponseWriter, r *http.Request, s *store.Session) {
	if d.cfg.Connector == nil {
		d.connectFailed(w, r, s, "Connecting a number is not configured on this server.", tokenForm{})
		return
	}
	if d.connectedAlready(w, r, s, tokenForm{}) {
		return
	}
	code, waba, pn := r.PostFormValue("code"), strings.TrimSpace(r.PostFormValue("waba_id")), strings.TrimSpace(r.PostFormValue("phone_number_id"))
	if code == "" || waba == "" || pn == "" {
		d.connectFailed(w, r, s, "Embedded Signup did not finish: the code, WABA ID or phone number ID is missing. Try again.", tokenForm{})
		return
	}
	c, err := d.cfg.Connector.ConnectWithCode(r.Context(), s.AccountID, code, waba, pn)
	if err != nil {
		d.connectFailed(w, r, s, connectError(err), tokenForm{})
		return
	}
	d.connected(w, r, s, c, "Embedded Signup")
}

func (d *Dashboard) connectToken(w http.ResponseWriter, r *http.Request, s *store.Session) {
	f := tokenForm{WabaID: strings.TrimSpace(r.PostFormValue("waba_id")), PhoneNumberID: strings.TrimSpace(r.PostFormValue("phone_number_id"))}
	if d.cfg.Connector == nil {
		d.connectFailed(w, r, s, "Connecting a number is not configured on this server.", f)
		return
	}
	if d.connectedAlready(w, r, s, f) {
		return
	}
	tok := strings.TrimSpace(r.PostFormValue("access_token"))
	if f.WabaID == "" || f.PhoneNumberID == "" || tok == "" {
		d.connectFailed(w, r, s, "Enter the WABA ID, the phone number ID and the access token.", f)
		return
	}
	c, err := d.cfg.Connector.ConnectWithToken(r.Context(), s.AccountID, f.WabaID, f.PhoneNumberID, tok)
	if err != nil {
		d.connectFailed(w, r, s, connectError(err), f)
		return
	}
	d.connected(w, r, s, c, "system-user token")
}

// connectError is the text shown for a failed connection: the Connector's message, which
// names the step and the platform's reason; a conflict says the number belongs elsewhere.
func connectError(err error) string {
	if errors.Is(err, store.ErrConflict) {
		return "This phone number is already connected to another workspace."
	}
	return err.Error()
}

func (d *Dashboard) disconnectForm(w http.ResponseWriter, r *http.Request, s *store.Session) {
	c, err := d.cfg.Store.ConnectionByAccount(r.Context(), s.AccountID)
	if errors.Is(err, store.ErrNotFound) {
		d.notFound(w, r, s)
		return
	} else if err != nil {
		d.serverError(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "disconnect", page{Title: "Disconnect number", Nav: "overview", Session: s, Data: c})
}

func (d *Dashboard) disconnect(w http.ResponseWriter, r *http.Request, s *store.Session) {
	c, err := d.cfg.Store.ConnectionByAccount(r.Context(), s.AccountID)
	if err == nil {
		if dc, ok := d.cfg.Connector.(disconnecter); ok {
			err = dc.Disconnect(r.Context(), s.AccountID)
		} else {
			err = d.cfg.Store.DisconnectNumber(r.Context(), s.AccountID)
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		d.notFound(w, r, s)
		return
	} else if err != nil {
		d.serverError(w, r, err)
		return
	}
	d.audit(r, s.AccountID, s.UserID, store.AuditNumberDisconnect, c.PhoneNumber, "phone number id "+c.PhoneNumberID)
	redirect(w, r, Prefix+"/", "disconnected")
}

// disconnecter is a Connector that also disconnects (server/onboarding does, and makes the
// server forget its routing of the number); otherwise the store disconnects directly.
type disconnecter interface {
	Disconnect(ctx context.Context, accountID int64) error
}
