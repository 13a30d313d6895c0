// Package server is the gateway's REST API: Echo setup, authentication, validation against
// the spec, the one error renderer, the strict handlers and the platform's inbound webhook
// (platformhook.go). The background services run beside it (server/worker), started and
// stopped by the process wiring.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"gateway/gen"
	"gateway/openapi"
	"gateway/server/domain"
	"gateway/server/groupcommit"
	"gateway/server/onboarding"
	"gateway/store"
)

// Options are the server's settings, parsed once from the environment by main.
type Options struct {
	// PlatformAppSecret verifies X-Hub-Signature-256 on the platform's webhooks.
	PlatformAppSecret string
	// PlatformVerifyToken answers the platform's GET verification handshake.
	PlatformVerifyToken string
	// SendTimeout bounds one platform call (default 10 s).
	SendTimeout time.Duration
	// Sandbox is the shared test-mode number.
	Sandbox Sandbox
	// RecordRetry bounds the retries of recording a send the platform accepted before the
	// send answers 502 with its outcome unknown (default 5 s; recording goes on in the
	// background).
	RecordRetry time.Duration
	// IdempotencyWait is how long a request waits for an earlier request with the same
	// Idempotency-Key to finish before answering 409 (default 15 s).
	IdempotencyWait time.Duration
	// SchemaVersion is the newest migration version the binary carries; /readyz compares it
	// with the database.
	SchemaVersion uint
	// TestDeliveredAfter and TestReadAfter age a test-mode message read through GET
	// /messages/{id}: delivered, then read, this long after it was sent (default 2 s and 5 s).
	TestDeliveredAfter time.Duration
	TestReadAfter      time.Duration
	// MetricsToken, when set, serves /metrics on the API's listener to requests bearing it
	// (GATEWAY_METRICS_TOKEN); when empty /metrics is a 404 there.
	MetricsToken string
	// TrustedProxies are the addresses (GATEWAY_TRUSTED_PROXIES) whose X-Forwarded-For and
	// X-Real-IP headers name the client for the demo limit and the dashboard's sign-in throttle
	// (clientaddr.Key); empty: none is trusted.
	TrustedProxies []netip.Prefix
	// Replicas is how many gateways share the demo limit (GATEWAY_REPLICAS, default 1): each
	// enforces its share.
	Replicas int
	// NoListen says the dispatchers poll for new deliveries: the gateway has no direct
	// connection for LISTEN (DATABASE_URL is a transaction pooler and DATABASE_DIRECT_URL is
	// not set). /readyz reports it.
	NoListen bool
}

// Sandbox is the number test keys use for real deliveries to joined handsets.
type Sandbox struct {
	PhoneNumber   string
	PhoneNumberID string
	AccessToken   string
}

// Deps are the collaborators the server is wired with.
type Deps struct {
	Store    *store.Store
	Platform Platform
	Logger   *slog.Logger
	Clock    func() time.Time
	// Metrics receives the server's measurements; nil means a new set (NewMetrics over Store).
	Metrics *Metrics
	// Onboarding connects numbers (Embedded Signup, system-user tokens); New completes its
	// template sync and tenant-cache hooks. Optional.
	Onboarding *onboarding.Service
	// Broadcasts are the broadcast operations; nil means ones over Store with the default pace.
	Broadcasts *domain.Broadcasts
}

// Server holds the wired HTTP application.
type Server struct {
	// mounted is the prefix Mount serves another handler under ("" for none); that handler
	// bounds its own request bodies.
	mounted  string
	opts     Options
	store    *store.Store
	platform Platform
	log      *slog.Logger
	now      func() time.Time
	spec     *openapi3.T
	specJSON []byte
	router   routers.Router
	echo     *echo.Echo
	demo     *demoLimiter
	metrics  *Metrics

	onboarding *onboarding.Service
	templates  domain.TemplateSync
	// The records a live key and a test or demo key reach (keymode.go).
	liveRecords, testRecords domain.Records
	// statusReports applies the platform's status reports (platformhook.go hands them over).
	statusReports domain.Statuses
	media         domain.Media
	broadcasts    *domain.Broadcasts

	// sends is the send pipeline (server/domain): live sends, test mode's, the form's.
	sends *domain.Sends

	tenantMu        sync.Mutex
	tenantGen       uint64                 // bumped by every invalidation (forgetTenant)
	tenantsListened atomic.Bool            // a TenantListener is listening: entries live longer
	tenants         map[string]tenantEntry // platform phone number id → connection, see tenantByPhoneNumberID

	// The group commits (server/groupcommit) of single-status deliveries, and the API keys'
	// lookups, reads that share a statement the same way (the send's own are server/domain's).
	statuses *groupcommit.Batcher[store.StatusWrite, store.StatusApplied]
	keys     *groupcommit.Batcher[[]byte, store.KeyLookup]
}

