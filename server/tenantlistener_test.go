package server_test

import (
	"context"
	"testing"
	"time"

	"gateway/server"
	"gateway/server/servertest"
	"gateway/server/servertest/wait"
	"gateway/store"
)

// A number moved from one account to another is routed to the new account at once: the
// phone-number-id → account cache is invalidated by LISTEN/NOTIFY, not after a TTL (the clock
// is frozen here, so a TTL would never expire). Before the fix the old account kept receiving
// the number's status reports until the TTL ran out.
func TestTenantCacheInvalidatedWhenNumberMoves(t *testing.T) {
	t.Parallel()
	frozen := time.Now()
	env := servertest.New(t, servertest.Config{Clock: func() time.Time { return frozen }})
	l := server.NewTenantListener(env.Server, env.DSN, nil)
	if err := l.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	a := pwNewTenant(t, env, "Acme Ltd")
	b := pwNewTenant(t, env, "Globex Corp")
	ma := pwSeedMessage(t, env, a, "wamid.A1", "sent")
	mb := pwSeedMessage(t, env, b, "wamid.B1", "sent")
	// A's number is cached by a first report.
	pwPostOK(t, env, pwStatuses(t, a.Conn, pwStatus("wamid.A1", "delivered", frozen.Unix())))
	if got := pwMessageStatus(t, env, ma); got != "delivered" {
		t.Fatalf("A's message %s", got)
	}
	// The number moves to B.
	ctx := context.Background()
	if err := env.Store.DisconnectNumber(ctx, a.Account.ID); err != nil {
		t.Fatal(err)
	}
	moved := b.Conn
	moved.PhoneNumberID = a.Conn.PhoneNumberID
	if _, err := env.Store.ConnectNumber(ctx, store.Connection{AccountID: b.Account.ID, WabaID: moved.WabaID,
		PhoneNumberID: moved.PhoneNumberID, PhoneNumber: moved.PhoneNumber, AccessToken: "t"}); err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool {
		pwPostOK(t, env, pwStatuses(t, moved, pwStatus("wamid.B1", "delivered", frozen.Unix())))
		return pwMessageStatus(t, env, mb) == "delivered"
	}, 5*time.Second, "the moved number's report to reach its new account")
}
