package server

import (
	"context"
	"log/slog"
	"strconv"

	"gateway/store"
)

// TenantListener keeps the server's phone-number-id → account cache (tenantByPhoneNumberID)
// and the store's send-target cache (store.CacheSendTargets) current: a number connected, moved
// or disconnected, or an account's templates changed — by this replica, another one, or an
// admin command — is announced by a database trigger (store.ListenConnections) and the entries
// it touches are dropped at once. While the listener is down the phone number cache falls back
// to its short TTL and the send-target cache is off.
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
	t.l = store.ListenConnections(t.dsn, func(channel, payload string) {
		switch channel {
		case store.ConnectionsChannel:
			t.s.forgetTenant(payload)
		case store.SendTargetsChannel:
			account, err := strconv.ParseInt(payload, 10, 64)
			if err != nil || account <= 0 {
				account = 0 // not an account id: forget them all
			}
			t.s.store.ForgetSendTargets(account)
		default: // listening (again): anything may have changed meanwhile
			t.s.forgetTenant("")
			t.s.tenantsListened.Store(true)
			t.s.store.CacheSendTargets(true)
		}
	}, func(err error) {
		t.s.tenantsListened.Store(false)
		t.s.store.CacheSendTargets(false)
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
	t.s.store.CacheSendTargets(false)
}
