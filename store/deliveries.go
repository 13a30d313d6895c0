package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
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

// DeliveriesChannel is the NOTIFY channel the fan-out trigger (and a redelivery) signals.
const DeliveriesChannel = "webhook_deliveries"

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

const claimSQL = `WITH c AS (
		SELECT d.id, w.enabled, w.url, w.secret, w.failing_since IS NOT NULL AS failing
		FROM webhook_deliveries d
		JOIN webhook_endpoints w ON w.account_id = d.account_id AND w.id = d.endpoint_id
		WHERE d.status = 'pending' AND d.next_attempt_at <= COALESCE($1::timestamptz, now())
		  AND d.endpoint_id <> ALL($4::bigint[])
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
		FROM c WHERE d.id = c.id
		RETURNING d.id, d.account_id, d.endpoint_id, d.attempts, d.event_id, d.next_attempt_at AS lease_until,
			c.enabled, c.url, c.secret, c.failing
	)
	SELECT u.id, u.account_id, u.endpoint_id, u.attempts, u.lease_until, u.url, u.secret, u.failing,
		e.id AS event_id, e.type, e.test, e.data, e.created_at
	FROM u JOIN events e ON e.account_id = u.account_id AND e.id = u.event_id
	WHERE u.enabled`

type claimRow struct {
	ID         string    `db:"id"`
	AccountID  int64     `db:"account_id"`
	EndpointID int64     `db:"endpoint_id"`
	Attempts   int       `db:"attempts"`
	LeaseUntil time.Time `db:"lease_until"`
	URL        string    `db:"url"`
	Secret     []byte    `db:"secret"`
	Failing    bool      `db:"failing"`
	EventID    string    `db:"event_id"`
	Type       string    `db:"type"`
	Test       bool      `db:"test"`
	Data       []byte    `db:"data"`
	CreatedAt  time.Time `db:"created_at"`
}

// ClaimDueDeliveries leases up to limit due deliveries (oldest due first) for lease, skipping
// rows other dispatchers hold (FOR UPDATE SKIP LOCKED) and deliveries to the endpoints in
// skip. Each claim counts as an attempt. now is the time to use; zero means the database's
// clock (production: one clock for every replica). Due deliveries whose endpoint is disabled
// are marked dead ("endpoint disabled") instead of being returned. It fails only when the
// statement fails; nothing is claimed then.
func (s *Store) ClaimDueDeliveries(ctx context.Context, now time.Time, limit int, lease time.Duration, skip []int64) ([]ClaimedDelivery, error) {
	st, err := s.prepared(ctx, claimSQL)
	if err != nil {
		return nil, err
	}
	if skip == nil {
		skip = []int64{}
	}
	var rows []claimRow
	if err := st.SelectContext(ctx, &rows, dbNow(now), limit, lease.Seconds(), pq.Int64Array(skip)); err != nil {
		return nil, translate(err)
	}
	out := make([]ClaimedDelivery, len(rows))
	for i, r := range rows {
		c := ClaimedDelivery{
			ID: r.ID, AccountID: r.AccountID, EndpointID: r.EndpointID, Attempt: r.Attempts,
			LeaseUntil: r.LeaseUntil, URL: r.URL, EndpointFailing: r.Failing,
			Event: Event{ID: r.EventID, AccountID: r.AccountID, Type: r.Type, Test: r.Test, Data: json.RawMessage(r.Data), CreatedAt: r.CreatedAt},
		}
		c.Secret, c.SecretErr = s.open(r.Secret, secretRow{table: "webhook_endpoints", account: r.AccountID, id: r.EndpointID})
		out[i] = c
	}
	return out, nil
}