// New builds the server: it loads and validates the embedded spec, builds the route table, and
// registers every route. It fails when the spec does not load or validate.
func New(opts Options, deps Deps) (*Server, error) {
	if opts.SendTimeout <= 0 {
		opts.SendTimeout = 10 * time.Second
	}
	if opts.RecordRetry <= 0 {
		opts.RecordRetry = 5 * time.Second
	}
	if opts.IdempotencyWait <= 0 {
		opts.IdempotencyWait = defaultIdempotencyWait
	}
	if opts.TestDeliveredAfter <= 0 {
		opts.TestDeliveredAfter = defaultTestDeliveredAfter
	}
	if opts.TestReadAfter <= 0 {
		opts.TestReadAfter = defaultTestReadAfter
	}
	if deps.Clock == nil {
		deps.Clock = time.Now
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	spec, err := LoadSpec()
	if err != nil {
		return nil, err
	}
	specJSON, err := spec.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("spec as JSON: %w", err)
	}
	router, err := newRouteTable(spec)
	if err != nil {
		return nil, fmt.Errorf("spec routes: %w", err)
	}
	if deps.Metrics == nil {
		deps.Metrics = NewMetrics(deps.Store)
	}
	media := newMediaOps(deps.Store, deps.Platform, opts.SendTimeout)
	if deps.Platform != nil {
		deps.Platform = measuredPlatform{p: deps.Platform, m: deps.Metrics}
	}
	s := &Server{
		opts: opts, store: deps.Store, platform: deps.Platform, log: slog.New(requestAttrs{deps.Logger.Handler()}), now: deps.Clock,
		spec: spec, specJSON: specJSON, router: router,
		demo: newDemoLimiter(deps.Clock, opts.Replicas), onboarding: deps.Onboarding, metrics: deps.Metrics,
	}
	s.templates = domain.TemplateSync{Store: deps.Store}
	s.media = media
	if s.broadcasts = deps.Broadcasts; s.broadcasts == nil {
		s.broadcasts = &domain.Broadcasts{Store: deps.Store, Now: deps.Clock}
	}
	if s.platform != nil {
		s.templates.Source = platformTemplates{s.platform}
	}
	s.wireOnboarding(deps.Onboarding)
	cfg := domain.SendsConfig{Store: deps.Store, Observer: deps.Metrics, Logger: s.log, Clock: deps.Clock,
		SendTimeout: opts.SendTimeout, RecordRetry: opts.RecordRetry, Fixtures: fixtureTemplates,
		Sandbox: domain.Sandbox{PhoneNumber: opts.Sandbox.PhoneNumber, PhoneNumberID: opts.Sandbox.PhoneNumberID, AccessToken: opts.Sandbox.AccessToken}}
	if s.platform != nil {
		cfg.Messenger = messenger{s.platform}
	}
	s.sends = domain.NewSends(cfg)
	s.statuses = groupcommit.New(deps.Store.ApplyStatusWrites, statusKey, platformProcessTimeout)
	s.keys = groupcommit.New(deps.Store.PrincipalsByKeyHashes, anyKey, keyLookupTimeout)
	s.buildRecords()
	s.statusReports = domain.Statuses{Store: deps.Store, Write: s.statuses.Do, Log: s.log, Now: deps.Clock,
		Observe: s.metrics.observeStatusReport}
	s.echo = s.routes()
	return s, nil
}

// LoadSpec parses and validates the embedded openapi.yaml; it fails when the document is
// invalid.
func LoadSpec() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	spec, err := loader.LoadFromData(openapi.YAML)
	if err != nil {
		return nil, fmt.Errorf("load spec: %w", err)
	}
	if err := spec.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("validate spec: %w", err)
	}
	return spec, nil
}

// Handler returns the whole HTTP application.
func (s *Server) Handler() http.Handler { return s.echo }

