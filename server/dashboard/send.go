package dashboard

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"gateway/server/domain"
	"gateway/server/refusal"
	"gateway/store"
)

type sendData struct {
	Templates                        []store.Template
	Template                         *store.Template
	Unsupported                      string // why this template cannot be sent from the form ("" when it can)
	Destination, Name, Campaign, Key string
	Groups                           []fieldGroup // the inputs of the template's header, body and buttons
	Preview                          preview
	FieldErrors                      map[string]string // the refusal's reasons by input (formRefusal)
}

// sendForm is the dashboard's send page: choose an approved template, then fill what it takes
// (header text, media or location, body variables, button values), see the rendered
// preview, send.
func (d *Dashboard) sendForm(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.sendPage(w, r, s, http.StatusOK, "", nil)
}

// sendPage is the send page, with the message errMsg, or with the broken rules of a refused send
// placed on the form (formRefusal).
func (d *Dashboard) sendPage(w http.ResponseWriter, r *http.Request, s *store.Session, status int, errMsg string, refused refusal.Fields) {
	ctx := r.Context()
	ts, err := d.cfg.Store.ApprovedTemplates(ctx, s.AccountID, 200)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	v := r.Form
	if v == nil {
		r.ParseForm()
		v = r.Form
	}
	var fieldErrs map[string]string
	if len(refused) > 0 {
		_, fieldErrs = formRefusal(refused, func(string) bool { return true })
	}
	data := sendData{Templates: ts, Destination: v.Get("destination"), Name: v.Get("name"), Campaign: v.Get("campaign"),
		Key: v.Get("key")}
	if data.Key == "" {
		var b [16]byte
		rand.Read(b[:])
		data.Key = hex.EncodeToString(b[:])
	}
	id, _ := strconv.ParseInt(v.Get("template"), 10, 64)
	for i := range ts {
		if ts[i].ID == id {
			data.Template = &ts[i]
		}
	}
	if t := data.Template; t != nil {
		if len(t.Unsupported) > 0 || t.ParameterFormat == "NAMED" {
			data.Unsupported = "This template has " + strings.Join(append(slices.Clone(t.Unsupported), namedNote(t)...), " and ") +
				", which the panel cannot fill; send it through the API."
		}
		data.Groups, data.Preview = templateForm(*t, v, fieldErrs)
	}
	if len(refused) > 0 {
		// A reason about an input the page does not show (the template changed since the form
		// was filled, or the form was not this page's) is listed in the message instead.
		errMsg, data.FieldErrors = formRefusal(refused, data.shows)
	}
	d.render(w, r, status, "send", page{Title: "Send a message", Nav: "send", Session: s, Error: errMsg, Data: data})
}

func namedNote(t *store.Template) []string {
	if t.ParameterFormat == "NAMED" {
		return []string{"named variables"}
	}
	return nil
}

// send sends the form through the API's send path (Sender); the message's page follows, or the
// form again with each refusal next to its input.
func (d *Dashboard) send(w http.ResponseWriter, r *http.Request, s *store.Session) {
	if d.cfg.Sender == nil {
		d.sendPage(w, r, s, http.StatusServiceUnavailable, "Sending from the panel is not configured on this server.", nil)
		return
	}
	r.ParseForm()
	in := panelSendOf(r.PostForm)
	// The panel checks the number against its country's rules before the send path sees it:
	// a number typed without its country code (987654321) would otherwise go out to another
	// country's number.
	if digits, ok := domain.NormalizeMobile(in.Destination); ok {
		if reason := domain.CheckCountryRules(digits); reason != "" {
			d.sendPage(w, r, s, http.StatusUnprocessableEntity, "Check the recipient's number.", refusal.One("destination", reason))
			return
		}
	}
	sent, err := d.cfg.Sender.SendFromForm(r.Context(), s.AccountID, in)
	if refused := domain.AsSendError(err); refused != nil {
		d.sendPage(w, r, s, refusalStatus(refused.Kind), refused.Message, refused.Fields)
		return
	} else if err != nil {
		d.serverError(w, r, err)
		return
	}
	notice := "sent"
	if sent.Replayed {
		notice = "sent-before"
	}
	redirect(w, r, Prefix+"/messages/"+strconv.FormatInt(sent.MessageID, 10), notice)
}

// refusalStatus is the send page's status for a refused send: the API's for the same refusal.
func refusalStatus(k domain.ErrorKind) int {
	switch k {
	case domain.KindInvalid:
		return http.StatusUnprocessableEntity
	case domain.KindNotFound:
		return http.StatusNotFound
	case domain.KindConflict:
		return http.StatusConflict
	case domain.KindUpstream, domain.KindOutcomeUnknown:
		return http.StatusBadGateway
	}
	return http.StatusInternalServerError
}

// panelSendOf reads the send form: media and location only when one of their inputs was
// filled, a button value for each button_N input filled.
func panelSendOf(f url.Values) domain.FormSend {
	id, _ := strconv.ParseInt(f.Get("template"), 10, 64)
	in := domain.FormSend{TemplateID: id, Destination: strings.TrimSpace(f.Get("destination")),
		Name: strings.TrimSpace(f.Get("name")), CampaignName: strings.TrimSpace(f.Get("campaign")),
		BodyVariables: f["body"], HeaderVariables: f["header"], IdempotencyKey: f.Get("key")}
	m := domain.FormMedia{Type: f.Get("media_type"), Link: strings.TrimSpace(f.Get("media_link")),
		ID: strings.TrimSpace(f.Get("media_id")), Filename: strings.TrimSpace(f.Get("media_filename"))}
	if m.Link != "" || m.ID != "" || m.Filename != "" {
		in.HeaderMedia = &m
	}
	l := domain.FormLocation{Latitude: f.Get("latitude"), Longitude: f.Get("longitude"),
		Name: strings.TrimSpace(f.Get("location_name")), Address: strings.TrimSpace(f.Get("location_address"))}
	if strings.TrimSpace(l.Latitude+l.Longitude) != "" || l.Name != "" || l.Address != "" {
		in.HeaderLocation = &l
	}
	for k := range f {
		if i, err := strconv.Atoi(strings.TrimPrefix(k, "button_")); err == nil && strings.HasPrefix(k, "button_") && i >= 0 && i < 10 {
			if v := f.Get(k); v != "" {
				if in.ButtonValues == nil {
					in.ButtonValues = map[int]string{}
				}
				in.ButtonValues[i] = v
			}
		}
	}
	return in
}
