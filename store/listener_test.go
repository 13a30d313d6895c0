package store_test

import (
	"context"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// openOwnStore opens a store on a fresh test database and returns it with the database's DSN
// (for a LISTEN connection of its own); the pool is closed when the test ends.
func openOwnStore(t *testing.T) (*store.Store, string) {
	t.Helper()
	dsn := storetest.DSN(t)
	db, err := store.Open(context.Background(), dsn, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := store.New(db, storetest.TestKey)
	if err != nil {
		t.Fatal(err)
	}
	return s, dsn
}

// TestWakeOnEvents: the store's writers of events signal the channels of WakeOnEvents once their
// statement committed, never block on a full channel, and stop after cancel.
func TestWakeOnEvents(t *testing.T) {
	s, _ := openOwnStore(t)
	f := newWHFixtureOn(t, s, "wake")
	c := make(chan struct{}, 1)
	cancel := s.WakeOnEvents(c)
	contact := func(mobile string) {
		t.Helper()
		if _, created, err := s.UpsertContact(context.Background(), f.account.ID, store.ContactInput{Mobile: mobile}); err != nil || !created {
			t.Fatalf("contact %s: created %v, %v", mobile, created, err)
		}
	}
	contact("15550001001")
	contact("15550001002") // the channel is full: merged, not blocked
	select {
	case <-c:
	default:
		t.Fatal("no signal after a contact.created")
	}
	if _, created, err := s.UpsertContact(context.Background(), f.account.ID, store.ContactInput{Mobile: "15550001001"}); err != nil || created {
		t.Fatalf("existing contact: created %v, %v", created, err)
	}
	select {
	case <-c:
		t.Fatal("signal without an event written")
	default:
	}
	cancel()
	cancel() // idempotent
	contact("15550001003")
	select {
	case <-c:
		t.Fatal("signal after cancel")
	default:
	}
}

func TestDeliveryListenerWakesOnCommit(t *testing.T) {
	s, dsn := openOwnStore(t)
	f := newWHFixtureOn(t, s, "listen")
	l := store.ListenDeliveries(dsn, func(err error) { t.Log(err) })
	defer l.Close()
	// The first wake-up comes once LISTEN is in place.
	select {
	case <-l.C():
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up after LISTEN")
	}
	// An event alone does not notify (the fan-out is quiet: migrations/000019_quiet_fanout).
	if _, err := s.DB().Exec(`INSERT INTO events (account_id, type, data) VALUES ($1, 'contact.created', '{}')`, f.account.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.C():
		t.Fatal("woken by an event: the fan-out trigger must not NOTIFY")
	case <-time.After(300 * time.Millisecond):
	}
	// A writer outside the dispatcher's process notifies (a redelivery does), at commit.
	tx, err := s.DB().Beginx()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`SELECT pg_notify($1, '')`, store.DeliveriesChannel); err != nil {
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
