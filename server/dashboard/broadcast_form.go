package dashboard

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"gateway/server/domain"
	"gateway/server/refusal"
	"gateway/store"
)

// Starting a broadcast from the dashboard: the form (a template, an audience or listed numbers,
// each body variable from a contact field or a fixed value, an optional schedule in a time
// zone), the pre-flight shown before anything is made, and the confirm step that makes the
// broadcast once per form (domain.BroadcastPanel: the API's checks and pre-flight).

// contactFields are the recipient variables an audience's contacts have (domain.Broadcasts).
var contactFields = []struct{ Value, Text string }{
	{"first_name", "Contact's first name"}, {"last_name", "Contact's last name"}, {"name", "Contact's full name"},
}

// broadcastParam is one body variable's input on the form.
type broadcastParam struct {
	Index          int // 1-based, as the template writes it ({{1}})
	Source, Value  string
	Error          string
	SourceInvalid  bool
	contactAllowed bool
}

type broadcastFormData struct {
	Templates []store.Template
	Template  *store.Template
	Audiences []store.Audience
	// The form's values.
	Name, Numbers, SendAt, TimeZone, Key string
	AudienceID                           int64
	Params                               []broadcastParam
	Fields                               []struct{ Value, Text string }
	FieldErrors                          map[string]string
	Preflight                            *domain.Preflight
	Duration, BudgetPercent              string // the pre-flight's estimate and budget share in words
	StartText                            string // the schedule in words ("" for at once)
	// Hidden is the form's values as hidden inputs for the confirm step.
	Hidden url.Values
}

// broadcastForm is the start form; ?template=ID chooses the template (the templates page's link)
// and ?audience=ID the audience (the contacts page's).
func (d *Dashboard) broadcastForm(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.broadcastFormPage(w, r, s, http.StatusOK, "", nil)
}

// broadcastFormPage renders the form from the request's values with a message and the reasons
// of a refusal next to their inputs.
func (d *Dashboard) broadcastFormPage(w http.ResponseWriter, r *http.Request, s *store.Session, status int, msg string, refused refusal.Fields) {
	data, ok := d.broadcastFormData(w, r, s)
	if !ok {
		return
	}
	d.showBroadcastForm(w, r, s, data, status, msg, refused)
}

// showBroadcastForm renders the form already read (broadcastFormData) with a message and the
// reasons of a refusal next to their inputs.
func (d *Dashboard) showBroadcastForm(w http.ResponseWriter, r *http.Request, s *store.Session, data broadcastFormData, status int, msg string, refused refusal.Fields) {
	if len(refused) > 0 {
		msg = "The broadcast was refused: correct the fields marked below."
		var general []string
		for _, f := range refused.Sorted() {
			in := broadcastInput(f.Path)
			if in == "" {
				general = append(general, f.Path+": "+f.Reason)
				continue
			}
			if prev := data.FieldErrors[in]; prev != "" {
				f.Reason = prev + "; " + f.Reason
			}
			data.FieldErrors[in] = f.Reason
		}
		if len(general) > 0 {
			msg = "The broadcast was refused: " + strings.Join(general, "; ") + "."
		}
		for i := range data.Params {
			data.Params[i].Error = data.FieldErrors[fmt.Sprintf("p%d", data.Params[i].Index)]
		}
	}
	d.render(w, r, status, "broadcast_new", page{Title: "Start a broadcast", Nav: "broadcasts", Session: s, Error: msg, Data: data})
}

// broadcastInput is the form input a refusal's API field path is about ("" for none).
func broadcastInput(path string) string {
	switch head, rest, _ := strings.Cut(path, "."); head {
	case "name", "send_at", "time_zone":
		return head
	case "template_name":
		return "template"
	case "audience_id":
		return "audience"
	case "recipients":
		return "numbers"
	case "parameters":
		if rest == "" {
			return "template"
		}
		i, _, _ := strings.Cut(rest, ".")
		if n, err := strconv.Atoi(i); err == nil {
			return fmt.Sprintf("p%d", n+1)
		}
	}
	return ""
}