// ReleaseDeliveries gives claims back unattempted: the attempt they counted is uncounted and
// the delivery is due at now (zero: the database's clock). A claim already taken over by
// another dispatcher, or finished, is left alone. A dispatcher calls it for claims it will not
// attempt (shutting down, or the lease would run out before the attempt could finish).
func (s *Store) ReleaseDeliveries(ctx context.Context, now time.Time, refs []ClaimRef) error {
	if len(refs) == 0 {
		return nil
	}
	ids, accounts, attempts := make([]string, len(refs)), make([]int64, len(refs)), make([]int64, len(refs))
	for i, r := range refs {
		ids[i], accounts[i], attempts[i] = r.DeliveryID, r.AccountID, int64(r.Attempt)
	}
	st, err := s.prepared(ctx, `UPDATE webhook_deliveries d
		SET attempts = d.attempts - 1, next_attempt_at = COALESCE($4::timestamptz, now())
		FROM unnest($1::uuid[], $2::bigint[], $3::int[]) AS r(id, account_id, attempt)
		WHERE d.account_id = r.account_id AND d.id = r.id AND d.status = 'pending' AND d.attempts = r.attempt`)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx, pq.StringArray(ids), pq.Int64Array(accounts), pq.Int64Array(attempts), dbNow(now))
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
	n := len(results)
	var (
		ids       = make([]string, n)
		accounts  = make([]int64, n)
		attempts  = make([]int64, n)
		times     = make([]string, n)
		codes     = make([]int64, n)
		latencies = make([]int64, n)
		errs      = make([]string, n)
		bodies    = make([]string, n)
		outcomes  = make([]string, n)
		delays    = make([]float64, n)
	)
	for i, r := range results {
		ids[i], accounts[i], attempts[i] = r.DeliveryID, r.AccountID, int64(r.Attempt)
		times[i] = r.AttemptedAt.UTC().Format(time.RFC3339Nano)
		codes[i] = int64(r.StatusCode)
		latencies[i] = r.Latency.Milliseconds()
		errs[i] = safeText(r.Error)
		bodies[i] = safeText(string(r.Response))
		outcomes[i] = string(r.Outcome)
		delays[i] = r.RetryIn.Seconds()
	}
	st, err := s.prepared(ctx, `WITH r AS (
			SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::int[], $4::timestamptz[], $5::int[], $6::int[],
				$7::text[], $8::text[], $9::text[], $10::float8[])
				AS r(id, account_id, attempt, attempted_at, status_code, latency_ms, error, body, outcome, delay)
		), ins AS (
			INSERT INTO webhook_attempts (account_id, delivery_id, attempt, attempted_at, status_code, latency_ms, error, response_body)
			SELECT r.account_id, r.id, r.attempt, r.attempted_at, NULLIF(r.status_code, 0), r.latency_ms, r.error, r.body
			FROM r JOIN webhook_deliveries d ON d.account_id = r.account_id AND d.id = r.id
		)
		UPDATE webhook_deliveries d SET
			status           = CASE r.outcome WHEN 'retry' THEN 'pending' ELSE r.outcome END,
			next_attempt_at  = CASE WHEN r.outcome = 'retry' THEN COALESCE($11::timestamptz, now()) + r.delay * interval '1 second' ELSE d.next_attempt_at END,
			last_status_code = NULLIF(r.status_code, 0),
			last_error       = r.error,
			completed_at     = CASE WHEN r.outcome = 'retry' THEN NULL ELSE COALESCE($11::timestamptz, now()) END
		FROM r
		WHERE d.account_id = r.account_id AND d.id = r.id AND d.status = 'pending'
		  AND (d.attempts = r.attempt OR r.outcome = 'succeeded')`)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx, pq.StringArray(ids), pq.Int64Array(accounts), pq.Int64Array(attempts), pq.StringArray(times),
		pq.Int64Array(codes), pq.Int64Array(latencies), pq.StringArray(errs), pq.StringArray(bodies), pq.StringArray(outcomes),
		pq.Float64Array(delays), dbNow(now))
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

