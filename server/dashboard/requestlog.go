package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"gateway/platform/eventhook"
	"gateway/store"
)

// requestLogPage is the number of attempts on one page of the request log.
const requestLogPage = 50

type requestLogData struct {
	Attempts  []store.LoggedAttempt
	Endpoints []store.EndpointStatus
	Activity  map[int64]store.EndpointActivity
	Events    []string
	Filter    store.AttemptFilter
	Outcome   string
	Next      pageQuery // query of the next (older) page; "" on the last page
}

func (d *Dashboard) requestLog(w http.ResponseWriter, r *http.Request, s *store.Session) {
	q := r.URL.Query()
	var f store.AttemptFilter
	if v := q.Get("endpoint"); v != "" {
		f.EndpointID, _ = strconv.ParseInt(v, 10, 64)
	}
	if v := q.Get("event"); slices.Contains(store.EventTypes, v) {
		f.Event = v
	}
	if v := q.Get("outcome"); v == "succeeded" || v == "failed" {
		f.Outcome = v
	}
	if v := q.Get("before"); v != "" {
		at, id, ok := parseCursor(v)
		if !ok {
			d.badPageLink(w, r, s, "before")
			return
		}
		f.BeforeAt, f.BeforeID = at, id
	}
	as, err := d.cfg.Store.RequestLog(r.Context(), s.AccountID, f, requestLogPage)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	es, err := d.cfg.Store.EndpointStatuses(r.Context(), s.AccountID)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	data := requestLogData{Attempts: as, Endpoints: es, Events: store.EventTypes, Filter: f}
	if data.Activity, err = d.activity(r.Context(), s.AccountID); err != nil {
		d.serverError(w, r, err)
		return
	}
	if len(as) == requestLogPage {
		last := as[len(as)-1]
		nq := url.Values{}
		for _, k := range []string{"endpoint", "event", "outcome"} {
			if v := q.Get(k); v != "" {
				nq.Set(k, v)
			}
		}
		nq.Set("before", fmt.Sprintf("%d_%d", last.AttemptedAt.UnixMicro(), last.ID))
		data.Next = pageQuery(nq.Encode())
	}
	d.render(w, r, http.StatusOK, "requestlog", page{Title: "Request log", Nav: "requestlog", Session: s, Flash: flash(r), Data: data})
}

// parseCursor reads "<unix microseconds>_<attempt id>"; false unless the time is one
// store.CursorTimeOK accepts and the id is positive.
func parseCursor(v string) (time.Time, int64, bool) {
	a, b, ok := strings.Cut(v, "_")
	if !ok {
		return time.Time{}, 0, false
	}
	us, err1 := strconv.ParseInt(a, 10, 64)
	id, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || id < 1 || !store.CursorTimeOK(time.UnixMicro(us)) {
		return time.Time{}, 0, false
	}
	return time.UnixMicro(us), id, true
}

type header struct{ Name, Value string }

type attemptData struct {
	Attempt store.AttemptDetail
	Body    []byte
	Headers []header
}

func (d *Dashboard) attemptPage(w http.ResponseWriter, r *http.Request, s *store.Session) {
	a, ok := loadByPathID(d, w, r, s, d.cfg.Store.AttemptByID)
	if !ok {
		return
	}
	body := d.cfg.EventBody(a.Ev)
	ts := strconv.FormatInt(a.AttemptedAt.Unix(), 10)
	// The headers are rebuilt from what the attempt was made of; the signatures are not
	// stored (they would need the secret), so they are shown as what they are.
	hs := []header{
		{"Content-Type", "application/json"},
		{"User-Agent", eventhook.UserAgent},
		{eventhook.HeaderEvent, a.Event},
		{eventhook.HeaderDelivery, a.DeliveryID},
		{eventhook.HeaderSignature, "sha256=<HMAC-SHA256 of the body with the endpoint's signing secret>"},
		{eventhook.HeaderEventID, a.Ev.ID},
		{eventhook.HeaderAttempt, strconv.Itoa(a.Attempt)},
		{eventhook.HeaderTimestamp, ts},
		{eventhook.HeaderTimestampSignature, "sha256=<HMAC-SHA256 of X-Service-Timestamp.body with the endpoint's signing secret> (two during a secret rotation)"},
		{"webhook-id", a.DeliveryID},
		{"webhook-timestamp", ts},
		{"webhook-signature", "v1,<base64 HMAC-SHA256 of webhook-id.webhook-timestamp.body> (two during a secret rotation)"},
	}
	d.render(w, r, http.StatusOK, "attempt", page{Title: "Delivery attempt", Nav: "requestlog", Session: s, Flash: flash(r),
		Data: attemptData{Attempt: a, Body: body, Headers: hs}})
}

func (d *Dashboard) redeliver(w http.ResponseWriter, r *http.Request, s *store.Session) {
	id := r.PathValue("id")
	back := r.PostFormValue("back")
	if _, err := strconv.ParseInt(back, 10, 64); err != nil {
		back = ""
	}
	_, err := d.cfg.Store.Redeliver(r.Context(), s.AccountID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		d.notFound(w, r, s)
		return
	case errors.Is(err, store.ErrEndpointDisabled):
		d.render(w, r, http.StatusConflict, "message", page{Title: "Redeliver", Nav: "requestlog", Session: s,
			Error: "The endpoint of this delivery is disabled: enable it on the Webhooks page first, then redeliver."})
		return
	case errors.Is(err, store.ErrInFlight):
		d.render(w, r, http.StatusConflict, "message", page{Title: "Redeliver", Nav: "requestlog", Session: s,
			Error: "An attempt of this delivery is in flight right now. Wait a few seconds and try again."})
		return
	case err != nil:
		d.serverError(w, r, err)
		return
	}
	if back != "" {
		redirect(w, r, Prefix+"/request-log/"+back, "redelivered")
		return
	}
	redirect(w, r, Prefix+"/request-log", "redelivered")
}