// broadcastFormData reads the form's values (query or posted) with the workspace's approved
// templates and audiences; it answers 500 itself and returns false when the store fails.
func (d *Dashboard) broadcastFormData(w http.ResponseWriter, r *http.Request, s *store.Session) (broadcastFormData, bool) {
	ctx := r.Context()
	ts, err := d.cfg.Store.ApprovedTemplates(ctx, s.AccountID, 200)
	if err != nil {
		d.serverError(w, r, err)
		return broadcastFormData{}, false
	}
	as, err := d.cfg.Store.Audiences(ctx, s.AccountID)
	if err != nil {
		d.serverError(w, r, err)
		return broadcastFormData{}, false
	}
	r.ParseForm()
	v := r.Form
	data := broadcastFormData{Templates: ts, Audiences: as, Fields: contactFields, FieldErrors: map[string]string{},
		Name: v.Get("name"), Numbers: v.Get("numbers"), SendAt: v.Get("send_at"), TimeZone: v.Get("time_zone"), Key: v.Get("key")}
	if data.TimeZone == "" {
		data.TimeZone = zoneName(viewerZone(r))
	}
	if data.Key == "" {
		var b [16]byte
		rand.Read(b[:])
		data.Key = hex.EncodeToString(b[:])
	}
	data.AudienceID, _ = strconv.ParseInt(v.Get("audience"), 10, 64)
	id, _ := strconv.ParseInt(v.Get("template"), 10, 64)
	for i := range ts {
		if ts[i].ID == id {
			data.Template = &ts[i]
		}
	}
	if t := data.Template; t != nil {
		for i := 1; i <= t.BodyParams; i++ {
			p := broadcastParam{Index: i, Source: v.Get(fmt.Sprintf("p%d_source", i)), Value: v.Get(fmt.Sprintf("p%d_value", i))}
			if p.Source == "" {
				p.Source = "value"
			}
			data.Params = append(data.Params, p)
		}
	}
	return data, true
}

// request is the form as the domain's broadcast: the template by name and language, each
// parameter a fixed value or a contact field, the audience or the listed numbers (one per line,
// in international form), the schedule. A number that cannot be read is refused on its line.
func (data broadcastFormData) request() (domain.PanelBroadcast, refusal.Fields) {
	var fe refusal.Fields
	in := domain.PanelBroadcast{Key: data.Key, BroadcastRequest: domain.BroadcastRequest{Name: strings.TrimSpace(data.Name),
		AudienceID: data.AudienceID, SendAt: strings.TrimSpace(data.SendAt), TimeZone: strings.TrimSpace(data.TimeZone)}}
	if in.Name == "" || len(in.Name) > 200 {
		fe.Add("name", "give the broadcast a name of 1 to 200 characters; it becomes its campaign in reports")
	}
	if data.Template == nil {
		fe.Add("template_name", "choose one of the approved templates")
		return in, fe
	}
	in.TemplateName, in.Language = data.Template.Name, data.Template.Language
	for _, p := range data.Params {
		if p.Source == "value" {
			in.Params = append(in.Params, store.BroadcastParam{Value: p.Value})
		} else {
			in.Params = append(in.Params, store.BroadcastParam{Variable: p.Source})
		}
	}
	if data.AudienceID == 0 {
		for i, line := range strings.Split(data.Numbers, "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			mobile, ok := domain.NormalizeMobile(line)
			if !ok {
				fe.Add("recipients", fmt.Sprintf("line %d (%q) is not a phone number in international form", i+1, line))
				continue
			}
			in.Recipients = append(in.Recipients, store.RecipientInput{Mobile: mobile})
		}
		if len(in.Recipients) == 0 && len(fe) == 0 {
			fe.Add("recipients", "choose an audience, or list the numbers to send to, one per line")
		}
	}
	return in, fe
}

