package store_test

import (
	"flag"
	"os"
	"testing"

	"gateway/store/storetest"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite schema.sql from a freshly migrated database (make schema)")

// schema.sql is the schema the migrations make, as pg_dump shows it: a change to the migrations
// without `make schema` (or an edit of the file by hand) fails here, with the differing lines.
func TestSchemaFile(t *testing.T) {
	got, err := storetest.Schema(storetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	if *updateSchema {
		if err := os.WriteFile("schema.sql", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("schema.sql")
	if err != nil {
		t.Fatalf("%v: run make schema", err)
	}
	if d := storetest.LineDiff(string(want), got, 60); d != "" {
		t.Errorf("store/schema.sql is not the migrated database's schema: run make schema and commit it.\n"+
			"- store/schema.sql, + the migrated database:\n%s", d)
	}
}
