package storetest

import (
	"context"
	"testing"

	"github.com/jmoiron/sqlx"
)

// Building a template drops the templates of other migration sets, and keeps the current one
// and any template still being built.
func TestStaleTemplatesDropped(t *testing.T) {
	ctx := context.Background()
	admin, err := sqlx.Open("postgres", AdminDSN())
	if err != nil {
		t.Fatal(err)
	}
	current, err := ensureTemplate(ctx, admin, AdminDSN())
	if err != nil {
		t.Fatal(err)
	}
	stale, building := "gw_tmpl_0123456789abcdef", "gw_tmpl_fedcba9876543210_build"
	for _, n := range []string{stale, building} {
		admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+n)
		if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+n); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, n := range []string{stale, building} {
			admin.ExecContext(context.Background(), `DROP DATABASE IF EXISTS `+n)
		}
		admin.Close()
	})
	conn, err := admin.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dropStaleTemplates(ctx, conn, current)
	for name, want := range map[string]bool{stale: false, building: true, current: true} {
		var exists bool
		if err := admin.GetContext(ctx, &exists, `SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)`, name); err != nil {
			t.Fatal(err)
		}
		if exists != want {
			t.Errorf("database %s exists: %v, want %v", name, exists, want)
		}
	}
}

// LineDiff names each differing line with its number in its text, the removed before the added,
// stops at its limit, and is empty for equal texts.
func TestLineDiff(t *testing.T) {
	if d := LineDiff("a\nb\n", "a\nb\n", 10); d != "" {
		t.Errorf("equal texts: %q", d)
	}
	want := "-    2 b\n+    2 B\n+    4 d"
	if d := LineDiff("a\nb\nc", "a\nB\nc\nd", 10); d != want {
		t.Errorf("got\n%s\nwant\n%s", d, want)
	}
	if d := LineDiff("a\nb\nc", "x\ny\nz", 2); d != "-    1 a\n-    2 b\n… (more differences)" {
		t.Errorf("limit 2: %q", d)
	}
}