func (s *Server) routes() *echo.Echo {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = s.renderError
	e.Use(requestIDMiddleware)
	e.Use(s.logMiddleware)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableStackAll: true,
		// The stack is captured for LogErrorFunc, which logs it; Echo prints nothing itself.
		DisablePrintStack: false,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.log.ErrorContext(c.Request().Context(), "panic", "error", err.Error(), "stack", string(stack))
			return err
		},
	}))
	e.Use(bodyLimit(apiBodyLimit, func(c echo.Context) bool {
		return isPlatformWebhookPost(c) || isMediaUpload(c) || isBroadcastBody(c) || s.isMounted(c)
	}))
	e.Use(bodyLimit(mediaUploadBodyLimit, func(c echo.Context) bool { return !isMediaUpload(c) }))
	e.Use(bodyLimit(broadcastBodyLimit, func(c echo.Context) bool { return !isBroadcastBody(c) }))

	// Public paths: no key needed.
	e.GET("/healthz", s.healthz)
	e.GET("/metrics", s.metricsEndpoint)
	s.docsRoutes(e)
	e.GET("/readyz", s.readyz)
	e.GET("/v1/openapi.yaml", s.specYAML)
	e.GET("/v1/openapi.json", s.specJSONHandler)
	e.GET(platformWebhookPath, s.platformVerify)
	e.POST(platformWebhookPath, s.platformWebhook, bodyLimit(PlatformWebhookBodyLimit, nil))

	// The API: every route of the spec, behind route lookup, authentication and validation.
	v1 := e.Group("/v1", s.apiMiddleware, s.idempotency)
	gen.RegisterHandlers(v1, gen.NewStrictHandler(&api{s: s}, nil))
	// Anything else under /v1 still goes through apiMiddleware, which answers 404 or 405.
	v1.Any("/*", func(c echo.Context) error { return echo.NewHTTPError(http.StatusNotFound) })
	e.RouteNotFound("/*", func(c echo.Context) error { return echo.NewHTTPError(http.StatusNotFound) })
	return e
}

// Request body limits, in bytes (whole MiB): every API route takes apiBodyLimit (a handler
// Mount serves bounds its own) but the platform
// webhook, whose payloads the platform documents as up to 3 MB, the media upload
// (mediaUploadBodyLimit, media.go), and a broadcast's creation and pre-flight, which list up to
// 10,000 recipients with their variables.
const (
	apiBodyLimit             = 1 << 20
	PlatformWebhookBodyLimit = 4 << 20
	broadcastBodyLimit       = 4 << 20
	platformWebhookPath      = "/platform/webhook"
)

// isBroadcastBody reports whether c creates or checks a broadcast.
func isBroadcastBody(c echo.Context) bool {
	p := c.Path()
	return c.Request().Method == http.MethodPost && (p == "/v1/broadcasts" || p == "/v1/broadcasts/preflight")
}

// isMounted reports whether c is for the handler Mount serves.
func (s *Server) isMounted(c echo.Context) bool {
	p := c.Request().URL.Path
	return s.mounted != "" && (p == s.mounted || strings.HasPrefix(p, s.mounted+"/"))
}

// isPlatformWebhookPost reports whether c is the platform's webhook delivery.
func isPlatformWebhookPost(c echo.Context) bool {
	return c.Path() == platformWebhookPath && c.Request().Method == http.MethodPost
}

// bodyLimitOf is the body limit of c's route, in bytes.
func bodyLimitOf(c echo.Context) int {
	if isPlatformWebhookPost(c) {
		return PlatformWebhookBodyLimit
	}
	if isMediaUpload(c) {
		return mediaUploadBodyLimit
	}
	if isBroadcastBody(c) {
		return broadcastBodyLimit
	}
	return apiBodyLimit
}

// bodyLimit refuses a body over limit bytes with a 413 (skip, when set, exempts a route that
// has its own). A request without a body (net/http gives it http.NoBody, and -1 for a chunked
// one) keeps http.NoBody, which tells the validator and the handlers there is nothing to read.
func bodyLimit(limit int, skip func(echo.Context) bool) echo.MiddlewareFunc {
	return middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{
		Limit: fmt.Sprintf("%dMiB", limit>>20), // "1M" would be 1,000,000 bytes
		Skipper: func(c echo.Context) bool {
			return c.Request().ContentLength == 0 || (skip != nil && skip(c))
		},
	})
}

// api implements the generated strict server interface; one file per resource.
type api struct{ s *Server }

var _ gen.StrictServerInterface = (*api)(nil)

func requestIDMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if id == "" || len(id) > 128 || strings.ContainsAny(id, "\r\n") {
			var b [12]byte
			rand.Read(b[:])
			id = "req_" + hex.EncodeToString(b[:])
		}
		res := c.Response()
		res.Header().Set(echo.HeaderXRequestID, id)
		c.SetRequest(c.Request().WithContext(context.WithValue(c.Request().Context(), requestIDKey{}, id)))
		// The generated strict responses set the headers openapi.yaml declares, X-Request-Id
		// included, from fields the handlers leave empty; this puts the id back just before the
		// status line is written, whatever wrote the headers.
		res.Before(func() { res.Header().Set(echo.HeaderXRequestID, id) })
		return next(c)
	}
}

