package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lib/pq"
)

// Webhook deliveries: one row per event × enabled endpoint, made by the events_fan_out trigger
// in the transaction that writes the event. A delivery is pending until an attempt succeeds
// (succeeded) or its attempts are used up (dead); both stay in the log. A claim increments
// attempts and pushes next_attempt_at out by the lease, so a delivery whose process died while
// holding it is due again once the lease runs out: nothing else rescues it, and nothing else
// needs to.

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryDead      = "dead"
	// DeliveryFailed is a filter, not a stored status: a dead delivery, or a pending one whose
	// last attempt failed.
	DeliveryFailed = "failed"
)

// ErrEndpointDisabled is returned by Redeliver when the delivery's endpoint is disabled.
var ErrEndpointDisabled = errors.New("webhook endpoint is disabled")

// ErrInFlight is returned (wrapping ErrConflict) by Redeliver when an attempt of the delivery
// is being made right now.
var ErrInFlight = fmt.Errorf("%w: an attempt of this delivery is in flight", ErrConflict)

// ClaimedDelivery is a delivery leased to one dispatcher, with what it needs to make the
// attempt: the event, the endpoint's URL and its decrypted secret.
type ClaimedDelivery struct {
	ID         string
	AccountID  int64
	EndpointID int64
	// Attempt is the 1-based number of the attempt this claim is for.
	Attempt int
	// LeaseUntil is when the claim lapses and the delivery is due again (database time).
	LeaseUntil time.Time
	URL        string
	Secret     string
	// SecretErr is set when the sealed secret could not be opened (wrong GATEWAY_SECRET_KEY);
	// the attempt cannot be signed then.
	SecretErr error
	// PreviousSecret is the secret a rotation replaced, while its overlap runs ("" otherwise):
	// attempts are signed with both.
	PreviousSecret string
	// EndpointFailing reports whether the endpoint had a failure streak when claimed, so a
	// success knows it must clear it.
	EndpointFailing bool
	Event           Event
}

// ClaimRef names one claim: the delivery and the attempt number the claim was for.
type ClaimRef struct {
	DeliveryID string
	AccountID  int64
	Attempt    int
}

// Ref returns the claim's reference.
func (c ClaimedDelivery) Ref() ClaimRef {
	return ClaimRef{DeliveryID: c.ID, AccountID: c.AccountID, Attempt: c.Attempt}
}

// dbNow is the time a statement should use: t, or the database's clock when t is zero.
func dbNow(t time.Time) sql.NullTime { return sql.NullTime{Time: t, Valid: !t.IsZero()} }

// claimSQL picks the oldest due deliveries endpoint by endpoint: each endpoint not left out
// offers its own oldest due ones (the (endpoint_id, next_attempt_at) index), and the oldest of
// those are locked, skipping rows another claimer holds. A claim reads at most about
// 2 × limit delivery rows per endpoint, so one endpoint's large due backlog, left out of the
// claim, does not make claims for the others slow (TestClaimWithLargeBacklogOnOneEndpoint).
// The candidates are found again, locked and updated by their row address (ctid) within the
// one statement, so no index is searched for them a second and a third time; a row another
// claimer changed meanwhile is rechecked by the lock (its new version is no longer due, or
// is locked and skipped). The endpoint's columns come with the candidates, read once.
//
// $1 now (NULL: the database's clock), $2 limit, $3 lease in seconds, $4 endpoints and $5
// accounts to leave out.
const claimSQL = `WITH cand AS (
		SELECT x.tid, x.next_attempt_at, w.enabled, w.url, w.secret, w.failing_since IS NOT NULL AS failing,
			CASE WHEN w.previous_secret_expires_at > COALESCE($1::timestamptz, now()) THEN w.previous_secret END AS previous_secret
		FROM webhook_endpoints w
		CROSS JOIN LATERAL (
			SELECT d.ctid AS tid, d.next_attempt_at FROM webhook_deliveries d
			WHERE d.endpoint_id = w.id AND d.account_id = w.account_id AND d.status = 'pending' AND d.next_attempt_at <= COALESCE($1::timestamptz, now())
			ORDER BY d.next_attempt_at
			LIMIT 2 * $2::int
		) x
		WHERE w.id <> ALL($4::bigint[]) AND w.account_id <> ALL($5::bigint[])
		ORDER BY x.next_attempt_at
		LIMIT 2 * $2::int
	), c AS (
		SELECT d.ctid AS tid, cand.enabled, cand.url, cand.secret, cand.failing, cand.previous_secret
		FROM cand JOIN webhook_deliveries d ON d.ctid = cand.tid
		WHERE d.status = 'pending' AND d.next_attempt_at <= COALESCE($1::timestamptz, now())
		ORDER BY d.next_attempt_at
		LIMIT $2
		FOR UPDATE OF d SKIP LOCKED
	), u AS (
		UPDATE webhook_deliveries d SET
			attempts        = d.attempts + CASE WHEN c.enabled THEN 1 ELSE 0 END,
			next_attempt_at = CASE WHEN c.enabled THEN COALESCE($1::timestamptz, now()) + $3 * interval '1 second' ELSE d.next_attempt_at END,
			status          = CASE WHEN c.enabled THEN 'pending' ELSE 'dead' END,
			last_error      = CASE WHEN c.enabled THEN d.last_error ELSE 'endpoint disabled' END,
			completed_at    = CASE WHEN c.enabled THEN NULL ELSE COALESCE($1::timestamptz, now()) END
		FROM c WHERE d.ctid = c.tid
		RETURNING d.id, d.account_id, d.endpoint_id, d.attempts, d.event_id, d.next_attempt_at AS lease_until,
			c.enabled, c.url, c.secret, c.failing, c.previous_secret
	)
	SELECT u.id, u.account_id, u.endpoint_id, u.attempts, u.lease_until, u.url, u.secret, u.failing, u.previous_secret,
		e.id AS event_id, e.type, e.test, e.data, e.created_at
	FROM u JOIN events e ON e.account_id = u.account_id AND e.id = u.event_id
	WHERE u.enabled`

