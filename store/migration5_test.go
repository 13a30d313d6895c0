package store_test

import (
	"context"
	"testing"

	"gateway/migrations"
	"gateway/store"
	"gateway/store/storetest"
)

// Migration 000005 goes down and up again, and its backfill splits the names of existing
// contacts at the first space into firstname and lastname.
func TestMigrationHardeningBackfill(t *testing.T) {
	dsn := storetest.DSN(t)
	m, err := store.NewMigrator(dsn, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// Down, one migration at a time, to version 4 (the versions are not contiguous).
	for {
		v, _, err := m.Version()
		if err != nil {
			t.Fatal(err)
		}
		if v <= 4 {
			break
		}
		if err := m.Down(1); err != nil {
			t.Fatalf("down from %d: %v", v, err)
		}
	}
	db, err := store.Open(context.Background(), dsn, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var acct int64
	if err := db.Get(&acct, `INSERT INTO accounts (name, email, join_code) VALUES ('A', 'a@example.com', 'mig-5') RETURNING id`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO contacts (account_id, mobile, name) VALUES
		($1, '15550000001', 'Ana Maria Souza'), ($1, '15550000002', 'Cher'), ($1, '15550000003', '')`, acct); err != nil {
		t.Fatal(err)
	}
	if err := m.Up(); err != nil {
		t.Fatalf("up: %v", err)
	}
	want := map[string][3]string{
		"15550000001": {"Ana", "Maria Souza", "Ana Maria Souza"},
		"15550000002": {"Cher", "", "Cher"},
		"15550000003": {"", "", ""},
	}
	var rows []struct {
		Mobile    string `db:"mobile"`
		Firstname string `db:"firstname"`
		Lastname  string `db:"lastname"`
		Name      string `db:"name"`
	}
	if err := db.Select(&rows, `SELECT mobile, firstname, lastname, name FROM contacts WHERE account_id = $1`, acct); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if w := want[r.Mobile]; [3]string{r.Firstname, r.Lastname, r.Name} != w {
			t.Errorf("%s: %q %q %q, want %q", r.Mobile, r.Firstname, r.Lastname, r.Name, w)
		}
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
}
