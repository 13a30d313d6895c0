package dashboard

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"gateway/server/domain"
	"gateway/store"
)

// A contact's page answers the customer while their service window is open (a text, through
// the API's answer path: domain.Answerer); when it is closed the page says so and points to
// the template send.

// answerData is the answer section of a contact's page.
type answerData struct {
	// Open: the window is open until ExpiresAt. Wrote: the customer ever wrote (ExpiresAt is
	// when the window closed).
	Open, Wrote bool
	ExpiresAt   time.Time
	Key, Body   string // the form's idempotency key (made when the page is shown) and text
	Enabled     bool   // answering is configured on this server
}

// answerSection reads the contact's window for its page.
func (d *Dashboard) answerSection(r *http.Request, s *store.Session, c store.Contact) (answerData, error) {
	w, err := d.cfg.Store.ServiceWindowOfContact(r.Context(), s.AccountID, c.ID)
	if err != nil {
		return answerData{}, err
	}
	return d.answerFor(r, w), nil
}

// answerFor is the answer section of a page that has already read the contact's window w.
func (d *Dashboard) answerFor(r *http.Request, w store.ServiceWindow) answerData {
	a := answerData{Open: w.OpenAt(d.cfg.Clock()), Wrote: w.ExpiresAt != nil, Enabled: d.cfg.Answerer != nil,
		Key: r.PostFormValue("key"), Body: r.PostFormValue("body")}
	if w.ExpiresAt != nil {
		a.ExpiresAt = *w.ExpiresAt
	}
	if a.Key == "" {
		var b [16]byte
		rand.Read(b[:])
		a.Key = hex.EncodeToString(b[:])
	}
	return a
}

// answerContact sends the contact page's answer; the page follows with a notice, or again with
// the refusal's message (the window closed meanwhile, the contact was blocked).
func (d *Dashboard) answerContact(w http.ResponseWriter, r *http.Request, s *store.Session) {
	c, ok := d.contactOf(w, r, s)
	if !ok {
		return
	}
	if d.cfg.Answerer == nil {
		d.contactForm(w, r, s, http.StatusServiceUnavailable, "Answering from the panel is not configured on this server.")
		return
	}
	in := domain.PanelAnswer{Destination: c.Mobile, Body: r.PostFormValue("body"), IdempotencyKey: r.PostFormValue("key")}
	if c.Mobile == "" {
		in.UserID = c.UserID
	}
	if strings.TrimSpace(in.Body) == "" {
		d.contactForm(w, r, s, http.StatusUnprocessableEntity, "Type the answer first.")
		return
	}
	sent, err := d.cfg.Answerer.AnswerFromPanel(r.Context(), s.AccountID, in)
	if refused := domain.AsSendError(err); refused != nil {
		d.contactForm(w, r, s, refusalStatus(refused.Kind), refused.Message)
		return
	} else if err != nil {
		d.serverError(w, r, err)
		return
	}
	notice := "answered"
	if sent.Replayed {
		notice = "sent-before"
	}
	redirect(w, r, Prefix+"/contacts/"+strconv.FormatInt(c.ID, 10), notice)
}
