package server

import (
	"context"
	"log/slog"

	"gateway/store"
)

// TenantListener keeps the server's phone-number-id → account cache (tenantByPhoneNumberID)
// current: a number connected, moved or disconnected — by this replica, another one, or an
// admin command — is announced by a database trigger (store.ListenConnections) and its entry
// is dropped at once, instead of after a TTL. While the listener is down the cache falls back
// to the short TTL.
type TenantListener struct {
	s   *Server
	dsn string
	log *slog.Logger
	l   *store.ConnectionListener
}

// NewTenantListener returns the listener for srv over the database at dsn. It starts nothing
// and cannot fail.
func NewTenantListener(srv *Server, dsn string, logger *slog.Logger) *TenantListener {
	if logger == nil {
		logger = slog.Default()
	}
	return &TenantListener{s: srv, dsn: dsn, log: logger.With("service", "tenant_listener")}
}

// Start starts listening (the connection is made in the background) and returns nil.
func (t *TenantListener) Start(ctx context.Context) error {
	t.l = store.ListenConnections(t.dsn, func(pnid string) {
		t.s.forgetTenant(pnid)
		if pnid == "" {
			t.s.tenantsListened.Store(true)
		}
	}, func(err error) {
		t.s.tenantsListened.Store(false)
		t.log.Warn("tenant cache listener", "error", err.Error())
	})
	return nil
}

// Stop stops listening; the cache falls back to its TTL. It is idempotent.
func (t *TenantListener) Stop() {
	if t.l != nil {
		t.l.Close()
	}
	t.s.tenantsListened.Store(false)
}
