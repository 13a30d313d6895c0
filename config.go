package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"gateway/server/bench"
	"gateway/server/dashboard"
	"gateway/store"
)

// config is every setting, read once from the environment; each has a default that works on a
// developer's machine.
type config struct {
	DatabaseURL        string
	Database           databaseConfig // the direct connection, a replica, prepared statements
	Addr               string
	SecretKey          []byte
	SecretKeyIsDefault bool
	// SecretKeyPrevious (GATEWAY_SECRET_KEY_PREVIOUS) opens secrets sealed before a key
	// rotation; nil when not set.
	SecretKeyPrevious []byte
	// Env is GATEWAY_ENV; "development" allows the built-in secrets.
	Env                 string
	PlatformBaseURL     string
	PlatformAppSecret   string
	PlatformVerifyToken string
	PlatformTimeout     time.Duration
	SendRecordRetry     time.Duration
	PlatformAppID       string // the platform app's id: Embedded Signup's FB.init and the code exchange
	PlatformESConfigID  string // the Embedded Signup configuration id FB.login opens
	PlatformSDKURL      string // where the dashboard loads the platform's JavaScript SDK from
	// StatementTimeout is every statement's deadline (GATEWAY_STATEMENT_TIMEOUT, default 15 s),
	// set as statement_timeout on the pool's connections.
	StatementTimeout    time.Duration
	SandboxPhoneNumber  string
	SandboxPhoneID      string
	SandboxAccessToken  string
	DemoKey             string
	WebhookAllowPrivate bool
	Migrate             bool
	DBPool              int
	SimAddr             string
	SimWebhookURL       string
	LogLevel            slog.Level
	// LogLevelSet reports whether LOG_LEVEL was given: `gateway dev` logs only warnings
	// unless it was, so that request lines do not scroll its banner away.
	LogLevelSet bool
	// SimDelays (PLATFORM_SIM_DELAYS: sent, delivered, read) is when `gateway dev`'s
	// simulator reports each status of a live send, counted from the send.
	SimDelays         [3]time.Duration
	TemplateSyncEvery time.Duration
	ReconcileEvery    time.Duration
	// MetricsAddr is the listen address of /metrics alone (GATEWAY_METRICS_ADDR); empty
	// means none. MetricsToken (GATEWAY_METRICS_TOKEN) also serves /metrics on Addr to
	// requests bearing it.
	MetricsAddr  string
	MetricsToken string
	// DevKeysFile, when set, is where `gateway dev` writes the keys it issued, as JSON
	// (GATEWAY_DEV_KEYS_FILE), for scripts.
	DevKeysFile string
	// TrustedProxies (GATEWAY_TRUSTED_PROXIES, comma-separated CIDRs or addresses) may name
	// the client in X-Forwarded-For / X-Real-IP; empty by default.
	TrustedProxies []netip.Prefix
	// Replicas (GATEWAY_REPLICAS, default 1) is how many gateways share the demo limit.
	Replicas  int
	Dashboard dashboard.Options
	// Limits (GATEWAY_MAX_WEBHOOK_ENDPOINTS, GATEWAY_MAX_API_KEYS) are per-account quotas.
	Limits store.Limits
	// Broadcast is the broadcast engine's settings (GATEWAY_BROADCAST_*).
	Broadcast broadcastConfig
	// getenv is the environment the configuration was read from, for the admin commands'
	// secrets (admin_secretinput.go).
	getenv func(string) string
}

// The built-in development secrets: serve refuses them unless GATEWAY_ENV=development.
const (
	defaultSecretKey   = "6c6f63616c2d646576656c6f706d656e742d6b65792d6e6f742d736563726574"
	defaultAppSecret   = "local-app-secret"
	defaultVerifyToken = "local-verify-token"
)

