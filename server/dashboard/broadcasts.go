package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"gateway/server/domain"
	"gateway/store"
)

// The broadcasts list and a broadcast's page: its progress (recipients by status, the rate of
// the last minute, the estimated end) kept current by broadcast.js without a reload, pause,
// resume and cancel, the recipients' results with failures in words, the CSV export and a link
// to its campaign's report. The dashboard shows the workspace's live broadcasts (a test key's
// are the API's).

// broadcastsPage is the number of broadcasts, and of recipients, on one page.
const broadcastsPage = 50

// broadcastView is a broadcast with its progress as the pages show it.
type broadcastView struct {
	store.Broadcast
	Schedule  string // its schedule in its own time zone ("" for at once)
	Preflight domain.Preflight
	progressJSON
}

// progressJSON is a broadcast's progress as the page shows it and broadcast.js reads it.
type progressJSON struct {
	State     string  `json:"state"`
	StateText string  `json:"state_text"`
	StateTone string  `json:"state_tone"`
	Reason    string  `json:"reason"` // why it is paused, in words ("" otherwise)
	Total     int     `json:"total"`
	Done      int     `json:"done"` // recipients with a final result (sent, failed, cancelled)
	Waiting   int     `json:"waiting"`
	Sent      int     `json:"sent"` // accepted by WhatsApp, not delivered yet
	Delivered int     `json:"delivered"`
	Read      int     `json:"read"`
	Failed    int     `json:"failed"`
	Unknown   int     `json:"unknown"`
	Cancelled int     `json:"cancelled"`
	Percent   int     `json:"percent"`
	Rate      float64 `json:"rate"`
	RateText  string  `json:"rate_text"`
	ETAText   string  `json:"eta_text"`
	Final     bool    `json:"final"`
	CanPause  bool    `json:"can_pause"`
	CanResume bool    `json:"can_resume"`
	CanCancel bool    `json:"can_cancel"`
}

var broadcastStateWords = map[string]label{
	store.BroadcastScheduled: {Text: "Scheduled", Tone: "info"},
	store.BroadcastRunning:   {Text: "Sending", Tone: "info"},
	store.BroadcastPaused:    {Text: "Paused", Tone: "warn"},
	store.BroadcastCompleted: {Text: "Completed", Tone: "ok"},
	store.BroadcastCancelled: {Text: "Cancelled", Tone: "neutral"},
}

var pauseReasonWords = map[string]string{
	store.PauseOperator:       "Paused by a member of the workspace (or an API call).",
	store.PausePortfolioLimit: "Your business portfolio reached its limit of customers in 24 hours; it resumes by itself when the limit allows.",
	store.PauseTemplatePaused: "WhatsApp paused the template for low quality; resume when it is active again, or cancel.",
	store.PausePayment:        "WhatsApp refused the account's sends (payment or account problem); fix it in Meta Business Suite, then resume.",
}

// recipientStateWords are a recipient's states in words.
var recipientStateWords = map[string]label{
	store.RecipientPending:   {Text: "Waiting", Tone: "neutral"},
	store.RecipientSending:   {Text: "Sending", Tone: "info"},
	store.RecipientUnknown:   {Text: "Unknown: checking with WhatsApp", Tone: "warn"},
	store.RecipientSent:      {Text: "Sent", Tone: "info"},
	store.RecipientFailed:    {Text: "Failed", Tone: "fail"},
	store.RecipientCancelled: {Text: "Cancelled", Tone: "neutral"},
}

// broadcastOf reads the path's broadcast of the workspace: another workspace's, and a test
// key's, are the 404 page. It answers itself and returns false on failure.
func (d *Dashboard) broadcastOf(w http.ResponseWriter, r *http.Request, s *store.Session) (store.Broadcast, bool) {
	b, ok := loadByPathID(d, w, r, s, d.cfg.Store.BroadcastByID)
	if ok && b.Test {
		d.notFound(w, r, s)
		return b, false
	}
	return b, ok
}