// UpdateEndpointHealth applies a batch's verdicts to the endpoints: a 410 disables one
// ("gone"); a success clears its failure streak; a failure starts a streak if none runs; an
// endpoint whose streak started at or before disableBefore is disabled ("failing"). It fails
// when the statement fails.
func (s *Store) UpdateEndpointHealth(ctx context.Context, disableBefore time.Time, hs []EndpointHealth) error {
	if len(hs) == 0 {
		return nil
	}
	n := len(hs)
	accounts, ids := make([]int64, n), make([]int64, n)
	gone, recovered, failing := make([]bool, n), make([]bool, n), make([]bool, n)
	since := make([]string, n)
	for i, h := range hs {
		accounts[i], ids[i], gone[i], recovered[i] = h.AccountID, h.EndpointID, h.Gone, h.Recovered
		failing[i] = !h.FailingSince.IsZero()
		since[i] = h.FailingSince.UTC().Format(time.RFC3339Nano)
	}
	st, err := s.prepared(ctx, `WITH e AS (
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bool[], $4::bool[], $5::bool[], $6::timestamptz[])
				AS e(account_id, id, gone, recovered, failing, since)
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
			enabled         = w.enabled AND NOT n.gone AND NOT COALESCE(n.fs <= $7, false),
			disabled_reason = CASE WHEN NOT w.enabled THEN w.disabled_reason
			                       WHEN n.gone THEN 'gone'
			                       WHEN COALESCE(n.fs <= $7, false) THEN 'failing'
			                       ELSE w.disabled_reason END
		FROM n
		WHERE w.account_id = n.account_id AND w.id = n.id
		  AND (w.failing_since IS DISTINCT FROM n.fs OR (w.enabled AND (n.gone OR COALESCE(n.fs <= $7, false))))`)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx, pq.Int64Array(accounts), pq.Int64Array(ids), pq.BoolArray(gone), pq.BoolArray(recovered),
		pq.BoolArray(failing), pq.StringArray(since), disableBefore)
	return translate(err)
}

// Delivery is one event × endpoint in the request log, with its attempts.
type Delivery struct {
	ID             string     `db:"id" json:"id"`
	AccountID      int64      `db:"account_id" json:"account_id"`
	EventID        string     `db:"event_id" json:"event_id"`
	Event          string     `db:"event" json:"event"`
	EndpointID     int64      `db:"endpoint_id" json:"endpoint_id"`
	URL            string     `db:"url" json:"url"`
	Status         string     `db:"status" json:"status"`
	Attempts       int        `db:"attempts" json:"attempts"`
	NextAttemptAt  *time.Time `db:"next_attempt_at" json:"next_attempt_at,omitempty"`
	LastStatusCode *int       `db:"last_status_code" json:"last_status_code,omitempty"`
	LastError      string     `db:"last_error" json:"last_error,omitempty"`
	CreatedAt      time.Time  `db:"created_at" json:"created_at"`
	CompletedAt    *time.Time `db:"completed_at" json:"completed_at,omitempty"`
	// Log is the delivery's attempts, oldest first.
	Log []DeliveryAttempt `db:"-" json:"log"`
}

// DeliveryAttempt is one row of the request log.
type DeliveryAttempt struct {
	DeliveryID   string    `db:"delivery_id" json:"-"`
	Attempt      int       `db:"attempt" json:"attempt"`
	AttemptedAt  time.Time `db:"attempted_at" json:"attempted_at"`
	StatusCode   *int      `db:"status_code" json:"status_code"`
	LatencyMS    int       `db:"latency_ms" json:"latency_ms"`
	Error        string    `db:"error" json:"error,omitempty"`
	ResponseBody string    `db:"response_body" json:"response_body"`
}

const deliveryColumns = `d.id, d.account_id, d.event_id, e.type AS event, d.endpoint_id, w.url, d.status, d.attempts,
	CASE WHEN d.status = 'pending' THEN d.next_attempt_at END AS next_attempt_at,
	d.last_status_code, d.last_error, d.created_at, d.completed_at`

const deliveryFrom = ` FROM webhook_deliveries d
	JOIN events e ON e.account_id = d.account_id AND e.id = d.event_id
	JOIN webhook_endpoints w ON w.account_id = d.account_id AND w.id = d.endpoint_id`

// DeliveriesByAccount lists the account's deliveries, newest first, at most limit (1..1000),
// each with its attempt log. status filters: "" (all), "pending", "succeeded", "dead", or
// "failed" (dead, or pending after a failed attempt). An unknown status fails.
func (s *Store) DeliveriesByAccount(ctx context.Context, accountID int64, status string, limit int) ([]Delivery, error) {
	var cond string
	switch status {
	case "":
		cond = "true"
	case DeliveryPending, DeliverySucceeded, DeliveryDead:
		cond = "d.status = $3"
	case DeliveryFailed:
		cond = "(d.status = 'dead' OR (d.status = 'pending' AND d.last_error <> '')) AND $3 <> ''"
	default:
		return nil, fmt.Errorf("unknown delivery status %q (want pending, succeeded, dead or failed)", status)
	}
	if limit < 1 || limit > 1000 {
		limit = 50
	}
	ds := []Delivery{}
	q := `SELECT ` + deliveryColumns + deliveryFrom + ` WHERE d.account_id = $1 AND ` + cond + `
		ORDER BY d.created_at DESC, d.id LIMIT $2`
	args := []any{accountID, limit}
	if status != "" {
		args = append(args, status)
	}
	if err := s.db.SelectContext(ctx, &ds, q, args...); err != nil {
		return nil, translate(err)
	}
	if err := s.attachLog(ctx, accountID, ds); err != nil {
		return nil, err
	}
	return ds, nil
}