func loadConfig(getenv func(string) string) (config, error) {
	get := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	c := config{
		DatabaseURL:         get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/gateway?sslmode=disable"),
		Addr:                get("GATEWAY_ADDR", "127.0.0.1:8080"),
		PlatformBaseURL:     get("PLATFORM_BASE_URL", "http://127.0.0.1:8081/v23.0"),
		PlatformAppSecret:   get("PLATFORM_APP_SECRET", defaultAppSecret),
		PlatformVerifyToken: get("PLATFORM_VERIFY_TOKEN", defaultVerifyToken),
		PlatformAppID:       getenv("PLATFORM_APP_ID"),
		PlatformESConfigID:  getenv("PLATFORM_ES_CONFIG_ID"),
		PlatformSDKURL:      getenv("PLATFORM_SDK_URL"),
		SandboxPhoneNumber:  get("SANDBOX_PHONE_NUMBER", "15550009999"),
		SandboxPhoneID:      get("SANDBOX_PHONE_NUMBER_ID", "100000000000001"),
		SandboxAccessToken:  get("SANDBOX_ACCESS_TOKEN", "sandbox-access-token"),
		DemoKey:             getenv("DEMO_KEY"),
		Env:                 getenv("GATEWAY_ENV"),
		SimAddr:             get("PLATFORM_SIM_ADDR", "127.0.0.1:8081"),
		SimWebhookURL:       get("PLATFORM_SIM_WEBHOOK_URL", "http://127.0.0.1:8080/platform/webhook"),
		MetricsAddr:         getenv("GATEWAY_METRICS_ADDR"),
		MetricsToken:        getenv("GATEWAY_METRICS_TOKEN"),
		DevKeysFile:         getenv("GATEWAY_DEV_KEYS_FILE"),
		getenv:              getenv,
	}
	var err error
	if c.WebhookAllowPrivate, err = parseBool(get("GATEWAY_WEBHOOK_ALLOW_PRIVATE", "false")); err != nil {
		return c, fmt.Errorf("GATEWAY_WEBHOOK_ALLOW_PRIVATE: %w", err)
	}
	if c.Migrate, err = parseBool(get("GATEWAY_MIGRATE", "true")); err != nil {
		return c, fmt.Errorf("GATEWAY_MIGRATE: %w", err)
	}
	if c.DBPool, err = strconv.Atoi(get("GATEWAY_DB_POOL", "16")); err != nil || c.DBPool < 1 {
		return c, fmt.Errorf("GATEWAY_DB_POOL: want a positive integer")
	}
	if c.PlatformTimeout, err = time.ParseDuration(get("PLATFORM_TIMEOUT", "10s")); err != nil {
		return c, fmt.Errorf("PLATFORM_TIMEOUT: %w", err)
	}
	if c.SendRecordRetry, err = time.ParseDuration(get("GATEWAY_SEND_RECORD_RETRY", "5s")); err != nil || c.SendRecordRetry <= 0 {
		return c, fmt.Errorf("GATEWAY_SEND_RECORD_RETRY: want a positive duration")
	}
	if c.StatementTimeout, err = time.ParseDuration(get("GATEWAY_STATEMENT_TIMEOUT", "15s")); err != nil || c.StatementTimeout < time.Millisecond {
		return c, fmt.Errorf("GATEWAY_STATEMENT_TIMEOUT: want a duration of at least 1ms")
	}
	if c.TrustedProxies, err = parsePrefixes(getenv("GATEWAY_TRUSTED_PROXIES")); err != nil {
		return c, fmt.Errorf("GATEWAY_TRUSTED_PROXIES: %w", err)
	}
	if c.Replicas, err = strconv.Atoi(get("GATEWAY_REPLICAS", "1")); err != nil || c.Replicas < 1 {
		return c, fmt.Errorf("GATEWAY_REPLICAS: want a positive integer")
	}
	if c.TemplateSyncEvery, err = time.ParseDuration(get("GATEWAY_TEMPLATE_SYNC_EVERY", "15m")); err != nil {
		return c, fmt.Errorf("GATEWAY_TEMPLATE_SYNC_EVERY: %w", err)
	}
	if c.ReconcileEvery, err = time.ParseDuration(get("GATEWAY_RECONCILE_EVERY", "30s")); err != nil || c.ReconcileEvery <= 0 {
		return c, fmt.Errorf("GATEWAY_RECONCILE_EVERY: want a positive duration")
	}
	if c.Database, err = loadDatabaseConfig(getenv, c.DatabaseURL); err != nil {
		return c, err
	}
	if err := c.LogLevel.UnmarshalText([]byte(get("LOG_LEVEL", "info"))); err != nil {
		return c, fmt.Errorf("LOG_LEVEL: %w", err)
	}
	c.LogLevelSet = getenv("LOG_LEVEL") != ""
	if c.SimDelays, err = parseDelays(get("PLATFORM_SIM_DELAYS", "1s,3s,6s")); err != nil {
		return c, fmt.Errorf("PLATFORM_SIM_DELAYS: %w", err)
	}
	if c.Dashboard, err = loadDashboardOptions(getenv, c.WebhookAllowPrivate); err != nil {
		return c, err
	}
	if c.Broadcast, err = loadBroadcastConfig(getenv); err != nil {
		return c, err
	}
	if c.Limits, err = loadLimits(getenv); err != nil {
		return c, err
	}
	key := getenv("GATEWAY_SECRET_KEY")
	if key == "" {
		key, c.SecretKeyIsDefault = defaultSecretKey, true
	}
	if c.SecretKey, err = parseKey(key); err != nil {
		return c, fmt.Errorf("GATEWAY_SECRET_KEY: %w", err)
	}
	if prev := getenv("GATEWAY_SECRET_KEY_PREVIOUS"); prev != "" {
		if c.SecretKeyPrevious, err = parseKey(prev); err != nil {
			return c, fmt.Errorf("GATEWAY_SECRET_KEY_PREVIOUS: %w", err)
		}
	}
	return c, nil
}

