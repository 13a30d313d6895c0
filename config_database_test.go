package main

import (
	"strings"
	"testing"
	"time"
)

// DATABASE_DIRECT_URL naming another connection than DATABASE_URL takes DATABASE_URL for a
// transaction pooler: no named prepared statements, LISTEN and migrations on the direct
// connection. Without it, a pooler named by GATEWAY_DB_PREPARED=false has no LISTEN (the
// wake-ups poll) and no migrations; GATEWAY_DB_PREPARED wins over the default either way.
func TestDatabaseConfig(t *testing.T) {
	const pooler, direct = "postgres://gw@127.0.0.1:6432/gw", "postgres://gw@127.0.0.1:5432/gw"
	defer func(f func(string) string) { defaultDirectURL = f }(defaultDirectURL)
	defaultDirectURL = nil
	for _, c := range []struct {
		name                       string
		vars                       map[string]string
		pooled                     bool
		listen, migrate, wantError string
	}{
		{"direct only", map[string]string{"DATABASE_URL": direct}, false, direct, direct, ""},
		{"direct twice", map[string]string{"DATABASE_URL": direct, "DATABASE_DIRECT_URL": direct}, false, direct, direct, ""},
		{"pooler and direct", map[string]string{"DATABASE_URL": pooler, "DATABASE_DIRECT_URL": direct}, true, direct, direct, ""},
		{"pooler, prepared forced", map[string]string{"DATABASE_URL": pooler, "DATABASE_DIRECT_URL": direct, "GATEWAY_DB_PREPARED": "true"}, false, direct, direct, ""},
		{"pooler alone", map[string]string{"DATABASE_URL": pooler, "GATEWAY_DB_PREPARED": "false"}, true, "", "", "DATABASE_DIRECT_URL"},
		{"direct, unprepared", map[string]string{"DATABASE_URL": direct, "DATABASE_DIRECT_URL": direct, "GATEWAY_DB_PREPARED": "false"}, true, direct, direct, ""},
	} {
		cfg, err := loadConfig(func(k string) string { return c.vars[k] })
		if err != nil {
			t.Fatal(err)
		}
		if cfg.pooled() != c.pooled || cfg.listenURL() != c.listen {
			t.Errorf("%s: pooled %t, LISTEN on %q; want %t, %q", c.name, cfg.pooled(), cfg.listenURL(), c.pooled, c.listen)
		}
		m, err := newMigrator(cfg)
		if c.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantError) {
				t.Errorf("%s: migrations: %v, want an error naming %s", c.name, err, c.wantError)
			}
		} else if cfg.directURL() != c.migrate {
			t.Errorf("%s: migrations on %q, want %q", c.name, cfg.directURL(), c.migrate)
		}
		if m != nil {
			m.Close()
		}
	}
	cfg := mustConfig(t, func(k string) string { return map[string]string{"DATABASE_REPLICA_URL": direct}[k] })
	if cfg.Database.ReplicaURL != direct || cfg.Database.ReplicaMaxLag != 5*time.Second {
		t.Errorf("replica %q within %s; want %q within 5s", cfg.Database.ReplicaURL, cfg.Database.ReplicaMaxLag, direct)
	}
	for _, bad := range []map[string]string{{"GATEWAY_REPLICA_MAX_LAG": "0s"}, {"GATEWAY_REPLICA_MAX_LAG": "soon"}, {"GATEWAY_DB_PREPARED": "maybe"}} {
		if _, err := loadConfig(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
