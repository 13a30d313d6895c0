// Package servertest runs the real gateway over real HTTP on loopback against a fresh
// PostgreSQL database, and checks every response it receives against openapi.yaml
// (status included), so an undocumented status or field fails the test that saw it.
package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"

	"gateway/migrations"
	"gateway/platform/simulator"
	"gateway/platform/whatsapp"
	"gateway/server"
	"gateway/server/dashboard"
	"gateway/server/domain"
	"gateway/server/web"
	"gateway/store"
	"gateway/store/storetest"
)

// Env is one running gateway with its own database.
type Env struct {
	T      testing.TB
	Store  *store.Store
	DSN    string // the test database, for LISTEN connections
	Server *server.Server
	HTTP   *httptest.Server
	URL    string
	Spec   *openapi3.T
	Sim    *simulator.Simulator // nil unless Config.Simulator was set
	SimURL string
	// LiveInbox is the dashboard's live inbox hub, running.
	LiveInbox *dashboard.InboxHub
	router    routers.Router
	client    *http.Client
}

// Config adjusts the gateway an Env runs.
type Config struct {
	Options  server.Options
	Platform server.Platform // overrides the simulator's client when set
	// WrapPlatform, when set, wraps the platform the server gets (the simulator's client or
	// Platform): a fault-injection hook around the platform call.
	WrapPlatform func(server.Platform) server.Platform
	Clock        func() time.Time
	// Logger receives the server's logs; nil discards them (or, with -v, shows warnings
	// through t.Log).
	Logger *slog.Logger
	// Simulator, when set, is the platform simulator's configuration: the simulator is started on
	// loopback, the gateway's platform client points at it, and its signed webhooks go to the
	// gateway's /platform/webhook with the shared app secret (AppSecret and WebhookURL are set
	// here).
	Simulator *simulator.Config
	// Dashboard configures the dashboard mounted beside the API (server/web).
	Dashboard dashboard.Options
	// Connector connects numbers from the dashboard (nil: not configured).
	Connector dashboard.Connector
}

// AppSecret is the platform app secret tests share between the simulator and the gateway.
const AppSecret = "test-app-secret"