// development reports whether GATEWAY_ENV=development (make run, gateway dev, the tests).
func (c config) development() bool { return c.Env == "development" }

// productionProblems names, one line each, the settings that still hold a built-in
// development value or a development-only choice, with how to make a real one; empty when
// there are none.
func (c config) productionProblems() []string {
	var out []string
	if c.SecretKeyIsDefault || bytes.Equal(c.SecretKey, mustParseKey(defaultSecretKey)) {
		out = append(out, "GATEWAY_SECRET_KEY is the built-in development key: make one with `openssl rand -hex 32` (keep it: it decrypts the stored secrets)")
	}
	if c.PlatformAppSecret == defaultAppSecret {
		out = append(out, "PLATFORM_APP_SECRET is the built-in development value: set your Meta app's secret (App settings > Basic)")
	}
	if c.PlatformVerifyToken == defaultVerifyToken {
		out = append(out, "PLATFORM_VERIFY_TOKEN is the built-in development value: make one with `openssl rand -hex 32` and give the same to Meta's webhook setup")
	}
	if c.WebhookAllowPrivate {
		out = append(out, "GATEWAY_WEBHOOK_ALLOW_PRIVATE=true lets customer webhooks reach private, loopback and link-local addresses (this host, its network, cloud metadata): unset it")
	}
	if u, err := url.Parse(c.PlatformBaseURL); err != nil || u.Scheme != "https" || u.Host == "" {
		out = append(out, fmt.Sprintf("PLATFORM_BASE_URL %q is not an https URL (access tokens would cross the network in clear): set https://graph.facebook.com/v23.0", c.PlatformBaseURL))
	}
	return out
}

// refuseDevelopmentValues is the one rule for the built-in development values, applied by
// serve and by every admin command before either touches the database: outside
// GATEWAY_ENV=development it refuses them, naming each with its fix; in development it logs
// each one as a warning.
func (c config) refuseDevelopmentValues(command string, logger *slog.Logger) error {
	problems := c.productionProblems()
	if len(problems) == 0 {
		return nil
	}
	if !c.development() {
		return fmt.Errorf("refusing to %s with development settings (set GATEWAY_ENV=development for local use):\n  %s",
			command, strings.Join(problems, "\n  "))
	}
	for _, p := range problems {
		logger.Warn("development setting in use (GATEWAY_ENV=development): " + p)
	}
	return nil
}

func mustParseKey(s string) []byte {
	b, err := parseKey(s)
	if err != nil {
		panic(err)
	}
	return b
}

// parseKey accepts 32 bytes as 64 hex characters or standard base64.
func parseKey(s string) ([]byte, error) {
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	return nil, fmt.Errorf("want 32 bytes as 64 hex characters or base64")
}

// parsePrefixes reads comma-separated CIDRs; a bare address is its own /32 or /128.
func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if a, err := netip.ParseAddr(f); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR or an address", f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func parseBool(s string) (bool, error) { return strconv.ParseBool(s) }

// parseDelays reads three comma-separated durations in the order of the statuses they time
// (sent, delivered, read); each is at least the one before it.
func parseDelays(s string) ([3]time.Duration, error) {
	var out [3]time.Duration
	f := strings.Split(s, ",")
	if len(f) != 3 {
		return out, fmt.Errorf("want three durations: sent, delivered, read (e.g. 1s,3s,6s)")
	}
	for i, v := range f {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d < 0 || (i > 0 && d < out[i-1]) {
			return out, fmt.Errorf("want three durations, each at least the one before (e.g. 1s,3s,6s)")
		}
		out[i] = d
	}
	return out, nil
}

// logger writes JSON lines at the configured level to w (run's stderr).
func (c config) logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: c.LogLevel}))
}

// benchConfig is what `gateway bench` takes from the configuration.
func (c config) benchConfig() bench.Config {
	return bench.Config{DatabaseURL: c.DatabaseURL, SecretKey: c.SecretKey, PlatformBaseURL: c.PlatformBaseURL,
		PlatformAppSecret: c.PlatformAppSecret, PlatformTimeout: c.PlatformTimeout, DBPool: c.DBPool, LogLevel: c.LogLevel}
}
