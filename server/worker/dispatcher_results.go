package worker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"time"

	"gateway/platform/eventhook"
	"gateway/server/domain"
	"gateway/store"
)

// The dispatcher's second half: one attempt of a delivery, and the recorders that write the
// results of attempts in batches, with the endpoints' health.

// attempt makes one attempt of a claimed delivery and decides what it means.
func (d *Dispatcher) attempt(j job) dispatchResult {
	now := d.now()
	if now.After(j.claimedAt.Add(d.cfg.Lease - d.cfg.SendTimeout - leaseMargin)) {
		// The claim would lapse before the attempt could finish, and another dispatcher could
		// then send it at the same time: give it back instead.
		return dispatchResult{attempt: store.AttemptResult{ClaimRef: j.Ref()}, release: true}
	}
	c := j.ClaimedDelivery
	r := store.AttemptResult{ClaimRef: c.Ref(), AttemptedAt: now}
	res := dispatchResult{endpointID: c.EndpointID, failing: c.EndpointFailing}
	var out eventhook.Result
	if c.SecretErr != nil {
		out.Err = fmt.Errorf("cannot open the endpoint's signing secret: %w", c.SecretErr)
	} else {
		out = d.sender.Send(context.Background(), eventhook.Request{
			URL: c.URL, Secret: c.Secret, PreviousSecret: c.PreviousSecret, Event: c.Event.Type, EventID: c.Event.ID, DeliveryID: c.ID,
			Attempt: c.Attempt, Timestamp: now, Body: domain.EventBody(c.Event),
		})
	}
	r.StatusCode, r.Latency, r.Response = out.StatusCode, out.Latency, out.Body
	if len(r.Response) > eventhook.MaxResponseBytes {
		r.Response = r.Response[:eventhook.MaxResponseBytes]
	}
	switch {
	case out.OK():
		r.Outcome = store.OutcomeSucceeded
	case out.Gone() && out.Err == nil:
		r.Outcome, r.Error = store.OutcomeDead, "HTTP 410 Gone: the endpoint is disabled"
	case errors.Is(out.Err, eventhook.ErrInvalidRequest) || errors.Is(out.Err, eventhook.ErrMalformedSecret):
		// Retrying cannot help: the stored endpoint (URL or secret) is unusable.
		r.Outcome, r.Error = store.OutcomeDead, out.Err.Error()
	default:
		r.Error = attemptError(out, d.cfg.SendTimeout)
		delay, ok := eventhook.RetryDelay(c.Attempt+1, d.cfg.Rand)
		if c.Event.Test {
			delay, ok = eventhook.TestRetryDelay(c.Attempt+1, d.cfg.Rand)
		}
		if ok {
			r.Outcome, r.RetryIn = store.OutcomeRetry, delay
		} else {
			r.Outcome = store.OutcomeDead
		}
	}
	res.attempt = r
	if d.cfg.Metrics != nil {
		d.cfg.Metrics.ObserveDelivery(string(r.Outcome), out.Latency, now.Sub(c.Event.CreatedAt), c.Attempt == 1)
	}
	return res
}

// attemptError says why an attempt failed, for the request log.
func attemptError(out eventhook.Result, timeout time.Duration) string {
	switch {
	case out.TimedOut():
		return fmt.Sprintf("timeout: no response within %s (%v)", timeout, out.Err)
	case out.Err != nil:
		return out.Err.Error()
	case out.StatusCode >= 300 && out.StatusCode <= 399:
		return fmt.Sprintf("HTTP %d %s: redirects are not followed", out.StatusCode, http.StatusText(out.StatusCode))
	}
	return fmt.Sprintf("HTTP %d %s", out.StatusCode, http.StatusText(out.StatusCode))
}

