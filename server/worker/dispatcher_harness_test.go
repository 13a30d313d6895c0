package worker

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"gateway/platform/eventhook"
	"gateway/store"
	"gateway/store/storetest"
)

// The dispatcher tests' harness: a fresh database with fake clock (whEnv), events and
// endpoints, dispatchers, and a loopback receiver that verifies each delivery independently.
// The tests are in dispatcher_test.go, the benchmarks in dispatcher_bench_test.go.

var updateWebhookGolden = flag.Bool("update-webhook-golden", false, "rewrite server/testdata/webhook_deliveries.golden")

// whEnv is a fresh database with a store, and a fake clock for the dispatchers that want one.
type whEnv struct {
	t     testing.TB
	dsn   string
	st    *store.Store
	clock *fakeClock
}

func newWHEnv(t testing.TB) *whEnv {
	t.Helper()
	dsn := storetest.DSN(t)
	db, err := store.OpenPool(context.Background(), dsn, store.PoolOptions{MaxConns: 16, Unprepared: storetest.Pooled()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.New(db, storetest.TestKey)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(); db.Close() })
	return &whEnv{t: t, dsn: storetest.DirectDSN(dsn), st: st, clock: &fakeClock{now: time.Now().Add(time.Second).Truncate(time.Millisecond)}}
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (e *whEnv) account(name string) store.Account {
	e.t.Helper()
	a, err := e.st.CreateAccount(context.Background(), name, name+"@example.com", fmt.Sprintf("%s-%d", name, time.Now().UnixNano()))
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// endpoint registers rcv for the account and tells rcv its secret.
func (e *whEnv) endpoint(accountID int64, rcv *receiver) store.WebhookEndpoint {
	e.t.Helper()
	return e.endpointURL(accountID, rcv.URL(), rcv)
}

func (e *whEnv) endpointURL(accountID int64, url string, rcv *receiver) store.WebhookEndpoint {
	e.t.Helper()
	secret, err := eventhook.NewSecret()
	if err != nil {
		e.t.Fatal(err)
	}
	w, err := e.st.CreateWebhookEndpoint(context.Background(), accountID, url, secret)
	if err != nil {
		e.t.Fatal(err)
	}
	if rcv != nil {
		rcv.setSecret(secret)
	}
	return w
}

// Event data as the messaging flow writes it (openapi.yaml's *Data schemas).
var eventData = map[string]string{
	"message.received": `{"message_id": 1002, "conversation_id": 77, "contact_id": 501, "from": "5511987654321", "name": "Ana Souza", "type": "text", "text": "Is it in blue?"}`,
	"message.sent":     `{"message_id": 1001, "chat_message_id": "wamid.HBgLMTU1NTEyMzQ1NjcVAgAR", "conversation_id": 77, "contact_id": 501, "destination": "15551234567", "template": "order_confirmation", "source": "api"}`,
	"message.status":   `{"message_id": 1001, "chat_message_id": "wamid.HBgLMTU1NTEyMzQ1NjcVAgAR", "conversation_id": 77, "status": "delivered", "timestamp": "2026-11-21T10:00:02Z"}`,
	"contact.created":  `{"contact_id": 501, "mobile": "15551234567", "name": "Ana Souza"}`,
}

// eventSchemas maps an event name to its body schema in openapi.yaml.
var eventSchemas = map[string]string{
	"message.received": "MessageReceivedEvent",
	"message.sent":     "MessageSentEvent",
	"message.status":   "MessageStatusEvent",
	"contact.created":  "ContactCreatedEvent",
}

func (e *whEnv) event(accountID int64, typ string, test bool) string {
	e.t.Helper()
	var id string
	if err := e.st.DB().GetContext(context.Background(), &id, `INSERT INTO events (account_id, type, test, data)
		VALUES ($1, $2, $3, $4) RETURNING id`, accountID, typ, test, eventData[typ]); err != nil {
		e.t.Fatal(err)
	}
	e.notify()
	return id
}

// notify wakes the started dispatchers as a writer outside their process does (the harness
// writes events by hand, not through the store's writers, which wake them directly).
func (e *whEnv) notify() {
	e.t.Helper()
	if _, err := e.st.DB().Exec(`SELECT pg_notify($1, '')`, store.DeliveriesChannel); err != nil {
		e.t.Fatal(err)
	}
}

// events inserts n contact.created events for the account in one statement.
func (e *whEnv) events(accountID int64, n int) {
	e.t.Helper()
	if _, err := e.st.DB().ExecContext(context.Background(), `INSERT INTO events (account_id, type, data)
		SELECT $1, 'contact.created', jsonb_build_object('contact_id', g, 'mobile', (15550000000 + g)::text, 'name', 'Contact ' || g)
		FROM generate_series(1, $2) g`, accountID, n); err != nil {
		e.t.Fatal(err)
	}
	e.notify()
}

type deliveryState struct {
	ID         string    `db:"id"`
	EventID    string    `db:"event_id"`
	EndpointID int64     `db:"endpoint_id"`
	Status     string    `db:"status"`
	Attempts   int       `db:"attempts"`
	Next       time.Time `db:"next_attempt_at"`
	LastError  string    `db:"last_error"`
}

func (e *whEnv) deliveries(accountID int64) []deliveryState {
	e.t.Helper()
	var ds []deliveryState
	if err := e.st.DB().SelectContext(context.Background(), &ds, `SELECT id, event_id, endpoint_id, status, attempts,
		next_attempt_at, last_error FROM webhook_deliveries WHERE account_id = $1 ORDER BY created_at, id`, accountID); err != nil {
		e.t.Fatal(err)
	}
	return ds
}

func (e *whEnv) endpointState(accountID, id int64) store.WebhookEndpoint {
	e.t.Helper()
	ws, err := e.st.WebhookEndpointsByAccount(context.Background(), accountID)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, w := range ws {
		if w.ID == id {
			return w
		}
	}
	e.t.Fatalf("account %d has no endpoint %d", accountID, id)
	return store.WebhookEndpoint{}
}

func (e *whEnv) log(accountID int64, deliveryID string) []store.DeliveryAttempt {
	e.t.Helper()
	d, err := e.st.DeliveryByID(context.Background(), accountID, deliveryID)
	if err != nil {
		e.t.Fatal(err)
	}
	return d.Log
}

// dispatcher returns a started dispatcher over the env's store, stopped at cleanup. A manual
// one is not started, so it has no claim loop (the test drives it with step, RunOnce) and uses the fake clock and a jitter
// of zero (rnd 0.5: every delay is its schedule's base).
func (e *whEnv) dispatcher(cfg DispatcherConfig, manual bool) *Dispatcher {
	e.t.Helper()
	if cfg.Sender == nil {
		cfg.Sender = eventhook.NewSender(eventhook.SenderConfig{AllowPrivate: true, Timeout: cfg.SendTimeout, MaxConnsPerHost: -1})
	}
	if cfg.Logger == nil {
		cfg.Logger = testLogger(e.t)
	}
	if manual {
		cfg.Clock = e.clock.Now
		cfg.Rand = func() float64 { return 0.5 }
	} else if cfg.DSN == "" {
		cfg.DSN = e.dsn
	}
	d := NewDispatcher(e.st, cfg)
	if !manual {
		if err := d.Start(context.Background()); err != nil {
			e.t.Fatal(err)
		}
	}
	e.t.Cleanup(d.Stop)
	return d
}

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(tbWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type tbWriter struct{ t testing.TB }

func (w tbWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// step claims one batch and waits until every claimed delivery's result is written. It
// returns how many it claimed.
func step(t testing.TB, d *Dispatcher) int {
	t.Helper()
	n, err := d.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// received is one request a receiver got.
type received struct {
	Header http.Header
	Body   []byte
	At     time.Time
	Err    error // what verification found wrong
}

// receiver is a webhook endpoint on loopback that verifies every delivery independently of
// platform/eventhook and answers what its script says.
type receiver struct {
	t      testing.TB
	srv    *httptest.Server
	conns  atomic.Int64
	mu     sync.Mutex
	secret string
	reqs   []received
	// answer decides the response to the n-th request (0-based); nil answers 204.
	answer func(n int, r received) (status int, body string)
}

func newReceiver(t testing.TB, answer func(n int, r received) (int, string)) *receiver {
	rcv := &receiver{t: t, answer: answer}
	rcv.srv = httptest.NewUnstartedServer(http.HandlerFunc(rcv.serve))
	rcv.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rcv.conns.Add(1)
		}
	}
	rcv.srv.Start()
	t.Cleanup(rcv.srv.Close)
	return rcv
}

func (rcv *receiver) URL() string { return rcv.srv.URL + "/hook" }

func (rcv *receiver) setSecret(s string) {
	rcv.mu.Lock()
	rcv.secret = s
	rcv.mu.Unlock()
}

func (rcv *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := received{Header: r.Header.Clone(), Body: body, At: time.Now()}
	rcv.mu.Lock()
	secret := rcv.secret
	rcv.mu.Unlock()
	rec.Err = verifyDelivery(secret, r, body)
	rcv.mu.Lock()
	n := len(rcv.reqs)
	rcv.reqs = append(rcv.reqs, rec)
	rcv.mu.Unlock()
	status, text := http.StatusNoContent, ""
	if rcv.answer != nil {
		status, text = rcv.answer(n, rec)
	}
	w.WriteHeader(status)
	io.WriteString(w, text)
}

func (rcv *receiver) requests() []received {
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	return append([]received(nil), rcv.reqs...)
}

func (rcv *receiver) count() int {
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	return len(rcv.reqs)
}

// verifyDelivery checks one delivery as a careful receiver would: method, content type, the
// three signatures recomputed from the raw body, and the headers agreeing with the body.
func verifyDelivery(secret string, r *http.Request, body []byte) error {
	if r.Method != http.MethodPost {
		return fmt.Errorf("method %s", r.Method)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		return fmt.Errorf("content type %q", ct)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); !hmac.Equal([]byte(r.Header.Get("X-Service-Signature")), []byte(want)) {
		return fmt.Errorf("X-Service-Signature %q, want %q", r.Header.Get("X-Service-Signature"), want)
	}
	mac = hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(r.Header.Get("X-Service-Timestamp") + "."))
	mac.Write(body)
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); r.Header.Get("X-Service-Timestamp-Signature") != want {
		return fmt.Errorf("X-Service-Timestamp-Signature %q, want %q", r.Header.Get("X-Service-Timestamp-Signature"), want)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	id, ts := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
	mac = hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	if want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)); r.Header.Get("webhook-signature") != want {
		return fmt.Errorf("webhook-signature %q, want %q", r.Header.Get("webhook-signature"), want)
	}
	if id == "" || id != r.Header.Get("X-Service-Delivery") {
		return fmt.Errorf("webhook-id %q vs X-Service-Delivery %q", id, r.Header.Get("X-Service-Delivery"))
	}
	if ts == "" || ts != r.Header.Get("X-Service-Timestamp") {
		return fmt.Errorf("webhook-timestamp %q vs X-Service-Timestamp %q", ts, r.Header.Get("X-Service-Timestamp"))
	}
	if n, err := strconv.Atoi(r.Header.Get("X-Service-Attempt")); err != nil || n < 1 {
		return fmt.Errorf("X-Service-Attempt %q", r.Header.Get("X-Service-Attempt"))
	}
	var b struct {
		ID    string `json:"id"`
		Event string `json:"event"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return fmt.Errorf("body: %v", err)
	}
	if b.ID == "" || b.ID != r.Header.Get("X-Service-Event-Id") || b.Event != r.Header.Get("X-Service-Event") {
		return fmt.Errorf("body id/event %q/%q vs headers %q/%q", b.ID, b.Event, r.Header.Get("X-Service-Event-Id"), r.Header.Get("X-Service-Event"))
	}
	return nil
}

func validateEventBody(t testing.TB, spec *openapi3.T, body []byte) {
	t.Helper()
	var b struct {
		Event string `json:"event"`
	}
	json.Unmarshal(body, &b)
	name, ok := eventSchemas[b.Event]
	if !ok {
		t.Fatalf("unknown event in %s", body)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	if err := spec.Components.Schemas[name].Value.VisitJSON(v, openapi3.MultiErrors()); err != nil {
		t.Fatalf("%s does not match %s: %v", body, name, err)
	}
}
