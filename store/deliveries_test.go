package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// whFixture is an account with one endpoint on a fresh database.
type whFixture struct {
	s        *store.Store
	account  store.Account
	endpoint store.WebhookEndpoint
}

const whSecret = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

func newWHFixture(t *testing.T) *whFixture {
	t.Helper()
	s := storetest.New(t)
	return newWHFixtureOn(t, s, "acme")
}

func newWHFixtureOn(t *testing.T, s *store.Store, name string) *whFixture {
	t.Helper()
	a := whAccount(t, s, name)
	w, err := s.CreateWebhookEndpoint(context.Background(), a.ID, "https://example.com/"+name, whSecret)
	if err != nil {
		t.Fatal(err)
	}
	return &whFixture{s: s, account: a, endpoint: w}
}

// event inserts an event for the fixture's account and returns its id.
func (f *whFixture) event(t *testing.T, typ string) string {
	t.Helper()
	var id string
	if err := f.s.DB().GetContext(context.Background(), &id, `INSERT INTO events (account_id, type, data)
		VALUES ($1, $2, '{"contact_id": 1, "mobile": "15550001111", "name": "Ana"}') RETURNING id`, f.account.ID, typ); err != nil {
		t.Fatal(err)
	}
	return id
}

// events inserts n events in one statement.
func (f *whFixture) events(t *testing.T, n int) {
	t.Helper()
	if _, err := f.s.DB().ExecContext(context.Background(), `INSERT INTO events (account_id, type, data)
		SELECT $1, 'contact.created', jsonb_build_object('contact_id', g, 'mobile', '1555000' || g, 'name', 'n')
		FROM generate_series(1, $2) g`, f.account.ID, n); err != nil {
		t.Fatal(err)
	}
}

