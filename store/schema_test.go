package store_test

import (
	"flag"
	"os"
	"strings"
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

// Every function and trigger of the schema (not those of extensions) is named in
// docs/schema.md's table of the rules kept in SQL, with its job.
func TestSchemaRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/schema.md")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := storetest.New(t).DB().Select(&names, `SELECT p.proname FROM pg_proc p
			WHERE p.pronamespace = 'public'::regnamespace
				AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
		UNION SELECT t.tgname FROM pg_trigger t WHERE NOT t.tgisinternal
		ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no functions or triggers found: the query is stale")
	}
	for _, n := range names {
		if !strings.Contains(string(doc), "`"+n+"`") {
			t.Errorf("function or trigger %s is not in docs/schema.md: add it to the table of rules kept in SQL, with its job", n)
		}
	}
}
