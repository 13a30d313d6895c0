package store_test

import (
	"context"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

func TestDeliveryListenerWakesOnCommit(t *testing.T) {
	dsn := storetest.DSN(t)
	db, err := store.Open(context.Background(), dsn, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := store.New(db, storetest.TestKey)
	if err != nil {
		t.Fatal(err)
	}
	f := newWHFixtureOn(t, s, "listen")
	l := store.ListenDeliveries(dsn, func(err error) { t.Log(err) })
	defer l.Close()
	// The first wake-up comes once LISTEN is in place.
	select {
	case <-l.C():
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up after LISTEN")
	}
	tx, err := s.DB().Beginx()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO events (account_id, type, data) VALUES ($1, 'contact.created', '{}')`, f.account.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.C():
		t.Fatal("woken before commit")
	case <-time.After(200 * time.Millisecond):
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.C():
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up after commit")
	}
	l.Close()
	l.Close() // idempotent
}