// DeliveryByID returns one of the account's deliveries with its attempt log, or ErrNotFound.
func (s *Store) DeliveryByID(ctx context.Context, accountID int64, deliveryID string) (Delivery, error) {
	var d Delivery
	if !isUUID(deliveryID) {
		return d, ErrNotFound
	}
	if err := s.db.GetContext(ctx, &d, `SELECT `+deliveryColumns+deliveryFrom+` WHERE d.account_id = $1 AND d.id = $2`,
		accountID, deliveryID); err != nil {
		return d, translate(err)
	}
	ds := []Delivery{d}
	if err := s.attachLog(ctx, accountID, ds); err != nil {
		return d, err
	}
	return ds[0], nil
}

// attachLog reads the attempts of ds in one query.
func (s *Store) attachLog(ctx context.Context, accountID int64, ds []Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	ids := make([]string, len(ds))
	idx := make(map[string]int, len(ds))
	for i, d := range ds {
		ids[i], idx[d.ID] = d.ID, i
		ds[i].Log = []DeliveryAttempt{}
	}
	var as []DeliveryAttempt
	if err := s.db.SelectContext(ctx, &as, `SELECT delivery_id, attempt, attempted_at, status_code, latency_ms, error, response_body
		FROM webhook_attempts WHERE account_id = $1 AND delivery_id = ANY($2::uuid[]) ORDER BY attempted_at, id`,
		accountID, pq.StringArray(ids)); err != nil {
		return translate(err)
	}
	for _, a := range as {
		i := idx[a.DeliveryID]
		ds[i].Log = append(ds[i].Log, a)
	}
	return nil
}

// DeliveryAccount returns the account that owns a delivery: the operator's entry point (the
// admin commands name a delivery by id alone). ErrNotFound when there is no such delivery.
func (s *Store) DeliveryAccount(ctx context.Context, deliveryID string) (int64, error) {
	var accountID int64
	if !isUUID(deliveryID) {
		return 0, ErrNotFound
	}
	err := s.db.GetContext(ctx, &accountID, `SELECT account_id FROM webhook_deliveries WHERE id = $1`, deliveryID)
	return accountID, translate(err)
}

// Redeliver makes one of the account's deliveries due now, whatever its status, and wakes the
// dispatchers. A succeeded or dead delivery becomes pending again and keeps its attempt count:
// the redelivery is attempt attempts+1, and a delivery that had used all its attempts is dead
// again after one more failure. It returns ErrNotFound for an unknown delivery,
// ErrEndpointDisabled when its endpoint is disabled (enable it first), and ErrInFlight when an
// attempt is being made right now.
func (s *Store) Redeliver(ctx context.Context, accountID int64, deliveryID string) (Delivery, error) {
	if !isUUID(deliveryID) {
		return Delivery{}, ErrNotFound
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return Delivery{}, translate(err)
	}
	defer tx.Rollback()
	var row struct {
		Enabled  bool `db:"enabled"`
		InFlight bool `db:"in_flight"`
	}
	err = tx.GetContext(ctx, &row, `SELECT w.enabled,
			d.status = 'pending' AND d.attempts > 0 AND d.next_attempt_at > now()
			AND NOT EXISTS (SELECT 1 FROM webhook_attempts a
				WHERE a.account_id = d.account_id AND a.delivery_id = d.id AND a.attempt = d.attempts) AS in_flight
		FROM webhook_deliveries d JOIN webhook_endpoints w ON w.account_id = d.account_id AND w.id = d.endpoint_id
		WHERE d.account_id = $1 AND d.id = $2
		FOR UPDATE OF d`, accountID, deliveryID)
	if err != nil {
		return Delivery{}, translate(err)
	}
	switch {
	case !row.Enabled:
		return Delivery{}, ErrEndpointDisabled
	case row.InFlight:
		return Delivery{}, ErrInFlight
	}
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), completed_at = NULL
		WHERE account_id = $1 AND id = $2`, accountID, deliveryID); err != nil {
		return Delivery{}, translate(err)
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_notify($1, '')`, DeliveriesChannel); err != nil {
		return Delivery{}, translate(err)
	}
	if err := tx.Commit(); err != nil {
		return Delivery{}, translate(err)
	}
	return s.DeliveryByID(ctx, accountID, deliveryID)
}

