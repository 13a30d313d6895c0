package dashboard

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"gateway/store"
)

// The event types an endpoint receives: the add form and the endpoint page let the owner
// choose them (default: the v1 types, store.V1EventTypes; the newer types are opt-in, each
// explained), and the endpoint page says what the endpoint was not sent for lack of a type
// (store.MissedEvents), with how to opt in.

// eventTypeChoice is one event type of the form.
type eventTypeChoice struct {
	Type   string
	ID     string // the type as an HTML id
	Help   string
	OptIn  bool
	Chosen bool
}

// eventTypeHelp says in words what each event type is.
var eventTypeHelp = map[string]string{
	store.EventMessageReceived:              "A customer sent a message to your number (their number is in from).",
	"message.sent":                          "A message was sent from the API or this panel.",
	"message.status":                        "A message you sent was delivered, read or failed.",
	store.EventContactCreated:               "A number reached the workspace for the first time.",
	store.EventWebhookTest:                  "The test event of the Send test event button.",
	store.EventMessageReceivedWithoutNumber: "A customer who hides their number behind a WhatsApp username sent a message: the body has their user id and username, and no from. Without it these messages are not sent to this endpoint.",
	store.EventMessageEdited:                "A customer edited a message they sent: the body names the message and holds its new content.",
	store.EventMessageDeleted:               "A customer deleted a message they sent.",
	store.EventContactCreatedWithoutNumber:  "A customer known only by their user id reached the workspace for the first time.",
	store.EventContactUpdated:               "A contact's number or user id changed (the customer changed number, or two contacts turned out to be one person).",
	store.EventBroadcastPaused:              "A broadcast paused: by a teammate or the API, because the portfolio's 24-hour budget was spent (with the time it resumes), or because its template was paused.",
	store.EventBroadcastCompleted:           "A broadcast finished: every recipient was sent or failed; the body has the counts.",
}

// eventTypeChoices lists every event type, those of chosen checked.
func eventTypeChoices(chosen []string) []eventTypeChoice {
	out := make([]eventTypeChoice, 0, len(store.EventTypes))
	for _, t := range store.EventTypes {
		out = append(out, eventTypeChoice{Type: t, ID: strings.NewReplacer(".", "-", "_", "-").Replace(t),
			Help: eventTypeHelp[t], OptIn: !slices.Contains(store.V1EventTypes, t), Chosen: slices.Contains(chosen, t)})
	}
	return out
}

// formEventTypes reads the form's chosen event types: the v1 types when the form did not
// show the choice, and a message in words when it chose none or an unknown one.
func formEventTypes(r *http.Request) ([]string, string) {
	if r.PostFormValue("event_types_shown") == "" {
		return slices.Clone(store.V1EventTypes), ""
	}
	types := r.PostForm["event_types"]
	if len(types) == 0 {
		return types, "Events to send: choose at least one event."
	}
	for _, t := range types {
		if !slices.Contains(store.EventTypes, t) {
			return nil, "Events to send: " + strconv.Quote(t) + " is not an event this service sends."
		}
	}
	return types, ""
}

func sameTypes(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, t := range a {
		if !slices.Contains(b, t) {
			return false
		}
	}
	return true
}

// missedEvents is how many events of one type an endpoint was not sent.
type missedEvents struct {
	Type string
	N    int64
	Help string
}

// endpointEvents fills the endpoint page's event types and what the endpoint missed.
func (d *Dashboard) endpointEvents(r *http.Request, s *store.Session, e store.EndpointStatus, data *webhookData) error {
	if data.Types == nil {
		data.Types = eventTypeChoices(e.EventTypes)
	}
	missed, err := d.cfg.Store.MissedEvents(r.Context(), s.AccountID, e.ID)
	if err != nil {
		return err
	}
	data.Missed = data.Missed[:0]
	for _, t := range store.EventTypes {
		if n := missed[t]; n > 0 && !slices.Contains(e.EventTypes, t) {
			data.Missed = append(data.Missed, missedEvents{Type: t, N: n, Help: eventTypeHelp[t]})
		}
	}
	return nil
}

// setWebhookEvents changes the event types the endpoint receives.
func (d *Dashboard) setWebhookEvents(w http.ResponseWriter, r *http.Request, s *store.Session) {
	e, ok := d.endpointFor(w, r, s)
	if !ok {
		return
	}
	types, msg := formEventTypes(r)
	if msg == "" {
		_, err := d.cfg.Store.SetWebhookEndpointEventTypes(r.Context(), s.AccountID, e.ID, types)
		var refused *store.EventTypesError
		switch {
		case errors.As(err, &refused):
			msg = "Events to send: " + refused.Error() + "."
		case err != nil:
			d.serverError(w, r, err)
			return
		}
	}
	if msg != "" {
		data := webhookData{Endpoint: e, Overlap: "24 hours", Types: eventTypeChoices(types)}
		if err := d.endpointEvents(r, s, e, &data); err != nil {
			d.serverError(w, r, err)
			return
		}
		d.render(w, r, http.StatusUnprocessableEntity, "webhook", page{Title: "Webhook endpoint", Nav: "webhooks", Session: s,
			Error: msg, Data: data})
		return
	}
	d.audit(r, s.AccountID, s.UserID, store.AuditWebhookEvents, e.URL, "endpoint "+strconv.FormatInt(e.ID, 10)+"; events: "+
		strings.Join(types, ", "))
	redirect(w, r, Prefix+"/webhooks/"+strconv.FormatInt(e.ID, 10), "events")
}