// ClaimDueDeliveries leases up to limit due deliveries (oldest due first) for lease, skipping
// rows other dispatchers hold (FOR UPDATE SKIP LOCKED), deliveries to the endpoints in skip
// and deliveries of the accounts in skipAccounts. Each claim counts as an attempt. now is the time to use; zero means the database's
// clock (production: one clock for every replica). Due deliveries whose endpoint is disabled
// are marked dead ("endpoint disabled") instead of being returned. It fails only when the
// statement fails; nothing is claimed then.
func (s *Store) ClaimDueDeliveries(ctx context.Context, now time.Time, limit int, lease time.Duration, skip, skipAccounts []int64) ([]ClaimedDelivery, error) {
	st, err := s.prepared(ctx, claimSQL)
	if err != nil {
		return nil, err
	}
	if skip == nil {
		skip = []int64{}
	}
	if skipAccounts == nil {
		skipAccounts = []int64{}
	}
	rows, err := st.QueryContext(ctx, dbNow(now), limit, lease.Seconds(), pq.Int64Array(skip), pq.Int64Array(skipAccounts))
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := make([]ClaimedDelivery, 0, limit)
	// A claim holds several deliveries of each endpoint, all with the same sealed secrets:
	// each is opened once.
	secrets := map[int64]*endpointSecrets{}
	for rows.Next() {
		var (
			c                  ClaimedDelivery
			sealed, sealedPrev []byte
			data               []byte
		)
		if err := rows.Scan(&c.ID, &c.AccountID, &c.EndpointID, &c.Attempt, &c.LeaseUntil, &c.URL, &sealed, &c.EndpointFailing,
			&sealedPrev, &c.Event.ID, &c.Event.Type, &c.Event.Test, &data, &c.Event.CreatedAt); err != nil {
			return nil, translate(err)
		}
		c.Event.AccountID, c.Event.Data = c.AccountID, json.RawMessage(data)
		es := secrets[c.EndpointID]
		if es == nil || !bytes.Equal(es.sealed, sealed) || !bytes.Equal(es.sealedPrev, sealedPrev) {
			es = &endpointSecrets{sealed: sealed, sealedPrev: sealedPrev}
			row := secretRow{table: "webhook_endpoints", account: c.AccountID, id: c.EndpointID}
			es.secret, es.err = s.open(sealed, row)
			if sealedPrev != nil {
				// The previous secret is the blob the rotation moved aside, sealed for the same
				// row. One that no key opens any more (a key rotation since) only loses its
				// signature.
				if prev, err := s.open(sealedPrev, row); err == nil {
					es.previous = prev
				}
			}
			secrets[c.EndpointID] = es
		}
		c.Secret, c.SecretErr, c.PreviousSecret = es.secret, es.err, es.previous
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}
	return out, nil
}

// endpointSecrets is an endpoint's sealed secrets as a claim read them, and what they opened to.
type endpointSecrets struct {
	sealed, sealedPrev []byte
	secret, previous   string
	err                error
}