// New starts a gateway on loopback over a fresh database; everything stops at test cleanup.
func New(t testing.TB, cfg Config) *Env {
	t.Helper()
	st, dsn := storetest.NewWithDSN(t)
	spec, router := loadSpec(t)
	if cfg.Options.SchemaVersion == 0 {
		v, err := store.LatestVersion(migrations.FS)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Options.SchemaVersion = v
	}
	if cfg.Options.Sandbox.PhoneNumber == "" {
		cfg.Options.Sandbox = server.Sandbox{PhoneNumber: "15550001111", PhoneNumberID: "sandbox-pnid", AccessToken: "sandbox-token"}
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if cfg.Logger != nil {
		logger = cfg.Logger
	}
	if cfg.Options.PlatformAppSecret == "" {
		cfg.Options.PlatformAppSecret = AppSecret
	}
	if cfg.Options.PlatformVerifyToken == "" {
		cfg.Options.PlatformVerifyToken = "test-verify-token"
	}
	env := &Env{T: t, Store: st, DSN: dsn, Spec: spec, router: router,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	// The listener comes first so the simulator knows where to send webhooks.
	hs := httptest.NewUnstartedServer(nil)
	env.URL = "http://" + hs.Listener.Addr().String()
	if cfg.Simulator != nil {
		sc := *cfg.Simulator
		sc.AppSecret = cfg.Options.PlatformAppSecret
		sc.WebhookURL = env.URL + "/platform/webhook"
		env.Sim = simulator.New(sc)
		u, err := env.Sim.Start("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		env.SimURL = u
		t.Cleanup(func() { env.Sim.Close() })
		if cfg.Platform == nil {
			wa := whatsapp.NewClient(u+"/v23.0", nil)
			if cfg.Options.SendTimeout > 0 {
				wa.SetTimeout(cfg.Options.SendTimeout)
			}
			cfg.Platform = wa
		}
	}
	if cfg.WrapPlatform != nil {
		cfg.Platform = cfg.WrapPlatform(cfg.Platform)
	}
	srv, err := server.New(cfg.Options, server.Deps{Store: st, Platform: cfg.Platform, Logger: logger, Clock: cfg.Clock})
	if err != nil {
		t.Fatal(err)
	}
	dash, err := web.Mount(srv, web.Config{Dashboard: cfg.Dashboard, Store: st, Connector: cfg.Connector,
		SandboxPhoneNumber: cfg.Options.Sandbox.PhoneNumber, TrustedProxies: cfg.Options.TrustedProxies,
		Clock: cfg.Clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	hs.Config.Handler = srv.Handler()
	hs.Start()
	t.Cleanup(hs.Close)
	// The inbox's live hub, as serve runs it; stopped before the server closes (its open
	// streams would hold Close).
	env.LiveInbox = dash.LiveInbox()
	if err := env.LiveInbox.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.LiveInbox.Stop)
	env.Server, env.HTTP = srv, hs
	return env
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// Tenant is an account with one key of each mode.
type Tenant struct {
	Account store.Account
	Live    string
	Test    string
	LiveKey store.APIKey
}

// NewTenant creates an account with a live and a test key.
func (e *Env) NewTenant(name string) Tenant {
	e.T.Helper()
	ctx := context.Background()
	a, err := e.Store.CreateAccount(ctx, name, strings.ToLower(strings.ReplaceAll(name, " ", "."))+"@example.com", fmt.Sprintf("%s-%d", strings.ToLower(strings.Fields(name)[0]), time.Now().UnixNano()))
	if err != nil {
		e.T.Fatal(err)
	}
	tn := Tenant{Account: a}
	tn.Live, tn.LiveKey = e.NewKey(a.ID, domain.ModeLive)
	tn.Test, _ = e.NewKey(a.ID, domain.ModeTest)
	return tn
}

// NewKey issues a key of the mode for the account.
func (e *Env) NewKey(accountID int64, mode string) (string, store.APIKey) {
	e.T.Helper()
	key, hash, prefix, err := domain.GenerateKey(mode)
	if err != nil {
		e.T.Fatal(err)
	}
	k, err := e.Store.CreateAPIKey(context.Background(), accountID, mode, hash, prefix)
	if err != nil {
		e.T.Fatal(err)
	}
	return key, k
}

// Response is a received response, already checked against the spec.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test on malformed JSON.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Map decodes the body as a JSON object.
func (r *Response) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Code returns the envelope's error code ("" on success).
func (r *Response) Code(t testing.TB) string {
	t.Helper()
	c, _ := r.Map(t)["code"].(string)
	return c
}

// Request describes one call.
type Request struct {
	Method string
	Path   string            // e.g. /v1/contacts?limit=5
	Body   any               // marshalled as JSON unless []byte or string
	Header map[string]string // extra headers
	Key    string            // sent as Authorization: Bearer when set
}

// Do sends the request over HTTP and validates the response against the spec: documented
// operations with kin-openapi's response validation (status included); unknown routes must be
// a 404 or 405 error envelope.
func (e *Env) Do(r Request) *Response {
	e.T.Helper()
	resp, err := e.send(r)
	if err != nil {
		e.T.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	if err := e.Validate(r, resp); err != nil {
		e.T.Errorf("contract: %s %s → %d %s: %v", r.Method, r.Path, resp.Status, resp.Body, err)
	}
	return resp
}

// DoConcurrent is Do for use from many goroutines; failures are returned, not reported.
func (e *Env) DoConcurrent(r Request) (*Response, error) {
	resp, err := e.send(r)
	if err != nil {
		return nil, err
	}
	if err := e.Validate(r, resp); err != nil {
		return resp, fmt.Errorf("contract: %s %s → %d %s: %w", r.Method, r.Path, resp.Status, resp.Body, err)
	}
	return resp, nil
}

func newRequest(base string, r Request) (*http.Request, error) {
	var body io.Reader
	switch b := r.Body.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
	case string:
		body = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(j)
	}
	req, err := http.NewRequest(r.Method, base+r.Path, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.Key != "" {
		req.Header.Set("Authorization", "Bearer "+r.Key)
	}
	for k, v := range r.Header {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	return req, nil
}

func (e *Env) send(r Request) (*Response, error) { return sendRequest(e.client, e.URL, r) }

func sendRequest(client *http.Client, base string, r Request) (*Response, error) {
	req, err := newRequest(base, r)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// ConnectNumber connects a number for the tenant in the gateway and, when a simulator runs,
// registers it there with the simulator's default templates. The ids are derived from the
// account id so tenants never share a number.
func (e *Env) ConnectNumber(tn Tenant) store.Connection {
	e.T.Helper()
	id := tn.Account.ID
	c := store.Connection{AccountID: id, WabaID: fmt.Sprintf("waba-%d", id), PhoneNumberID: fmt.Sprintf("1065403522%05d", id),
		PhoneNumber: fmt.Sprintf("1555078%04d", id), DisplayName: tn.Account.Name, AccessToken: fmt.Sprintf("token-%d", id)}
	if _, err := e.Store.ConnectNumber(context.Background(), c); err != nil {
		e.T.Fatal(err)
	}
	if e.Sim != nil {
		e.Sim.AddNumber(simulator.Number{PhoneNumberID: c.PhoneNumberID, WabaID: c.WabaID, DisplayPhoneNumber: c.PhoneNumber, AccessToken: c.AccessToken})
		e.Sim.SeedTemplates(c.WabaID, simulator.DefaultTemplates())
	}
	return c
}

// DoAtOnce sends the requests concurrently, all released at the same moment, validates every
// response against the spec, and returns them in order. Any transport or contract failure fails
// the test.
func (e *Env) DoAtOnce(reqs []Request) []*Response {
	e.T.Helper()
	out := make([]*Response, len(reqs))
	errs := make([]error, len(reqs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i], errs[i] = e.DoConcurrent(r)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			e.T.Fatalf("request %d: %v", i, err)
		}
	}
	return out
}