// isUUID reports whether s has the textual shape of a UUID, so a malformed id is "not found"
// rather than a driver error.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// DeliveryListener wakes dispatchers when deliveries become due: it LISTENs on
// DeliveriesChannel over a dedicated connection (outside the pool) and coalesces the
// notifications into a channel of capacity one. After a reconnect, when notifications may have
// been missed, it wakes too.
type DeliveryListener struct {
	l    *pq.Listener
	c    chan struct{}
	done chan struct{}
	once sync.Once
}

// ListenDeliveries starts listening with the DSN. It does not wait for the connection: it is
// made, and remade after a loss, in the background, and report (which may be nil) hears of
// every failure. It cannot fail.
func ListenDeliveries(dsn string, report func(error)) *DeliveryListener {
	l := &DeliveryListener{c: make(chan struct{}, 1), done: make(chan struct{})}
	l.l = pq.NewListener(dsn, 100*time.Millisecond, 10*time.Second, func(ev pq.ListenerEventType, err error) {
		if err != nil && report != nil {
			report(fmt.Errorf("webhook listener %s: %w", ev, err))
		}
	})
	go func() {
		// Listen blocks until the connection is up (or Close); polling covers the wait.
		if err := l.l.Listen(DeliveriesChannel); err != nil && report != nil && !l.closed() {
			report(fmt.Errorf("LISTEN %s: %w", DeliveriesChannel, err))
		}
		l.wake() // anything committed before LISTEN took effect
	}()
	go func() {
		for {
			select {
			case <-l.done:
				return
			case _, ok := <-l.l.Notify:
				if !ok {
					return
				}
				// A nil notification follows a reconnect: rescan, like any other wake-up.
				l.wake()
			}
		}
	}()
	return l
}

func (l *DeliveryListener) closed() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

func (l *DeliveryListener) wake() {
	select {
	case l.c <- struct{}{}:
	default:
	}
}

// C receives a value when deliveries may have become due.
func (l *DeliveryListener) C() <-chan struct{} { return l.c }

// Close stops listening and closes the connection; it is idempotent and cannot fail.
func (l *DeliveryListener) Close() {
	l.once.Do(func() {
		close(l.done)
		l.l.Close()
	})
}

// Retention: batched deletes of what is past keeping. These are maintenance statements across
// all accounts, run by the retention service.

// DeleteWebhookAttemptsBefore deletes up to limit attempt-log rows made before cutoff and
// returns how many it deleted. It fails when the statement fails.
func (s *Store) DeleteWebhookAttemptsBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return s.execCount(ctx, `DELETE FROM webhook_attempts WHERE id IN (
		SELECT id FROM webhook_attempts WHERE attempted_at < $1 ORDER BY attempted_at LIMIT $2)`, cutoff, limit)
}

// DeleteEventsBefore deletes up to limit events created before cutoff that have no pending
// delivery and no delivery completed at or after cutoff, together with their deliveries and
// attempts (the foreign keys cascade), and returns how many events it deleted. It fails when
// the statement fails.
func (s *Store) DeleteEventsBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return s.execCount(ctx, `DELETE FROM events WHERE id IN (
		SELECT e.id FROM events e
		WHERE e.created_at < $1
		  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
			WHERE d.event_id = e.id AND (d.status = 'pending' OR d.completed_at >= $1))
		ORDER BY e.created_at LIMIT $2)`, cutoff, limit)
}

// DeletePlatformWebhooksBefore deletes up to limit raw platform webhooks received before
// cutoff and returns how many it deleted. It fails when the statement fails.
func (s *Store) DeletePlatformWebhooksBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return s.execCount(ctx, `DELETE FROM platform_webhooks WHERE id IN (
		SELECT id FROM platform_webhooks WHERE received_at < $1 ORDER BY received_at LIMIT $2)`, cutoff, limit)
}

func (s *Store) execCount(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}
