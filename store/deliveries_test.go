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
