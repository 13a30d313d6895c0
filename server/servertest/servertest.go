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
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

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
	spec, err := server.LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	router, err := gorillamux.NewRouter(spec)
	if err != nil {
		t.Fatal(err)
	}
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

// Validate checks one exchange against the spec.
func (e *Env) Validate(r Request, resp *Response) error {
	return validateExchange(e.Spec, e.router, e.URL, r, resp)
}

func validateExchange(spec *openapi3.T, router routers.Router, base string, r Request, resp *Response) error {
	if resp.Header.Get("X-Request-Id") == "" {
		return fmt.Errorf("no X-Request-Id header")
	}
	if !strings.HasPrefix(r.Path, "/v1/") || strings.HasPrefix(r.Path, "/v1/openapi.") {
		return nil
	}
	req, err := newRequest(base, r)
	if err != nil {
		return err
	}
	// The router matches on the server URL /v1 and the host-less path.
	req.URL.Host, req.URL.Scheme, req.Host = "", "", ""
	route, params, err := router.FindRoute(req)
	if err != nil {
		if resp.Status != http.StatusNotFound && resp.Status != http.StatusMethodNotAllowed {
			return fmt.Errorf("unrouted request answered %d", resp.Status)
		}
		if resp.Status == http.StatusMethodNotAllowed {
			// components/responses/MethodNotAllowed: the Allow header and the code of a 405.
			if resp.Header.Get("Allow") == "" {
				return fmt.Errorf("405 without an Allow header")
			}
			return ValidateSchema(spec, "MethodNotAllowedEnvelope", resp.Body)
		}
		return ValidateSchema(spec, "NotFoundEnvelope", resp.Body)
	}
	Cover(route.Operation.OperationID, resp.Status)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status:  resp.Status,
		Header:  resp.Header,
		Body:    io.NopCloser(bytes.NewReader(resp.Body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return err
	}
	recordFields(route.Operation, resp)
	return nil
}

// Contract sends requests to a gateway running elsewhere (for example the built binary) and
// checks every response against openapi.yaml, as Env.Do does.
type Contract struct {
	Spec   *openapi3.T
	Base   string
	router routers.Router
	client *http.Client
}

// NewContract returns a Contract for the gateway at base (e.g. http://127.0.0.1:8080).
func NewContract(t testing.TB, base string) *Contract {
	t.Helper()
	spec, err := server.LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	router, err := gorillamux.NewRouter(spec)
	if err != nil {
		t.Fatal(err)
	}
	return &Contract{Spec: spec, Base: base, router: router, client: &http.Client{Timeout: 30 * time.Second}}
}

// Do sends the request and validates the response; transport and contract failures are errors.
func (c *Contract) Do(r Request) (*Response, error) {
	out, err := sendRequest(c.client, c.Base, r)
	if err != nil {
		return nil, err
	}
	if err := validateExchange(c.Spec, c.router, c.Base, r, out); err != nil {
		return out, fmt.Errorf("contract: %s %s → %d %s: %w", r.Method, r.Path, out.Status, out.Body, err)
	}
	return out, nil
}

// ValidateSchema checks a JSON document against a named schema of components/schemas.
func (e *Env) ValidateSchema(name string, doc []byte) error {
	return ValidateSchema(e.Spec, name, doc)
}

// ValidateSchema checks a JSON document against a named schema of the spec's components.
func ValidateSchema(spec *openapi3.T, name string, doc []byte) error {
	ref, ok := spec.Components.Schemas[name]
	if !ok {
		return fmt.Errorf("no schema %q", name)
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return ref.Value.VisitJSON(v, openapi3.MultiErrors())
}

var (
	coverMu sync.Mutex
	covered = map[string]bool{}
)

// Cover records that a test received status for the operation.
func Cover(operationID string, status int) {
	coverMu.Lock()
	covered[fmt.Sprintf("%s %d", operationID, status)] = true
	coverMu.Unlock()
}

// Uncovered lists the (operation, status) pairs the spec documents that no test received.
func Uncovered(spec *openapi3.T) []string {
	coverMu.Lock()
	defer coverMu.Unlock()
	var out []string
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			for status := range op.Responses.Map() {
				k := op.OperationID + " " + status
				if !covered[k] {
					out = append(out, k)
				}
			}
		}
	}
	sort.Strings(out)
	return out
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
