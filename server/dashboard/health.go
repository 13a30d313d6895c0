package dashboard

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"time"

	"gateway/store"
)

// Webhook health as a business reads it: whether an endpoint works, since when it fails and
// how often in a row, when the next retry is due, and a day's delivered and failed attempts.

// activityWindow is the span of the pages' delivered and failed counts.
const activityWindow = 24 * time.Hour

// testWait bounds how long "Send test event" waits for the test's first attempt, so that the
// page it returns to shows the result.
const testWait = 5 * time.Second

// endpointHealth is one endpoint's state for the pages.
type endpointHealth struct {
	P        page
	Endpoint store.EndpointStatus
	Activity store.EndpointActivity
}

// Tone is the badge's class.
func (h endpointHealth) Tone() string {
	switch {
	case !h.Endpoint.Enabled || h.Endpoint.FailingSince != nil:
		return "fail"
	case h.Activity.Delivered == 0 && h.Endpoint.LastSuccessAt == nil:
		return "neutral"
	}
	return "ok"
}

// State is the badge's word.
func (h endpointHealth) State() string {
	switch {
	case !h.Endpoint.Enabled:
		return "Disabled"
	case h.Endpoint.FailingSince != nil:
		return "Failing"
	case h.Activity.Delivered == 0 && h.Endpoint.LastSuccessAt == nil:
		return "No deliveries yet"
	}
	return "Working"
}

func healthOf(p page, e store.EndpointStatus, activity map[int64]store.EndpointActivity) endpointHealth {
	return endpointHealth{P: p, Endpoint: e, Activity: activity[e.ID]}
}

// activity reads the endpoints' last day, for the webhooks pages and the request log.
func (d *Dashboard) activity(ctx context.Context, accountID int64) (map[int64]store.EndpointActivity, error) {
	return d.cfg.Store.EndpointsActivity(ctx, accountID, d.cfg.Clock().Add(-activityWindow))
}

var deliveryIDPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// testResult is the outcome of a test event shown on the endpoint's page.
type testResult struct {
	Waiting bool // not attempted yet
	Attempt store.LoggedAttempt
}

// testOutcome reads the attempt of the test delivery the page's ?test= names; nil when the
// parameter names no delivery of the workspace's (or none was asked for).
func (d *Dashboard) testOutcome(r *http.Request, s *store.Session, endpointID int64) (*testResult, error) {
	id := r.URL.Query().Get("test")
	if !deliveryIDPattern.MatchString(id) {
		return nil, nil
	}
	a, err := d.cfg.Store.DeliveryAttempt(r.Context(), s.AccountID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &testResult{Waiting: true}, nil
	case err != nil:
		return nil, err
	case a.EndpointID != endpointID:
		return nil, nil
	}
	return &testResult{Attempt: a}, nil
}

// awaitAttempt waits, at most testWait, for the delivery's first attempt (the dispatcher makes
// it); it returns early when the request is cancelled.
func (d *Dashboard) awaitAttempt(ctx context.Context, accountID int64, deliveryID string) {
	ctx, cancel := context.WithTimeout(ctx, testWait)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := d.cfg.Store.DeliveryAttempt(ctx, accountID, deliveryID); !errors.Is(err, store.ErrNotFound) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
