package store_test

import (
	"context"
	"testing"

	"gateway/migrations"
	"gateway/store"
	"gateway/store/storetest"
)

// Migration 000038 goes down with contacts known only by a user id and their messages (which
// the older schema cannot hold: they are removed) and up again.
func TestMigration38DownAndUp(t *testing.T) {
	st, dsn := storetest.NewWithDSN(t)
	ctx := context.Background()
	a := newAccount(t, st, "mig38")
	if _, err := st.RecordInbound(ctx, a.ID, userOnly("wamid.G1", "US.1", "", "hidden")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordInbound(ctx, a.ID, inbound("wamid.G2", "4915112345678", "Ann", "visible")); err != nil {
		t.Fatal(err)
	}
	m, err := store.NewMigrator(dsn, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	v, _, err := m.Version()
	if err != nil || v < 38 {
		t.Fatalf("version %d %v", v, err)
	}
	// Down to 37, past the migrations after 38 that do not concern contacts.
	if err := m.Down(int(v) - 37); err != nil {
		t.Fatalf("down: %v", err)
	}
	var contacts, messages int
	if err := st.DB().Get(&contacts, `SELECT count(*) FROM contacts WHERE account_id = $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.DB().Get(&messages, `SELECT count(*) FROM messages WHERE account_id = $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	if contacts != 1 || messages != 1 {
		t.Fatalf("after down: %d contacts, %d messages", contacts, messages)
	}
	if err := m.Up(); err != nil {
		t.Fatalf("up: %v", err)
	}
}