// view is the broadcast with its progress, read from its counters.
func (d *Dashboard) view(ctx context.Context, b store.Broadcast, loc *time.Location) (broadcastView, error) {
	v := broadcastView{Broadcast: b, Schedule: scheduleIn(b), Preflight: domain.PreflightOf(b)}
	bs := domain.Broadcasts{Store: d.cfg.Store, Now: d.cfg.Clock}
	if d.cfg.Broadcasts != nil {
		bs = *d.cfg.Broadcasts.Broadcasts
	}
	p, err := bs.ProgressOf(ctx, b)
	if err != nil {
		return v, err
	}
	v.progressJSON = progressOf(b, p, loc)
	return v, nil
}

func progressOf(b store.Broadcast, p domain.Progress, loc *time.Location) progressJSON {
	st := p.ByState
	l := lookupLabel(broadcastStateWords, b.State)
	out := progressJSON{State: b.State, StateText: l.Text, StateTone: l.Tone,
		Waiting: st[store.RecipientPending] + st[store.RecipientSending], Sent: st[store.RecipientSent] - p.Delivered - p.Read,
		Delivered: p.Delivered, Read: p.Read, Failed: st[store.RecipientFailed], Unknown: st[store.RecipientUnknown],
		Cancelled: st[store.RecipientCancelled], Rate: p.Rate,
		Final:    b.State == store.BroadcastCompleted || b.State == store.BroadcastCancelled,
		CanPause: b.State == store.BroadcastScheduled || b.State == store.BroadcastRunning, CanResume: b.State == store.BroadcastPaused}
	out.CanCancel = out.CanPause || out.CanResume
	if b.State == store.BroadcastPaused {
		out.Reason = orHumanize(pauseReasonWords, b.PauseReason)
		if b.ResumeAt != nil {
			out.Reason += " It resumes at " + b.ResumeAt.In(loc).Format("2 Jan 15:04") + "."
		}
	}
	for _, n := range st {
		out.Total += n
	}
	out.Done = st[store.RecipientSent] + out.Failed + out.Cancelled
	if out.Total > 0 {
		out.Percent = out.Done * 100 / out.Total
	}
	out.RateText = fmt.Sprintf("%.1f messages a second over the last minute", p.Rate)
	switch {
	case out.Final || b.State == store.BroadcastPaused:
		out.RateText, out.ETAText = "—", "—"
	case b.State == store.BroadcastScheduled:
		// Nothing is sent before its start: no rate, and no end to estimate yet.
		out.RateText, out.ETAText = "—", "after the start"
	case p.ETA != nil:
		out.ETAText = "about " + p.ETA.In(loc).Format("15:04:05") + " (" + zoneName(loc) + ")"
	default:
		out.ETAText = "not known yet"
	}
	return out
}

type broadcastsData struct {
	Broadcasts []broadcastView
	Next       int64
}

// broadcasts lists the workspace's broadcasts, newest first, with their progress.
func (d *Dashboard) broadcasts(w http.ResponseWriter, r *http.Request, s *store.Session) {
	before, _ := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	bs, err := d.cfg.Store.BroadcastsInMode(r.Context(), s.AccountID, false, max(before, 0), broadcastsPage+1)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	data := broadcastsData{}
	bs, data.Next = keysetPage(bs, broadcastsPage, func(b store.Broadcast) int64 { return b.ID })
	loc := viewerZone(r)
	for _, b := range bs {
		v, err := d.view(r.Context(), b, loc)
		if err != nil {
			d.serverError(w, r, err)
			return
		}
		data.Broadcasts = append(data.Broadcasts, v)
	}
	d.render(w, r, http.StatusOK, "broadcasts", page{Title: "Broadcasts", Nav: "broadcasts", Session: s, Data: data})
}

// recipientView is one recipient's result in words.
type recipientView struct {
	store.BroadcastRecipient
	Status     label
	What, Next string
}

type broadcastData struct {
	broadcastView
	Recipients []recipientView
	After      int64 // the page's first recipient follows this id
	// ConfirmCancel shows the cancel's confirmation (?confirm=cancel).
	ConfirmCancel bool
	Next          int64 // id to continue after; 0 on the last page
}

// broadcastPage is one broadcast: progress, controls, a page of its recipients (?after=ID).
func (d *Dashboard) broadcastPage(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.renderBroadcast(w, r, s, http.StatusOK, "")
}