// claimRow is one element of ReleaseDeliveries' $1.
type claimRow struct {
	ID        string `json:"id"`
	AccountID int64  `json:"account_id"`
	Attempt   int    `json:"attempt"`
}

// ReleaseDeliveries gives claims back unattempted: the attempt they counted is uncounted and
// the delivery is due at now (zero: the database's clock). A claim already taken over by
// another dispatcher, or finished, is left alone. A dispatcher calls it for claims it will not
// attempt (shutting down, or the lease would run out before the attempt could finish).
func (s *Store) ReleaseDeliveries(ctx context.Context, now time.Time, refs []ClaimRef) error {
	if len(refs) == 0 {
		return nil
	}
	rows := make([]claimRow, len(refs))
	for i, r := range refs {
		rows[i] = claimRow{ID: r.DeliveryID, AccountID: r.AccountID, Attempt: r.Attempt}
	}
	arg, err := jsonArg(rows)
	if err != nil {
		return err
	}
	st, err := s.prepared(ctx, `UPDATE webhook_deliveries d
		SET attempts = d.attempts - 1, next_attempt_at = COALESCE($2::timestamptz, now())
		FROM jsonb_to_recordset($1::jsonb) AS r (id uuid, account_id bigint, attempt int)
		WHERE d.account_id = r.account_id AND d.id = r.id AND d.status = 'pending' AND d.attempts = r.attempt`)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx, arg, dbNow(now))
	return translate(err)
}

// Outcome is what an attempt's result does to its delivery.
type Outcome string

// The outcomes of an attempt.
const (
	// OutcomeSucceeded: the delivery is done.
	OutcomeSucceeded Outcome = "succeeded"
	// OutcomeRetry: the delivery is due again after AttemptResult.RetryIn.
	OutcomeRetry Outcome = "retry"
	// OutcomeDead: no more automatic attempts; the delivery stays in the log.
	OutcomeDead Outcome = "dead"
)

// AttemptResult is one attempt as written to the request log, and what it decides.
type AttemptResult struct {
	ClaimRef
	AttemptedAt time.Time
	// StatusCode is the receiver's status, 0 when none was received.
	StatusCode int
	Latency    time.Duration
	// Error is empty on success; otherwise it says why the attempt failed.
	Error string
	// Response is the start of the receiver's response body (the caller caps it).
	Response []byte
	Outcome  Outcome
	// RetryIn is the wait before the next attempt (OutcomeRetry only).
	RetryIn time.Duration
}

// attemptRow is one element of RecordAttempts' $1.
type attemptRow struct {
	ID          string  `json:"id"`
	AccountID   int64   `json:"account_id"`
	Attempt     int     `json:"attempt"`
	AttemptedAt string  `json:"attempted_at"`
	StatusCode  int     `json:"status_code"` // 0: none received
	LatencyMS   int64   `json:"latency_ms"`
	Error       string  `json:"error"`
	Body        string  `json:"body"`
	Outcome     string  `json:"outcome"`
	Delay       float64 `json:"delay"` // seconds until the retry
}

// RecordAttempts writes a batch of attempt results in one statement: an attempt-log row for
// each (for deliveries that still exist) and the delivery's new state. now (zero: the
// database's clock) is the base of the retry times and the completion time. A result of a claim
// that was since taken over by another dispatcher is logged but changes nothing, except that
// a success still completes a delivery that is pending. It fails when the statement fails;
// nothing of the batch is written then.
func (s *Store) RecordAttempts(ctx context.Context, now time.Time, results []AttemptResult) error {
	if len(results) == 0 {
		return nil
	}
	rows := make([]attemptRow, len(results))
	for i, r := range results {
		rows[i] = attemptRow{ID: r.DeliveryID, AccountID: r.AccountID, Attempt: r.Attempt,
			AttemptedAt: r.AttemptedAt.UTC().Format(time.RFC3339Nano), StatusCode: r.StatusCode,
			LatencyMS: r.Latency.Milliseconds(), Error: safeText(r.Error), Body: safeText(string(r.Response)),
			Outcome: string(r.Outcome), Delay: r.RetryIn.Seconds()}
	}
	arg, err := jsonArg(rows)
	if err != nil {
		return err
	}
	st, err := s.prepared(ctx, `WITH r AS (
			SELECT * FROM jsonb_to_recordset($1::jsonb) AS r (id uuid, account_id bigint, attempt int, attempted_at timestamptz,
				status_code int, latency_ms int, error text, body text, outcome text, delay float8)
		), ins AS (
			INSERT INTO webhook_attempts (account_id, delivery_id, attempt, attempted_at, status_code, latency_ms, error, response_body)
			SELECT r.account_id, r.id, r.attempt, r.attempted_at, NULLIF(r.status_code, 0), r.latency_ms, r.error, r.body
			FROM r JOIN webhook_deliveries d ON d.account_id = r.account_id AND d.id = r.id
		)
		UPDATE webhook_deliveries d SET
			status           = CASE r.outcome WHEN 'retry' THEN 'pending' ELSE r.outcome END,
			next_attempt_at  = CASE WHEN r.outcome = 'retry' THEN COALESCE($2::timestamptz, now()) + r.delay * interval '1 second' ELSE d.next_attempt_at END,
			last_status_code = NULLIF(r.status_code, 0),
			last_error       = r.error,
			completed_at     = CASE WHEN r.outcome = 'retry' THEN NULL ELSE COALESCE($2::timestamptz, now()) END
		FROM r
		WHERE d.account_id = r.account_id AND d.id = r.id AND d.status = 'pending'
		  AND (d.attempts = r.attempt OR r.outcome = 'succeeded')`)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx, arg, dbNow(now))
	return translate(err)
}