// logMiddleware writes one structured line per request. It logs the path without the query
// string, so a key sent as ?apiKey= never reaches the logs.
func (s *Server) logMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		took := time.Since(start)
		s.metrics.observeRequest(routeLabel(c), c.Request().Method, c.Response().Status, took)
		// Typed attributes, not key-value pairs: no value is boxed on this per-request path.
		attrs := [5]slog.Attr{slog.String("method", c.Request().Method), slog.String("path", c.Request().URL.Path),
			slog.Int("status", c.Response().Status), slog.Float64("duration_ms", float64(took.Microseconds())/1000)}
		n := 4
		if p, perr := principalFrom(c.Request().Context()); perr == nil {
			attrs[n], n = slog.Int64("key_id", p.KeyID), n+1
		}
		// request_id and account_id come from the context (requestAttrs).
		s.log.LogAttrs(c.Request().Context(), slog.LevelInfo, "request", attrs[:n]...)
		return nil
	}
}

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, gen.Envelope{Success: true, Message: "OK"})
}

// readyz answers 200 when the database answers and its schema is at the binary's version.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	v, dirty, err := s.store.SchemaVersion(ctx)
	switch {
	case err != nil && errors.Is(err, store.ErrNotFound):
		return newAPIError(http.StatusServiceUnavailable, gen.ErrorCodeInternalError, "Database has no schema; run `gateway migrate up`")
	case err != nil:
		return newAPIError(http.StatusServiceUnavailable, gen.ErrorCodeInternalError, "Database unreachable")
	case dirty || v != s.opts.SchemaVersion:
		return newAPIError(http.StatusServiceUnavailable, gen.ErrorCodeInternalError,
			fmt.Sprintf("Database schema is at version %d (dirty=%t), expected %d", v, dirty, s.opts.SchemaVersion))
	}
	return c.JSON(http.StatusOK, gen.Envelope{Success: true, Message: "Ready; " + s.databaseTopology(ctx)})
}

// databaseTopology says how this gateway uses the database: how the dispatchers learn of new
// deliveries (LISTEN on a direct connection, or polling), and which pool serves the reads that
// may lag (the replica's state is checked now).
func (s *Server) databaseTopology(ctx context.Context) string {
	wake := "wake-ups by LISTEN"
	if s.opts.NoListen {
		wake = "wake-ups by polling (no direct connection)"
	}
	reads := "reads on the primary (no replica)"
	if st := s.store.CheckReplica(ctx); st != store.ReplicaNone {
		_, lag := s.store.ReplicaState()
		switch st {
		case store.ReplicaServing:
			reads = fmt.Sprintf("reads that may lag on the replica (lag %s)", lag.Round(time.Millisecond))
		case store.ReplicaLagging:
			reads = fmt.Sprintf("reads on the primary (replica lagging %s)", lag.Round(time.Millisecond))
		default:
			reads = "reads on the primary (replica down)"
		}
	}
	return wake + "; " + reads
}

func (s *Server) specYAML(c echo.Context) error {
	return c.Blob(http.StatusOK, "application/yaml", openapi.YAML)
}

func (s *Server) specJSONHandler(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, s.specJSON)
}

// Close cancels the background recordings of accepted sends and waits for them (they give up:
// the platform's status reports adopt those sends). The process calls it after the HTTP
// server has shut down; it is idempotent.
func (s *Server) Close() {
	if s.sends != nil {
		s.sends.Close()
	}
}

// Mount serves prefix and everything under it with h, behind the same request id, logging and
// recovery as the API (the process wiring mounts the dashboard here: server/web); h bounds its
// own request bodies, so that an oversized one gets its answer rather than the API's. A person
// who opens the service's address in a browser is sent to prefix. Call it before serving.
func (s *Server) Mount(prefix string, h http.Handler) {
	s.mounted = prefix
	wh := echo.WrapHandler(h)
	s.echo.Any(prefix, wh)
	s.echo.Any(prefix+"/*", wh)
	s.echo.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, prefix) })
}

// Logger is the server's logger: request id and account id come from the context.
func (s *Server) Logger() *slog.Logger { return s.log }

// PollsForDeliveries reports whether the webhook dispatchers find new deliveries by polling
// (Options.NoListen: no direct connection for LISTEN) rather than by LISTEN.
func (s *Server) PollsForDeliveries() bool { return s.opts.NoListen }
