package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/debug"

	"github.com/jmoiron/sqlx"

	"gateway/migrations"
	"gateway/platform/whatsapp"
	"gateway/server"
	"gateway/server/dashboard"
	"gateway/server/domain"
	"gateway/server/onboarding"
	"gateway/server/web"
	"gateway/server/worker"
	"gateway/store"
)

// app is the wired gateway: database, store, platform client, the HTTP server and the
// background services beside it.
type app struct {
	cfg     config
	log     *slog.Logger
	store   *store.Store
	server  *server.Server
	workers *worker.Group
	// live is the inbox's live hub (one of the workers), whose streams end when the HTTP
	// server starts shutting down.
	live  *dashboard.InboxHub
	close func()
}

// openApp migrates (unless disabled), opens the store and builds the server.
func openApp(ctx context.Context, cfg config, logger *slog.Logger) (*app, error) {
	if cfg.Migrate {
		if err := migrateUp(cfg); err != nil {
			return nil, err
		}
	}
	pool, replica, err := openPools(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	db := pools{pool, replica}
	st, err := store.New(pool, cfg.SecretKey, previousKeys(cfg)...)
	if err != nil {
		db.Close()
		return nil, err
	}
	st.SetLimits(cfg.Limits)
	if replica != nil {
		st.SetReplica(replica, cfg.Database.ReplicaMaxLag, nil)
	}
	version, err := store.LatestVersion(migrations.FS)
	if err != nil {
		db.Close()
		return nil, err
	}
	if cfg.DemoKey != "" {
		if mode, err := domain.ParseKey(cfg.DemoKey); err != nil || mode != domain.ModeDemo {
			db.Close()
			return nil, fmt.Errorf("DEMO_KEY is not a valid svc_demo_ key")
		}
		if _, err := st.EnsureDemoKey(ctx, domain.HashKey(cfg.DemoKey), cfg.DemoKey[:13], "demo-"+newJoinCode()); err != nil {
			db.Close()
			return nil, fmt.Errorf("register the demo key: %w", err)
		}
	}
	wa := whatsapp.NewClient(cfg.PlatformBaseURL, nil)
	wa.SetTimeout(cfg.PlatformTimeout)
	onb := &onboarding.Service{Store: st, Platform: wa, AppID: cfg.PlatformAppID, AppSecret: cfg.PlatformAppSecret,
		ConfigID: cfg.PlatformESConfigID, SDKURL: cfg.PlatformSDKURL}
	limits := newNumberLimits(st, wa)
	srv, err := server.New(server.Options{
		PlatformAppSecret:   cfg.PlatformAppSecret,
		PlatformVerifyToken: cfg.PlatformVerifyToken,
		SendTimeout:         cfg.PlatformTimeout,
		RecordRetry:         cfg.SendRecordRetry,
		SchemaVersion:       version,
		MetricsToken:        cfg.MetricsToken,
		TrustedProxies:      cfg.TrustedProxies,
		Replicas:            cfg.Replicas,
		Sandbox:             server.Sandbox{PhoneNumber: cfg.SandboxPhoneNumber, PhoneNumberID: cfg.SandboxPhoneID, AccessToken: cfg.SandboxAccessToken},
		NoListen:            cfg.listenURL() == "",
	}, server.Deps{Store: st, Platform: wa, Logger: logger, Onboarding: onb,
		Broadcasts: &domain.Broadcasts{Store: st, Limits: limits.of, Share: cfg.Broadcast.Share}})
	if err != nil {
		db.Close()
		return nil, err
	}
	// The dashboard, beside the API on the same listener.
	dash, err := web.Mount(srv, web.Config{Dashboard: cfg.Dashboard, Store: st, Onboarding: onb,
		SandboxPhoneNumber: cfg.SandboxPhoneNumber, TrustedProxies: cfg.TrustedProxies})
	if err != nil {
		db.Close()
		return nil, err
	}
	workers := &worker.Group{}
	workers.Add(
		worker.NewTemplateSyncer(worker.TemplateSyncConfig{Accounts: st.ConnectedAccountIDs,
			Sync: srv.SyncAccountTemplates, Every: cfg.TemplateSyncEvery, Logger: logger}),
		worker.NewDispatcher(st, worker.DispatcherConfig{DSN: cfg.listenURL(), AllowPrivate: cfg.WebhookAllowPrivate, Logger: logger, Metrics: srv.Metrics()}),
		worker.NewRetention(st, worker.RetentionConfig{Logger: logger}),
		worker.NewNameIndexer(st, worker.NameIndexerConfig{Logger: logger}),
		dash.LiveInbox(),
	)
	if cfg.listenURL() != "" {
		workers.Add(server.NewTenantListener(srv, cfg.listenURL(), logger))
	}
	workers.Add(worker.NewReconciler(st, worker.ReconcileConfig{Interval: cfg.ReconcileEvery, Logger: logger,
		OnPass: func(n worker.ReconcileCounts) {
			srv.Metrics().ObserveReconcile(int64(n.Applied), int64(n.Adopted), n.Orphaned, n.Pruned)
		}}))
	engine, err := newBroadcastEngine(st, srv, limits, cfg.Broadcast, logger)
	if err != nil {
		db.Close()
		return nil, err
	}
	workers.Add(engine)
	return &app{cfg: cfg, log: logger, store: st, server: srv, workers: workers, live: dash.LiveInbox(),
		close: func() { st.Close(); db.Close() }}, nil
}

// pools are the primary pool and the replica's (nil when none), closed together.
type pools [2]*sqlx.DB

func (p pools) Close() {
	for _, db := range p {
		if db != nil {
			db.Close()
		}
	}
}

// serveGCPercent is serve's GOGC when the environment sets none.
const serveGCPercent = 400

// serve runs the API until ctx ends, then shuts down gracefully (in-flight requests get
// serverTimeouts(cfg).Shutdown, 35 s by default).
func serve(ctx context.Context, cfg config, stdout, stderr io.Writer, ready func(addr string)) error {
	logger, logs := cfg.bufferedLogger(stderr)
	defer logs.Close()
	if os.Getenv("GOGC") == "" {
		// Requests make short-lived garbage and the live heap is small: collecting at 4x the
		// live heap instead of 2x cuts the collector's share of the CPU, a large part of a
		// poll's. An operator's GOGC (and GOMEMLIMIT) wins.
		debug.SetGCPercent(serveGCPercent)
	}
	if err := cfg.refuseDevelopmentValues("serve", logger); err != nil {
		return err
	}
	a, err := openApp(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer a.close()
	return a.serve(ctx, ready)
}

// serve listens on the configured address and runs the background services until ctx ends.
// ready, when not nil, is called with the listening address once connections are accepted.
func (a *app) serve(ctx context.Context, ready func(addr string)) error {
	ln, err := net.Listen("tcp", a.cfg.Addr)
	if err != nil {
		return err
	}
	timeouts := serverTimeouts(a.cfg)
	hs := newHTTPServer(a.server.Handler(), timeouts)
	// Open live streams never finish on their own: they end when shutdown starts.
	hs.RegisterOnShutdown(a.live.Close)
	if err := a.workers.Start(ctx); err != nil {
		ln.Close()
		return err
	}
	defer a.stopWorkers()
	errc := make(chan error, 2)
	go func() { errc <- hs.Serve(ln) }()
	a.log.Info("serving", "addr", ln.Addr().String())
	var ms *http.Server
	if a.cfg.MetricsAddr != "" {
		mln, err := net.Listen("tcp", a.cfg.MetricsAddr)
		if err != nil {
			hs.Close()
			return fmt.Errorf("metrics listener (GATEWAY_METRICS_ADDR): %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", a.server.Metrics().Handler())
		// Profiles for the operator, on this listener only (never on the API's).
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
		ms = newHTTPServer(mux, timeouts)
		go func() { errc <- ms.Serve(mln) }()
		a.log.Info("serving metrics", "addr", mln.Addr().String())
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	a.log.Info("shutting down", "addr", ln.Addr().String())
	// In-flight requests finish first (a send records its outcome), then the deferred calls
	// stop the background services, and the caller closes the pool.
	sctx, cancel := context.WithTimeout(context.Background(), timeouts.Shutdown)
	defer cancel()
	if ms != nil {
		ms.Shutdown(sctx)
	}
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	a.stopWorkers()
	a.log.Info("shut down")
	return nil
}

// stopWorkers gives up the server's background recordings of accepted sends, then stops the
// background services in reverse order. Both are idempotent.
func (a *app) stopWorkers() {
	a.server.Close()
	a.workers.Stop()
}

func migrateUp(cfg config) error {
	m, err := newMigrator(cfg)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Up(); err != nil {
		return fmt.Errorf("migrate up: %w (a dirty database needs `gateway migrate force V` after a fix by hand)", err)
	}
	return nil
}

// newMigrator opens the migrations on the direct connection, without a statement timeout.
// Through a transaction pooler they cannot run (golang-migrate holds a session lock).
func newMigrator(cfg config) (*store.Migrator, error) {
	if cfg.pooled() && cfg.Database.DirectURL == "" {
		return nil, fmt.Errorf("migrations need a direct connection: set DATABASE_DIRECT_URL (GATEWAY_DB_PREPARED=false takes DATABASE_URL for a transaction pooler)")
	}
	return store.NewMigrator(store.WithoutStatementTimeout(cfg.directURL()), migrations.FS)
}

// previousKeys is GATEWAY_SECRET_KEY_PREVIOUS as store.New takes it.
func previousKeys(cfg config) [][]byte {
	if cfg.SecretKeyPrevious == nil {
		return nil
	}
	return [][]byte{cfg.SecretKeyPrevious}
}