// safeText makes s storable in a text column: valid UTF-8, no NUL bytes.
func safeText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return s
}

// EndpointHealth is what a batch of attempts says about one endpoint.
type EndpointHealth struct {
	AccountID  int64
	EndpointID int64
	// Gone: the endpoint answered 410; it is disabled at once.
	Gone bool
	// Recovered: an attempt succeeded; the failure streak ends (FailingSince then starts a
	// new one, from failures after that success).
	Recovered bool
	// FailingSince is the first failure of the batch not followed by a success; zero when none.
	FailingSince time.Time
}

// healthRow is one element of UpdateEndpointHealth's $1.
type healthRow struct {
	AccountID int64  `json:"account_id"`
	ID        int64  `json:"id"`
	Gone      bool   `json:"gone"`
	Recovered bool   `json:"recovered"`
	Failing   bool   `json:"failing"`
	Since     string `json:"since"` // the streak's first failure (meaningful when Failing)
}

// UpdateEndpointHealth applies a batch's verdicts to the endpoints: a 410 disables one
// ("gone"); a success clears its failure streak; a failure starts a streak if none runs; an
// endpoint whose streak started at or before disableBefore is disabled ("failing"). It fails
// when the statement fails.
func (s *Store) UpdateEndpointHealth(ctx context.Context, disableBefore time.Time, hs []EndpointHealth) error {
	if len(hs) == 0 {
		return nil
	}
	rows := make([]healthRow, len(hs))
	for i, h := range hs {
		rows[i] = healthRow{AccountID: h.AccountID, ID: h.EndpointID, Gone: h.Gone, Recovered: h.Recovered,
			Failing: !h.FailingSince.IsZero(), Since: h.FailingSince.UTC().Format(time.RFC3339Nano)}
	}
	arg, err := jsonArg(rows)
	if err != nil {
		return err
	}
	st, err := s.prepared(ctx, `WITH e AS (
			SELECT * FROM jsonb_to_recordset($1::jsonb)
				AS e (account_id bigint, id bigint, gone bool, recovered bool, failing bool, since timestamptz)
		), n AS (
			SELECT w.account_id, w.id, e.gone,
				CASE WHEN e.recovered AND e.failing THEN e.since
				     WHEN e.recovered THEN NULL
				     WHEN e.failing THEN COALESCE(w.failing_since, e.since)
				     ELSE w.failing_since END AS fs
			FROM webhook_endpoints w JOIN e ON w.account_id = e.account_id AND w.id = e.id
		)
		UPDATE webhook_endpoints w SET
			failing_since   = n.fs,
			enabled         = w.enabled AND NOT n.gone AND NOT COALESCE(n.fs <= $2, false),
			disabled_reason = CASE WHEN NOT w.enabled THEN w.disabled_reason
			                       WHEN n.gone THEN 'gone'
			                       WHEN COALESCE(n.fs <= $2, false) THEN 'failing'
			                       ELSE w.disabled_reason END
		FROM n
		WHERE w.account_id = n.account_id AND w.id = n.id
		  AND (w.failing_since IS DISTINCT FROM n.fs OR (w.enabled AND (n.gone OR COALESCE(n.fs <= $2, false))))`)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx, arg, disableBefore)
	return translate(err)
}
