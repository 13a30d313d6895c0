package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"gateway/store"
)

// databaseConfig is where the gateway finds PostgreSQL past one connection string.
type databaseConfig struct {
	// DirectURL (DATABASE_DIRECT_URL) reaches the server without a transaction pooler: LISTEN
	// and migrations use it. Empty means DATABASE_URL is direct (unless GATEWAY_DB_PREPARED
	// says otherwise).
	DirectURL string
	// ReplicaURL (DATABASE_REPLICA_URL) is a streaming replica for the reads that may lag;
	// empty means none. ReplicaMaxLag (GATEWAY_REPLICA_MAX_LAG, default 5 s) is how far behind
	// it may be before those reads go to the primary.
	ReplicaURL    string
	ReplicaMaxLag time.Duration
	// Prepared (GATEWAY_DB_PREPARED) makes the pool use named prepared statements. The default
	// is true when DATABASE_URL is the direct connection and false when DATABASE_DIRECT_URL
	// names another (DATABASE_URL is then taken to be a transaction pooler).
	Prepared bool
}

// defaultDirectURL, when not nil, gives DATABASE_DIRECT_URL's default for a DATABASE_URL: the
// tests set it when they run through a transaction pooler (storetest's TEST_POOLER_URL).
var defaultDirectURL func(url string) string

func loadDatabaseConfig(getenv func(string) string, url string) (databaseConfig, error) {
	d := databaseConfig{DirectURL: getenv("DATABASE_DIRECT_URL"), ReplicaURL: getenv("DATABASE_REPLICA_URL")}
	if d.DirectURL == "" && defaultDirectURL != nil && url != "" {
		d.DirectURL = defaultDirectURL(url)
	}
	d.Prepared = d.DirectURL == "" || d.DirectURL == url
	if v := getenv("GATEWAY_DB_PREPARED"); v != "" {
		var err error
		if d.Prepared, err = parseBool(v); err != nil {
			return d, fmt.Errorf("GATEWAY_DB_PREPARED: %w", err)
		}
	}
	d.ReplicaMaxLag = 5 * time.Second
	if v := getenv("GATEWAY_REPLICA_MAX_LAG"); v != "" {
		lag, err := time.ParseDuration(v)
		if err != nil || lag <= 0 {
			return d, fmt.Errorf("GATEWAY_REPLICA_MAX_LAG: want a positive duration")
		}
		d.ReplicaMaxLag = lag
	}
	return d, nil
}

// pooled reports whether DATABASE_URL is taken to be a transaction pooler: no named prepared
// statements, and no session state relied on.
func (c config) pooled() bool { return !c.Database.Prepared }

// directURL is the connection of migrations: DATABASE_DIRECT_URL, else DATABASE_URL.
func (c config) directURL() string {
	if c.Database.DirectURL != "" {
		return c.Database.DirectURL
	}
	return c.DatabaseURL
}

// listenURL is the connection LISTEN uses, or "" when there is none (DATABASE_URL is a pooler
// and no direct URL is set): the wake-ups then come from polling.
func (c config) listenURL() string {
	if c.Database.DirectURL != "" {
		return c.Database.DirectURL
	}
	if c.pooled() {
		return ""
	}
	return c.DatabaseURL
}

// poolOptions are the main pool's and the replica's options.
func (c config) poolOptions() store.PoolOptions {
	o := store.PoolOptions{MaxConns: c.DBPool, Unprepared: c.pooled()}
	if o.Unprepared && c.Database.DirectURL != "" {
		o.DescribeDSN = c.Database.DirectURL
	}
	return o
}

// openPools opens the primary pool and, when DATABASE_REPLICA_URL is set, the replica's. The
// statement timeout is a parameter of each direct connection; through a pooler, which refuses
// startup parameters it does not know and hands server connections between clients, it is the
// role's setting in the database, which openPools sets first on the direct connection so that
// every server connection the pooler opens has it.
func openPools(ctx context.Context, cfg config, logger *slog.Logger) (primary, replica *sqlx.DB, err error) {
	url := store.WithStatementTimeout(cfg.DatabaseURL, cfg.StatementTimeout)
	if cfg.pooled() {
		url = cfg.DatabaseURL
		if err := store.SetRoleStatementTimeout(ctx, cfg.directURL(), cfg.StatementTimeout); err != nil {
			return nil, nil, fmt.Errorf("statement timeout of the role (GATEWAY_STATEMENT_TIMEOUT through a pooler): %w", err)
		}
	}
	if primary, err = store.OpenPool(ctx, url, cfg.poolOptions()); err != nil {
		return nil, nil, err
	}
	if cfg.Database.ReplicaURL == "" {
		return primary, nil, nil
	}
	rurl := cfg.Database.ReplicaURL
	if !cfg.pooled() {
		rurl = store.WithStatementTimeout(rurl, cfg.StatementTimeout)
	}
	// A replica that does not answer yet is not fatal: its reads go to the primary until it does.
	o := cfg.poolOptions()
	o.Lazy = true
	if replica, err = store.OpenPool(ctx, rurl, o); err != nil {
		primary.Close()
		return nil, nil, fmt.Errorf("DATABASE_REPLICA_URL: %w", err)
	}
	logger.Info("reads that may lag go to the replica while it is within its lag bound", "max_lag", cfg.Database.ReplicaMaxLag.String())
	return primary, replica, nil
}