// record writes results in batches: whatever is waiting, up to maxRecordBatch, in one
// statement.
func (d *Dispatcher) record() {
	defer d.recording.Done()
	batch := make([]dispatchResult, 0, maxRecordBatch)
	for r := range d.results {
		batch = append(batch[:0], r)
	drain:
		for len(batch) < maxRecordBatch {
			select {
			case r, ok := <-d.results:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		d.flush(batch)
		for _, r := range batch {
			doneIfSet(r.done)
		}
	}
}

// flush writes one batch: the attempts, the endpoints' health, and the claims given back.
func (d *Dispatcher) flush(batch []dispatchResult) {
	var attempts []store.AttemptResult
	var releases []store.ClaimRef
	for _, r := range batch {
		if r.release {
			releases = append(releases, r.attempt.ClaimRef)
		} else {
			attempts = append(attempts, r.attempt)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	if len(releases) > 0 {
		if err := d.store.ReleaseDeliveries(ctx, d.dbNow(), releases); err != nil {
			d.log.Error("release lapsing claims", "error", err.Error(), "count", len(releases))
		}
	}
	if len(attempts) == 0 {
		return
	}
	if err := d.store.RecordAttempts(ctx, d.dbNow(), attempts); err != nil {
		// One bad row (a delivery deleted with its endpoint mid-statement) must not lose the
		// others: write them one by one. A result that cannot be written leaves its claim to
		// lapse, and the delivery is attempted again (at least once).
		d.log.Warn("record webhook attempts; retrying one by one", "error", err.Error(), "count", len(attempts))
		for _, a := range attempts {
			if err := d.store.RecordAttempts(ctx, d.dbNow(), []store.AttemptResult{a}); err != nil {
				d.log.Error("record webhook attempt", "error", err.Error(), "delivery_id", a.DeliveryID)
			}
		}
	}
	for _, a := range attempts {
		if a.Outcome != store.OutcomeSucceeded {
			d.log.Debug("webhook attempt failed", "account_id", a.AccountID, "delivery_id", a.DeliveryID,
				"attempt", a.Attempt, "status", a.StatusCode, "error", a.Error, "outcome", string(a.Outcome))
		}
	}
	hs := endpointHealth(batch)
	if len(hs) == 0 {
		return
	}
	if err := d.store.UpdateEndpointHealth(ctx, d.now().Add(-d.cfg.DisableFailingAfter), hs); err != nil {
		d.log.Error("update webhook endpoint health", "error", err.Error())
	}
	for _, h := range hs {
		if h.Gone {
			d.log.Warn("webhook endpoint answered 410 Gone: disabled", "account_id", h.AccountID, "endpoint_id", h.EndpointID)
		}
	}
}

// endpointHealth sums up a batch per endpoint, in attempt order. Endpoints that only
// succeeded, and had no failure streak, need no write.
func endpointHealth(batch []dispatchResult) []store.EndpointHealth {
	if !slices.ContainsFunc(batch, func(r dispatchResult) bool {
		return !r.release && (r.failing || r.attempt.Outcome != store.OutcomeSucceeded)
	}) {
		return nil // the usual batch: successes only, on endpoints without a failure streak
	}
	type acc struct {
		store.EndpointHealth
		needed bool
	}
	byID := map[int64]*acc{}
	sorted := make([]dispatchResult, 0, len(batch))
	for _, r := range batch {
		if !r.release {
			sorted = append(sorted, r)
		}
	}
	sort.SliceStable(sorted, func(i, k int) bool { return sorted[i].attempt.AttemptedAt.Before(sorted[k].attempt.AttemptedAt) })
	for _, r := range sorted {
		a := r.attempt
		h := byID[r.endpointID]
		if h == nil {
			h = &acc{EndpointHealth: store.EndpointHealth{AccountID: a.AccountID, EndpointID: r.endpointID}}
			byID[r.endpointID] = h
		}
		switch {
		case a.Outcome == store.OutcomeSucceeded:
			if r.failing || !h.FailingSince.IsZero() || h.Recovered {
				h.Recovered, h.needed = true, true
			}
			h.FailingSince = time.Time{}
		default:
			if a.StatusCode == http.StatusGone && a.Outcome == store.OutcomeDead {
				h.Gone = true
			}
			if h.FailingSince.IsZero() {
				h.FailingSince = a.AttemptedAt
			}
			h.needed = true
		}
	}
	var out []store.EndpointHealth
	for _, h := range byID {
		if h.needed {
			out = append(out, h.EndpointHealth)
		}
	}
	sort.Slice(out, func(i, k int) bool { return out[i].EndpointID < out[k].EndpointID })
	return out
}
