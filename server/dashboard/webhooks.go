package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"gateway/platform/eventhook"
	"gateway/store"
)

type webhooksData struct {
	Endpoints []store.EndpointStatus
	Activity  map[int64]store.EndpointActivity
	URL       string
	Types     []eventTypeChoice // the add form's event types
	// Polling: the dispatchers find new deliveries on their poll tick, not by LISTEN.
	Polling bool
}

type webhookData struct {
	Endpoint store.EndpointStatus
	Secret   string // shown once, after creation or rotation
	Confirm  string // "delete" or "rotate": the confirmation asked for
	Rotated  bool
	Overlap  string
	Activity map[int64]store.EndpointActivity
	// Test is the result of the test event the page was opened for (nil: none asked).
	Test *testResult
	// Types are the event types, those the endpoint receives chosen; Missed what it was not
	// sent because it does not receive those types.
	Types  []eventTypeChoice
	Missed []missedEvents
}

func (d *Dashboard) webhooksPage(w http.ResponseWriter, r *http.Request, s *store.Session, status int, data webhooksData, errMsg string) {
	es, err := d.cfg.Store.EndpointStatuses(r.Context(), s.AccountID)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	data.Endpoints = es
	if data.Types == nil {
		data.Types = eventTypeChoices(store.V1EventTypes)
	}
	data.Polling = d.cfg.PollsForDeliveries
	if data.Activity, err = d.activity(r.Context(), s.AccountID); err != nil {
		d.serverError(w, r, err)
		return
	}
	d.render(w, r, status, "webhooks", page{Title: "Webhooks", Nav: "webhooks", Session: s, Flash: flash(r), Error: errMsg, Data: data})
}

func (d *Dashboard) webhooks(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.webhooksPage(w, r, s, http.StatusOK, webhooksData{}, "")
}

func (d *Dashboard) addWebhook(w http.ResponseWriter, r *http.Request, s *store.Session) {
	u := strings.TrimSpace(r.PostFormValue("url"))
	types, typesErr := formEventTypes(r)
	if err := d.cfg.ValidateWebhookURL(u, d.cfg.WebhookAllowPrivate); err != nil {
		d.webhooksPage(w, r, s, http.StatusUnprocessableEntity, webhooksData{URL: u, Types: eventTypeChoices(types)},
			"Endpoint URL: "+plainSetting(err.Error())+".")
		return
	}
	if typesErr != "" {
		d.webhooksPage(w, r, s, http.StatusUnprocessableEntity, webhooksData{URL: u, Types: eventTypeChoices(types)}, typesErr)
		return
	}
	secret, err := eventhook.NewSecret()
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	e, err := d.cfg.Store.CreateWebhookEndpoint(r.Context(), s.AccountID, u, secret)
	if errors.Is(err, store.ErrLimitReached) {
		d.webhooksPage(w, r, s, http.StatusUnprocessableEntity, webhooksData{URL: u}, fmt.Sprintf(
			"This workspace already has %d webhook endpoints, the most it may have. Delete one it no longer uses to add another.",
			d.cfg.Store.Limits().WebhookEndpoints))
		return
	}
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	if !sameTypes(types, store.V1EventTypes) {
		if _, err := d.cfg.Store.SetWebhookEndpointEventTypes(r.Context(), s.AccountID, e.ID, types); err != nil {
			d.serverError(w, r, err)
			return
		}
	}
	d.audit(r, s.AccountID, s.UserID, store.AuditWebhookAdded, u, "endpoint "+strconv.FormatInt(e.ID, 10)+"; events: "+
		strings.Join(types, ", "))
	d.webhookView(w, r, s, e.ID, webhookData{Secret: secret})
}

// endpointFor reads the endpoint named by the path for the session's account; false after a
// 404 or 500 was written.
func (d *Dashboard) endpointFor(w http.ResponseWriter, r *http.Request, s *store.Session) (store.EndpointStatus, bool) {
	return loadByPathID(d, w, r, s, d.cfg.Store.EndpointStatusByID)
}

