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

// The send-target cache is on while the listener listens, and another process's change of an
// account's templates reaches it through NOTIFY: a change made with the triggers off (no
// notification) is not seen, proving the answer is cached; the next change that notifies makes
// the store read again.
func TestSendTargetsForgottenOnNotify(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	l := server.NewTenantListener(env.Server, env.DSN, nil)
	if err := l.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	a := pwNewTenant(t, env, "Acme Ltd")
	ctx := context.Background()
	id := a.Account.ID
	if _, err := env.Store.SyncTemplates(ctx, id, []store.TemplateInput{{PlatformID: "71", Name: "reminder", Language: "en_US",
		Status: "APPROVED", Category: "UTILITY"}}); err != nil {
		t.Fatal(err)
	}
	templates := func() int {
		_, ts, err := env.Store.SendTarget(ctx, id, 0, "reminder", "")
		if err != nil {
			t.Fatal(err)
		}
		return len(ts)
	}
	silently := func(status string) {
		tx := env.Store.DB().MustBegin()
		defer tx.Rollback()
		tx.MustExec(`SET LOCAL session_replication_role = replica`) // no triggers: no notification
		tx.MustExec(`UPDATE templates SET status = $2 WHERE account_id = $1`, id, status)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	wait.For(t, func() bool {
		templates() // cached once the listener listens
		silently("PAUSED")
		if templates() == 1 {
			return true
		}
		silently("APPROVED")
		return false
	}, 5*time.Second, "the send-target cache to be on")
	if _, err := env.Store.DB().Exec(`UPDATE templates SET updated_at = now() WHERE account_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool { return templates() == 0 }, 5*time.Second, "the notified change to reach the cache")
	l.Stop()
	silently("APPROVED")
	if n := templates(); n != 1 {
		t.Fatalf("after Stop the cache still answers: %d templates", n)
	}
}