// broadcastPreflight checks the form and shows what the broadcast would do, with the confirm
// button; nothing is made yet.
func (d *Dashboard) broadcastPreflight(w http.ResponseWriter, r *http.Request, s *store.Session) {
	data, in, ok := d.postedBroadcast(w, r, s)
	if !ok {
		return
	}
	pf, err := d.cfg.Broadcasts.Preflight(r.Context(), s.AccountID, in)
	if d.broadcastRefused(w, r, s, data, err) {
		return
	}
	data.Preflight = &pf
	data.Duration = secondsWords(pf.EstimatedSeconds)
	if in.SendAt != "" {
		// The domain read the time already (Check); here it is only put in words.
		at, err := time.Parse("2006-01-02T15:04", in.SendAt[:min(len(in.SendAt), 16)])
		if err == nil {
			data.StartText = at.Format("2 Jan 2006 15:04") + " (" + in.TimeZone + ")"
		}
	}
	data.BudgetPercent = fmt.Sprintf("%.1f%%", pf.BudgetShare*100)
	data.Hidden = url.Values{}
	for _, k := range []string{"name", "template", "audience", "numbers", "send_at", "time_zone"} {
		data.Hidden.Set(k, r.PostForm.Get(k))
	}
	data.Hidden.Set("key", data.Key)
	for _, p := range data.Params {
		data.Hidden.Set(fmt.Sprintf("p%d_source", p.Index), p.Source)
		data.Hidden.Set(fmt.Sprintf("p%d_value", p.Index), p.Value)
	}
	d.render(w, r, http.StatusOK, "broadcast_preflight", page{Title: "Check the broadcast", Nav: "broadcasts", Session: s, Data: data})
}

// startBroadcast makes the broadcast of the confirmed form (once per form) and opens its page.
func (d *Dashboard) startBroadcast(w http.ResponseWriter, r *http.Request, s *store.Session) {
	data, in, ok := d.postedBroadcast(w, r, s)
	if !ok {
		return
	}
	started, err := d.cfg.Broadcasts.Start(r.Context(), s.AccountID, s.UserID, in)
	if d.broadcastRefused(w, r, s, data, err) {
		return
	}
	notice := "broadcast-started"
	if started.Replayed {
		notice = "broadcast-started-before"
	}
	redirect(w, r, Prefix+"/broadcasts/"+strconv.FormatInt(started.Broadcast.ID, 10), notice)
}

// postedBroadcast reads the posted form as the domain's broadcast. When broadcasts are not
// configured, or the form breaks a rule the page checks itself, it shows the form again
// (broadcastFormPage) and returns false, as it does after answering a store failure.
func (d *Dashboard) postedBroadcast(w http.ResponseWriter, r *http.Request, s *store.Session) (broadcastFormData, domain.PanelBroadcast, bool) {
	if d.cfg.Broadcasts == nil {
		d.broadcastFormPage(w, r, s, http.StatusServiceUnavailable, "Broadcasts are not configured on this server.", nil)
		return broadcastFormData{}, domain.PanelBroadcast{}, false
	}
	data, ok := d.broadcastFormData(w, r, s)
	if !ok {
		return data, domain.PanelBroadcast{}, false
	}
	in, fe := data.request()
	if len(fe) > 0 {
		d.showBroadcastForm(w, r, s, data, http.StatusUnprocessableEntity, "", fe)
		return data, in, false
	}
	return data, in, true
}

// broadcastRefused shows the form (data, as read) again for a refusal (the API's 422 or 409
// reasons, in words) or answers 500; it returns false when err is nil.
func (d *Dashboard) broadcastRefused(w http.ResponseWriter, r *http.Request, s *store.Session, data broadcastFormData, err error) bool {
	var br *domain.BroadcastRefused
	switch {
	case err == nil:
		return false
	case errors.As(err, &br):
		d.showBroadcastForm(w, r, s, data, http.StatusUnprocessableEntity, "", br.Fields)
	case errors.Is(err, domain.ErrAudienceNotFound):
		d.showBroadcastForm(w, r, s, data, http.StatusUnprocessableEntity, "", refusal.One("audience_id", "this workspace has no such audience"))
	case domain.AsSendError(err) != nil:
		se := domain.AsSendError(err)
		d.showBroadcastForm(w, r, s, data, refusalStatus(se.Kind), se.Message+".", se.Fields)
	default:
		d.serverError(w, r, err)
	}
	return true
}

// scheduleIn is the broadcast's schedule in its own time zone, as the form took it.
func scheduleIn(b store.Broadcast) string {
	if b.ScheduledAt == nil {
		return ""
	}
	loc, err := time.LoadLocation(b.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	return b.ScheduledAt.In(loc).Format("2 Jan 2006 15:04") + " " + b.TimeZone
}

// secondsWords is a number of seconds as hours, minutes and seconds ("1 h 5 min", "40 s").
func secondsWords(secs int) string {
	d := time.Duration(secs) * time.Second
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), secs%60)
	}
	return fmt.Sprintf("%d s", secs)
}