func (d *Dashboard) webhookView(w http.ResponseWriter, r *http.Request, s *store.Session, id int64, data webhookData) {
	e, err := d.cfg.Store.EndpointStatusByID(r.Context(), s.AccountID, id)
	if errors.Is(err, store.ErrNotFound) {
		d.notFound(w, r, s)
		return
	} else if err != nil {
		d.serverError(w, r, err)
		return
	}
	data.Endpoint = e
	data.Overlap = "24 hours"
	if data.Activity, err = d.activity(r.Context(), s.AccountID); err != nil {
		d.serverError(w, r, err)
		return
	}
	if err := d.endpointEvents(r, s, e, &data); err != nil {
		d.serverError(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "webhook", page{Title: "Webhook endpoint", Nav: "webhooks", Session: s, Flash: flash(r), Data: data})
}

func (d *Dashboard) webhookPage(w http.ResponseWriter, r *http.Request, s *store.Session) {
	e, ok := d.endpointFor(w, r, s)
	if !ok {
		return
	}
	c := r.URL.Query().Get("confirm")
	if c != "delete" && c != "rotate" {
		c = ""
	}
	data := webhookData{Endpoint: e, Confirm: c, Overlap: "24 hours"}
	var err error
	if data.Activity, err = d.activity(r.Context(), s.AccountID); err != nil {
		d.serverError(w, r, err)
		return
	}
	if data.Test, err = d.testOutcome(r, s, e.ID); err != nil {
		d.serverError(w, r, err)
		return
	}
	if err := d.endpointEvents(r, s, e, &data); err != nil {
		d.serverError(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "webhook", page{Title: "Webhook endpoint", Nav: "webhooks", Session: s, Flash: flash(r), Data: data})
}

func (d *Dashboard) setEnabled(w http.ResponseWriter, r *http.Request, s *store.Session, enabled bool) {
	e, ok := d.endpointFor(w, r, s)
	if !ok {
		return
	}
	if _, err := d.cfg.Store.SetWebhookEndpointEnabled(r.Context(), s.AccountID, e.ID, enabled, store.DisabledOperator); err != nil {
		d.serverError(w, r, err)
		return
	}
	action, notice := store.AuditWebhookDisabled, "disabled"
	if enabled {
		action, notice = store.AuditWebhookEnabled, "enabled"
	}
	d.audit(r, s.AccountID, s.UserID, action, e.URL, "endpoint "+strconv.FormatInt(e.ID, 10))
	redirect(w, r, Prefix+"/webhooks/"+strconv.FormatInt(e.ID, 10), notice)
}

func (d *Dashboard) enableWebhook(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.setEnabled(w, r, s, true)
}

func (d *Dashboard) disableWebhook(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.setEnabled(w, r, s, false)
}

func (d *Dashboard) rotateWebhook(w http.ResponseWriter, r *http.Request, s *store.Session) {
	e, ok := d.endpointFor(w, r, s)
	if !ok {
		return
	}
	secret, err := eventhook.NewSecret()
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	_, err = d.cfg.Store.RotateWebhookSecret(r.Context(), s.AccountID, e.ID, secret, RotationOverlap)
	var inProgress *store.RotationInProgressError
	if errors.As(err, &inProgress) {
		d.render(w, r, http.StatusConflict, "webhook", page{Title: "Webhook endpoint", Nav: "webhooks", Session: s,
			Error: "A secret rotation is already in progress: the previous secret signs until " +
				inProgress.Until.UTC().Format("2006-01-02 15:04 UTC") + ". Rotate again after that, so that receivers still on it keep their overlap.",
			Data: webhookData{Endpoint: e, Overlap: "24 hours"}})
		return
	}
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	d.audit(r, s.AccountID, s.UserID, store.AuditWebhookRotated, e.URL, "endpoint "+strconv.FormatInt(e.ID, 10)+"; previous secret valid 24 h")
	d.webhookView(w, r, s, e.ID, webhookData{Secret: secret, Rotated: true})
}

func (d *Dashboard) testWebhook(w http.ResponseWriter, r *http.Request, s *store.Session) {
	e, ok := d.endpointFor(w, r, s)
	if !ok {
		return
	}
	data, _ := json.Marshal(map[string]any{"endpoint_id": e.ID, "message": "A test event sent from the dashboard."})
	ev, err := d.cfg.Store.SendTestEvent(r.Context(), s.AccountID, e.ID, data)
	if errors.Is(err, store.ErrEndpointDisabled) {
		d.render(w, r, http.StatusConflict, "webhook", page{Title: "Webhook endpoint", Nav: "webhooks", Session: s,
			Error: "This endpoint is disabled: enable it first, then send a test event.", Data: webhookData{Endpoint: e, Overlap: "24 hours"}})
		return
	} else if err != nil {
		d.serverError(w, r, err)
		return
	}
	// Wait a moment for the attempt, so that the page shows how the endpoint answered.
	delivery, err := d.cfg.Store.TestDelivery(r.Context(), s.AccountID, ev.ID, e.ID)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	d.awaitAttempt(r.Context(), s.AccountID, delivery)
	http.Redirect(w, r, Prefix+"/webhooks/"+strconv.FormatInt(e.ID, 10)+"?test="+delivery, http.StatusSeeOther)
}

func (d *Dashboard) deleteWebhook(w http.ResponseWriter, r *http.Request, s *store.Session) {
	e, ok := d.endpointFor(w, r, s)
	if !ok {
		return
	}
	if _, err := d.cfg.Store.DeleteWebhookEndpoint(r.Context(), s.AccountID, e.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		d.serverError(w, r, err)
		return
	}
	d.audit(r, s.AccountID, s.UserID, store.AuditWebhookDeleted, e.URL, "endpoint "+strconv.FormatInt(e.ID, 10))
	redirect(w, r, Prefix+"/webhooks", "deleted")
}