func (f *whFixture) claim(t *testing.T, now time.Time, limit int) []store.ClaimedDelivery {
	t.Helper()
	cs, err := f.s.ClaimDueDeliveries(context.Background(), now, limit, 30*time.Second, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

type deliveryRow struct {
	Status        string    `db:"status"`
	Attempts      int       `db:"attempts"`
	NextAttemptAt time.Time `db:"next_attempt_at"`
	LastStatus    *int      `db:"last_status_code"`
	LastError     string    `db:"last_error"`
	Completed     bool      `db:"completed"`
}

func (f *whFixture) delivery(t *testing.T, id string) deliveryRow {
	t.Helper()
	var r deliveryRow
	if err := f.s.DB().GetContext(context.Background(), &r, `SELECT status, attempts, next_attempt_at, last_status_code,
		last_error, completed_at IS NOT NULL AS completed FROM webhook_deliveries WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *whFixture) endpointNow(t *testing.T) store.WebhookEndpoint {
	t.Helper()
	w, err := f.s.WebhookEndpointByID(context.Background(), f.account.ID, f.endpoint.ID)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// moreEndpoints gives the fixture's account a second enabled endpoint, which it returns, and a
// disabled one.
func (f *whFixture) moreEndpoints(t *testing.T) store.WebhookEndpoint {
	t.Helper()
	ctx := context.Background()
	second, err := f.s.CreateWebhookEndpoint(ctx, f.account.ID, "https://example.org/two", whSecret)
	if err != nil {
		t.Fatal(err)
	}
	off, err := f.s.CreateWebhookEndpoint(ctx, f.account.ID, "https://example.org/off", whSecret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SetWebhookEndpointEnabled(ctx, f.account.ID, off.ID, false, store.DisabledOperator); err != nil {
		t.Fatal(err)
	}
	return second
}

func TestFanOutAndClaim(t *testing.T) {
	ctx := context.Background()
	f := newWHFixture(t)
	second := f.moreEndpoints(t)
	other := newWHFixtureOn(t, f.s, "other")

	evID := f.event(t, "contact.created")
	now := time.Now().Add(time.Second)
	cs := f.claim(t, now, 10)
	if len(cs) != 2 {
		t.Fatalf("claimed %d deliveries, want one per enabled endpoint of the account: %+v", len(cs), cs)
	}
	seen := map[int64]bool{}
	for _, c := range cs {
		seen[c.EndpointID] = true
		if c.Event.ID != evID || c.Event.Type != "contact.created" || c.AccountID != f.account.ID || c.Attempt != 1 {
			t.Fatalf("claim %+v", c)
		}
		if c.Secret != whSecret || c.SecretErr != nil {
			t.Fatalf("secret %q %v", c.Secret, c.SecretErr)
		}
		if !strings.Contains(string(c.Event.Data), `"mobile": "15550001111"`) {
			t.Fatalf("data %s", c.Event.Data)
		}
		if d := c.LeaseUntil.Sub(now); d < 29*time.Second || d > 31*time.Second {
			t.Fatalf("lease until %v (now %v)", c.LeaseUntil, now)
		}
		if c.EndpointID == other.endpoint.ID {
			t.Fatal("another account's endpoint got the event")
		}
	}
	if !seen[f.endpoint.ID] || !seen[second.ID] {
		t.Fatalf("endpoints %v", seen)
	}

	// Leased: nothing is due until the lease runs out; then the same deliveries are rescued,
	// as attempt 2.
	if cs := f.claim(t, now.Add(29*time.Second), 10); len(cs) != 0 {
		t.Fatalf("claimed a leased delivery: %+v", cs)
	}
	again := f.claim(t, now.Add(31*time.Second), 10)
	if len(again) != 2 || again[0].Attempt != 2 {
		t.Fatalf("rescue: %+v", again)
	}

	// The skip list leaves an endpoint out.
	f.event(t, "message.sent")
	cs, err := f.s.ClaimDueDeliveries(ctx, now, 10, time.Minute, []int64{second.ID}, nil)
	if err != nil || len(cs) != 1 || cs[0].EndpointID != f.endpoint.ID {
		t.Fatalf("skip: %v %+v", err, cs)
	}
}

// A statement that inserts several events, for accounts with and without enabled endpoints,
// makes exactly one delivery per event and enabled endpoint of its account (the fan-out runs
// once per statement, migration 000030), due when its event was created.
func TestFanOutPerStatement(t *testing.T) {
	ctx := context.Background()
	f := newWHFixture(t)
	second := f.moreEndpoints(t)
	other := newWHFixtureOn(t, f.s, "other")
	quiet := whAccount(t, f.s, "quiet") // no endpoint
	if _, err := f.s.DB().ExecContext(ctx, `INSERT INTO events (account_id, type, data, created_at)
		SELECT (ARRAY[$1, $2, $3]::bigint[])[1 + g % 3], 'contact.created', jsonb_build_object('n', g),
			clock_timestamp() + g * interval '1 ms'
		FROM generate_series(1, 9) g`, f.account.ID, other.account.ID, quiet.ID); err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Account  int64     `db:"account_id"`
		Endpoint int64     `db:"endpoint_id"`
		Event    string    `db:"event_id"`
		Due      time.Time `db:"next_attempt_at"`
		Created  time.Time `db:"event_created"`
		EvAcct   int64     `db:"event_account"`
	}
	if err := f.s.DB().SelectContext(ctx, &rows, `SELECT d.account_id, d.endpoint_id, d.event_id, d.next_attempt_at,
			e.created_at AS event_created, e.account_id AS event_account
		FROM webhook_deliveries d JOIN events e ON e.id = d.event_id ORDER BY d.event_id, d.endpoint_id`); err != nil {
		t.Fatal(err)
	}
	want := map[int64]int{f.endpoint.ID: 3, second.ID: 3, other.endpoint.ID: 3}
	got := map[int64]int{}
	for _, r := range rows {
		got[r.Endpoint]++
		if r.Account != r.EvAcct || !r.Due.Equal(r.Created) {
			t.Errorf("delivery %+v: not its event's account or time", r)
		}
	}
	if len(rows) != 9 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("deliveries per endpoint %v (%d rows), want %v", got, len(rows), want)
	}
	var pairs int
	if err := f.s.DB().GetContext(ctx, &pairs, `SELECT count(DISTINCT (event_id, endpoint_id)) FROM webhook_deliveries`); err != nil {
		t.Fatal(err)
	}
	if pairs != 9 {
		t.Fatalf("%d distinct event and endpoint pairs, want 9", pairs)
	}
}

func TestClaimIsExclusiveUnderConcurrency(t *testing.T) {
	f := newWHFixture(t)
	const n = 500
	f.events(t, n)
	now := time.Now().Add(time.Second)
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				cs, err := f.s.ClaimDueDeliveries(context.Background(), now, 10, time.Minute, nil, nil)
				if err != nil {
					t.Error(err)
					return
				}
				if len(cs) == 0 {
					return
				}
				mu.Lock()
				for _, c := range cs {
					got[c.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(got) != n {
		t.Fatalf("claimed %d distinct deliveries, want %d", len(got), n)
	}
	for id, k := range got {
		if k != 1 {
			t.Fatalf("delivery %s claimed %d times", id, k)
		}
	}
}

func TestClaimKillsDeliveriesOfDisabledEndpoints(t *testing.T) {
	ctx := context.Background()
	f := newWHFixture(t)
	f.event(t, "contact.created")
	if _, err := f.s.SetWebhookEndpointEnabled(ctx, f.account.ID, f.endpoint.ID, false, store.DisabledOperator); err != nil {
		t.Fatal(err)
	}
	if cs := f.claim(t, time.Now().Add(time.Second), 10); len(cs) != 0 {
		t.Fatalf("claimed for a disabled endpoint: %+v", cs)
	}
	ds, err := f.s.DeliveriesByAccount(ctx, f.account.ID, store.DeliveryDead, 10)
	if err != nil || len(ds) != 1 || ds[0].LastError != "endpoint disabled" || ds[0].Attempts != 0 {
		t.Fatalf("dead: %v %+v", err, ds)
	}
	// A disabled endpoint gets no deliveries for new events.
	f.event(t, "contact.created")
	if all, _ := f.s.DeliveriesByAccount(ctx, f.account.ID, "", 10); len(all) != 1 {
		t.Fatalf("deliveries %+v", all)
	}
}

func TestRecordAttempts(t *testing.T) {
	ctx := context.Background()
	f := newWHFixture(t)
	for range 4 {
		f.event(t, "contact.created")
	}
	now := time.Now().Add(time.Second).Truncate(time.Millisecond)
	cs := f.claim(t, now, 10)
	if len(cs) != 4 {
		t.Fatalf("claimed %d", len(cs))
	}
	at := now.Add(100 * time.Millisecond)
	results := []store.AttemptResult{
		{ClaimRef: cs[0].Ref(), AttemptedAt: at, StatusCode: 204, Latency: 12 * time.Millisecond, Outcome: store.OutcomeSucceeded},
		{ClaimRef: cs[1].Ref(), AttemptedAt: at, StatusCode: 500, Latency: 30 * time.Millisecond, Error: "HTTP 500",
			Response: []byte("oops\x00\xff" + strings.Repeat("x", 100)), Outcome: store.OutcomeRetry, RetryIn: 5 * time.Second},
		{ClaimRef: cs[2].Ref(), AttemptedAt: at, Error: "dial tcp: refused", Outcome: store.OutcomeDead},
	}
	if err := f.s.RecordAttempts(ctx, at, results); err != nil {
		t.Fatal(err)
	}
	if r := f.delivery(t, cs[0].ID); r.Status != "succeeded" || !r.Completed || r.LastStatus == nil || *r.LastStatus != 204 {
		t.Fatalf("succeeded: %+v", r)
	}
	r := f.delivery(t, cs[1].ID)
	if r.Status != "pending" || r.Completed || r.LastError != "HTTP 500" || !r.NextAttemptAt.Equal(at.Add(5*time.Second)) {
		t.Fatalf("retry: %+v (want next at %v)", r, at.Add(5*time.Second))
	}
	if r := f.delivery(t, cs[2].ID); r.Status != "dead" || !r.Completed || r.LastStatus != nil {
		t.Fatalf("dead: %+v", r)
	}
	// The unrecorded claim is still leased.
	if r := f.delivery(t, cs[3].ID); r.Status != "pending" || r.Attempts != 1 {
		t.Fatalf("in flight: %+v", r)
	}

	d, err := f.s.DeliveryByID(ctx, f.account.ID, cs[1].ID)
	if err != nil || len(d.Log) != 1 {
		t.Fatalf("log: %v %+v", err, d)
	}
	a := d.Log[0]
	if a.Attempt != 1 || a.StatusCode == nil || *a.StatusCode != 500 || a.LatencyMS != 30 || !a.AttemptedAt.Equal(at) ||
		!strings.HasPrefix(a.ResponseBody, "oops\uFFFDxxx") {
		t.Fatalf("attempt %+v", a)
	}

	// A late result of a claim another dispatcher has since taken over is logged but changes
	// nothing; a late success still completes the delivery.
	later := at.Add(6 * time.Second)
	retaken := f.claim(t, later, 10)
	if len(retaken) != 1 || retaken[0].ID != cs[1].ID || retaken[0].Attempt != 2 {
		t.Fatalf("retaken %+v", retaken)
	}
	stale := store.AttemptResult{ClaimRef: cs[1].Ref(), AttemptedAt: later, Error: "late", Outcome: store.OutcomeDead}
	if err := f.s.RecordAttempts(ctx, later, []store.AttemptResult{stale}); err != nil {
		t.Fatal(err)
	}
	if r := f.delivery(t, cs[1].ID); r.Status != "pending" || r.Attempts != 2 {
		t.Fatalf("a stale failure changed the delivery: %+v", r)
	}
	staleOK := store.AttemptResult{ClaimRef: cs[1].Ref(), AttemptedAt: later, StatusCode: 200, Outcome: store.OutcomeSucceeded}
	if err := f.s.RecordAttempts(ctx, later, []store.AttemptResult{staleOK}); err != nil {
		t.Fatal(err)
	}
	if r := f.delivery(t, cs[1].ID); r.Status != "succeeded" {
		t.Fatalf("a late success did not complete the delivery: %+v", r)
	}

	// A result for a delivery deleted meanwhile (its endpoint was deleted) does not fail the
	// batch.
	g := newWHFixtureOn(t, f.s, "gone")
	g.event(t, "contact.created")
	gc := g.claim(t, later, 10)
	if _, err := f.s.DeleteWebhookEndpoint(ctx, g.account.ID, g.endpoint.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.s.RecordAttempts(ctx, later, []store.AttemptResult{
		{ClaimRef: gc[0].Ref(), AttemptedAt: later, StatusCode: 200, Outcome: store.OutcomeSucceeded},
		{ClaimRef: cs[3].Ref(), AttemptedAt: later, StatusCode: 200, Outcome: store.OutcomeSucceeded},
	}); err != nil {
		t.Fatal(err)
	}
	if r := f.delivery(t, cs[3].ID); r.Status != "succeeded" {
		t.Fatalf("%+v", r)
	}
}

func TestReleaseDeliveries(t *testing.T) {
	ctx := context.Background()
	f := newWHFixture(t)
	f.event(t, "contact.created")
	now := time.Now().Add(time.Second).Truncate(time.Millisecond)
	cs := f.claim(t, now, 10)
	if err := f.s.ReleaseDeliveries(ctx, now, []store.ClaimRef{cs[0].Ref()}); err != nil {
		t.Fatal(err)
	}
	if r := f.delivery(t, cs[0].ID); r.Attempts != 0 || !r.NextAttemptAt.Equal(now) {
		t.Fatalf("released: %+v", r)
	}
	again := f.claim(t, now, 10)
	if len(again) != 1 || again[0].Attempt != 1 {
		t.Fatalf("reclaim: %+v", again)
	}
	// Releasing a stale claim (attempt 1 while the row is at attempt 2) does nothing.
	later := now.Add(time.Minute)
	third := f.claim(t, later, 10)
	if err := f.s.ReleaseDeliveries(ctx, later, []store.ClaimRef{again[0].Ref()}); err != nil {
		t.Fatal(err)
	}
	if r := f.delivery(t, third[0].ID); r.Attempts != 2 {
		t.Fatalf("stale release changed the row: %+v", r)
	}
}

func TestUpdateEndpointHealth(t *testing.T) {
	ctx := context.Background()
	f := newWHFixture(t)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := store.EndpointHealth{AccountID: f.account.ID, EndpointID: f.endpoint.ID}
	cutoff := func(now time.Time) time.Time { return now.Add(-5 * 24 * time.Hour) }

	fail := h
	fail.FailingSince = t0
	if err := f.s.UpdateEndpointHealth(ctx, cutoff(t0), []store.EndpointHealth{fail}); err != nil {
		t.Fatal(err)
	}
	if w := f.endpointNow(t); w.FailingSince == nil || !w.FailingSince.Equal(t0) || !w.Enabled {
		t.Fatalf("streak start: %+v", w)
	}
	// A later failure keeps the streak's start.
	fail.FailingSince = t0.Add(time.Hour)
	if err := f.s.UpdateEndpointHealth(ctx, cutoff(t0.Add(time.Hour)), []store.EndpointHealth{fail}); err != nil {
		t.Fatal(err)
	}
	if w := f.endpointNow(t); !w.FailingSince.Equal(t0) {
		t.Fatalf("streak moved: %+v", w)
	}
	// A success ends it.
	ok := h
	ok.Recovered = true
	if err := f.s.UpdateEndpointHealth(ctx, cutoff(t0), []store.EndpointHealth{ok}); err != nil {
		t.Fatal(err)
	}
	if w := f.endpointNow(t); w.FailingSince != nil {
		t.Fatalf("recovered: %+v", w)
	}
	// Five days of failures disable it.
	fail.FailingSince = t0
	f.s.UpdateEndpointHealth(ctx, cutoff(t0), []store.EndpointHealth{fail})
	late := t0.Add(5*24*time.Hour + time.Second)
	fail.FailingSince = late
	if err := f.s.UpdateEndpointHealth(ctx, cutoff(late), []store.EndpointHealth{fail}); err != nil {
		t.Fatal(err)
	}
	if w := f.endpointNow(t); w.Enabled || w.DisabledReason != store.DisabledFailing {
		t.Fatalf("not disabled after 5 days: %+v", w)
	}

	// 410 disables at once.
	g := newWHFixtureOn(t, f.s, "gone")
	gone := store.EndpointHealth{AccountID: g.account.ID, EndpointID: g.endpoint.ID, Gone: true, FailingSince: t0}
	if err := f.s.UpdateEndpointHealth(ctx, cutoff(t0), []store.EndpointHealth{gone}); err != nil {
		t.Fatal(err)
	}
	if w := g.endpointNow(t); w.Enabled || w.DisabledReason != store.DisabledGone {
		t.Fatalf("410: %+v", w)
	}
	// The health of an endpoint is written only under its own account.
	wrong := store.EndpointHealth{AccountID: f.account.ID, EndpointID: g.endpoint.ID, Recovered: true}
	f.s.UpdateEndpointHealth(ctx, cutoff(t0), []store.EndpointHealth{wrong})
	if w := g.endpointNow(t); w.FailingSince == nil {
		t.Fatal("health written across accounts")
	}
}