// renderBroadcast renders the path's broadcast's page with the status and an error message
// ("" for none).
func (d *Dashboard) renderBroadcast(w http.ResponseWriter, r *http.Request, s *store.Session, status int, errMsg string) {
	v, ok := d.viewOf(w, r, s)
	if !ok {
		return
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	rs, err := d.cfg.Store.BroadcastRecipients(r.Context(), s.AccountID, v.ID, max(after, 0), broadcastsPage+1)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	data := broadcastData{broadcastView: v, After: after, ConfirmCancel: r.URL.Query().Get("confirm") == "cancel"}
	rs, data.Next = keysetPage(rs, broadcastsPage, func(rc store.BroadcastRecipient) int64 { return rc.ID })
	for _, rc := range rs {
		data.Recipients = append(data.Recipients, recipientOf(rc))
	}
	d.render(w, r, status, "broadcast", page{Title: "Broadcast " + v.Name, Nav: "broadcasts", Session: s, Flash: flash(r), Error: errMsg, Data: data})
}

// viewOf reads the path's broadcast with its progress; it answers itself (the 404 or 500
// page) and returns false on failure.
func (d *Dashboard) viewOf(w http.ResponseWriter, r *http.Request, s *store.Session) (broadcastView, bool) {
	b, ok := d.broadcastOf(w, r, s)
	if !ok {
		return broadcastView{}, false
	}
	v, err := d.view(r.Context(), b, viewerZone(r))
	if err != nil {
		d.serverError(w, r, err)
		return v, false
	}
	return v, true
}

// recipientOf is the recipient's result in words: a failure's reason and next step
// (words.go's platform errors), the platform's own title for a code the table lacks.
func recipientOf(r store.BroadcastRecipient) recipientView {
	v := recipientView{BroadcastRecipient: r, Status: lookupLabel(recipientStateWords, r.State)}
	if r.State == store.RecipientFailed {
		var ok bool
		if v.What, v.Next, ok = errorAdvice(r.ErrorCode); !ok {
			v.What = r.ErrorTitle
			if v.What == "" {
				v.What = "WhatsApp did not accept the message."
			}
		}
	}
	return v
}

// broadcastProgress answers GET /dashboard/broadcasts/{id}/progress with the progress as JSON
// (progressJSON), for broadcast.js.
func (d *Dashboard) broadcastProgress(w http.ResponseWriter, r *http.Request, s *store.Session) {
	v, ok := d.viewOf(w, r, s)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v.progressJSON)
}

func (d *Dashboard) pauseBroadcast(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.changeBroadcast(w, r, s, "broadcast-paused", func(p *domain.BroadcastPanel, id int64) (store.Broadcast, error) {
		return p.Pause(r.Context(), s.AccountID, s.UserID, id)
	})
}

func (d *Dashboard) resumeBroadcast(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.changeBroadcast(w, r, s, "broadcast-resumed", func(p *domain.BroadcastPanel, id int64) (store.Broadcast, error) {
		return p.Resume(r.Context(), s.AccountID, s.UserID, id)
	})
}

func (d *Dashboard) cancelBroadcast(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.changeBroadcast(w, r, s, "broadcast-cancelled", func(p *domain.BroadcastPanel, id int64) (store.Broadcast, error) {
		return p.Cancel(r.Context(), s.AccountID, s.UserID, id)
	})
}

// changeBroadcast runs a change of the path's broadcast (the domain's, which reads it: another
// workspace's and a test key's are the 404 page) and opens its page with a notice; a state that
// does not allow it says so on the page.
func (d *Dashboard) changeBroadcast(w http.ResponseWriter, r *http.Request, s *store.Session, notice string,
	change func(*domain.BroadcastPanel, int64) (store.Broadcast, error)) {
	if d.cfg.Broadcasts == nil {
		d.renderBroadcast(w, r, s, http.StatusServiceUnavailable, "Broadcasts are not configured on this server: nothing was changed.")
		return
	}
	id, ok := pathID(r, "id")
	if !ok {
		d.notFound(w, r, s)
		return
	}
	_, err := change(d.cfg.Broadcasts, id)
	var bs *domain.BroadcastStateError
	switch {
	case errors.As(err, &bs):
		notice = "broadcast-state"
	case errors.Is(err, domain.ErrBroadcastNotFound):
		d.notFound(w, r, s)
		return
	case err != nil:
		d.serverError(w, r, err)
		return
	}
	redirect(w, r, Prefix+"/broadcasts/"+strconv.FormatInt(id, 10), notice)
}
