package main

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"gateway/server/bench"
)

// config is every setting, read once from the environment; each has a default that works on a
// developer's machine.
type config struct {
	DatabaseURL         string
	Addr                string
	SecretKey           []byte
	SecretKeyIsDefault  bool
	PlatformBaseURL     string
	PlatformAppSecret   string
	PlatformVerifyToken string
	PlatformTimeout     time.Duration
	SendRecordRetry     time.Duration
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
	TemplateSyncEvery   time.Duration
	ReconcileEvery      time.Duration
}

// defaultSecretKey is for local use only; serve warns when it is in use.
const defaultSecretKey = "6c6f63616c2d646576656c6f706d656e742d6b65792d6e6f742d736563726574"

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
		PlatformAppSecret:   get("PLATFORM_APP_SECRET", "local-app-secret"),
		PlatformVerifyToken: get("PLATFORM_VERIFY_TOKEN", "local-verify-token"),
		SandboxPhoneNumber:  get("SANDBOX_PHONE_NUMBER", "15550009999"),
		SandboxPhoneID:      get("SANDBOX_PHONE_NUMBER_ID", "100000000000001"),
		SandboxAccessToken:  get("SANDBOX_ACCESS_TOKEN", "sandbox-access-token"),
		DemoKey:             getenv("DEMO_KEY"),
		SimAddr:             get("PLATFORM_SIM_ADDR", "127.0.0.1:8081"),
		SimWebhookURL:       get("PLATFORM_SIM_WEBHOOK_URL", "http://127.0.0.1:8080/platform/webhook"),
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
	if c.TemplateSyncEvery, err = time.ParseDuration(get("GATEWAY_TEMPLATE_SYNC_EVERY", "15m")); err != nil {
		return c, fmt.Errorf("GATEWAY_TEMPLATE_SYNC_EVERY: %w", err)
	}
	if c.ReconcileEvery, err = time.ParseDuration(get("GATEWAY_RECONCILE_EVERY", "30s")); err != nil || c.ReconcileEvery <= 0 {
		return c, fmt.Errorf("GATEWAY_RECONCILE_EVERY: want a positive duration")
	}
	if err := c.LogLevel.UnmarshalText([]byte(get("LOG_LEVEL", "info"))); err != nil {
		return c, fmt.Errorf("LOG_LEVEL: %w", err)
	}
	key := getenv("GATEWAY_SECRET_KEY")
	if key == "" {
		key, c.SecretKeyIsDefault = defaultSecretKey, true
	}
	if c.SecretKey, err = parseKey(key); err != nil {
		return c, fmt.Errorf("GATEWAY_SECRET_KEY: %w", err)
	}
	return c, nil
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

func parseBool(s string) (bool, error) { return strconv.ParseBool(s) }

// logger writes JSON lines at the configured level to w (run's stderr).
func (c config) logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: c.LogLevel}))
}

// benchConfig is what `gateway bench` takes from the configuration.
func (c config) benchConfig() bench.Config {
	return bench.Config{DatabaseURL: c.DatabaseURL, SecretKey: c.SecretKey, PlatformBaseURL: c.PlatformBaseURL,
		PlatformAppSecret: c.PlatformAppSecret, PlatformTimeout: c.PlatformTimeout, DBPool: c.DBPool, LogLevel: c.LogLevel}
}
