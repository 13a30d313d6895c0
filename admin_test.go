package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Every operator command is in the one table, with its flags and a summary; `gateway admin
// help` lists every entry, and a name that is not in the table is refused, pointing at help.
func TestAdminCommandTable(t *testing.T) {
	if len(adminCommands) == 0 {
		t.Fatal("the command table is empty")
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"admin", "help"}, func(string) string { return "" }, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	seen := map[string]bool{}
	for _, c := range adminCommands {
		if len(strings.Fields(c.name)) != 2 {
			t.Errorf("%q: a command is named \"group verb\"", c.name)
		}
		if seen[c.name] {
			t.Errorf("%q is in the table twice", c.name)
		}
		seen[c.name] = true
		if strings.TrimSpace(c.usage) == "" || strings.TrimSpace(c.summary) == "" || c.run == nil {
			t.Errorf("%q: usage %q, summary %q, run set %t", c.name, c.usage, c.summary, c.run != nil)
		}
		if !strings.Contains(help, "gateway admin "+c.name+" "+c.usage+"\n") || !strings.Contains(help, c.summary) {
			t.Errorf("help does not list %q with its usage and summary:\n%s", c.name, help)
		}
	}
	if n := strings.Count(help, "gateway admin "); n != len(adminCommands) {
		t.Errorf("help lists %d commands, the table has %d", n, len(adminCommands))
	}
	err := run(context.Background(), []string{"admin", "account", "explode"}, func(string) string { return "" }, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "gateway admin help") {
		t.Fatalf("an unknown command: %v", err)
	}
}
