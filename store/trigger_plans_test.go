package store_test

import (
	"context"
	"testing"

	"gateway/store/storetest"
)

// Every trigger that writes plans its statements generically (migration 000023): with custom
// plans each row re-planned each of its statements, a quarter of PostgreSQL's CPU per send; the
// statement triggers (000030) keep the setting too. A CREATE OR REPLACE FUNCTION that forgets
// to repeat it fails here.
func TestHotTriggersPlanGenerically(t *testing.T) {
	s := storetest.New(t)
	var rows []struct {
		Trigger  string `db:"trigger"`
		Function string `db:"function"`
		Generic  bool   `db:"generic"`
	}
	err := s.DB().SelectContext(context.Background(), &rows, `SELECT t.tgrelid::regclass::text || '.' || t.tgname AS trigger,
			p.proname AS function,
			COALESCE('plan_cache_mode=force_generic_plan' = ANY (p.proconfig), false) AS generic
		FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
		WHERE NOT t.tgisinternal AND p.prosrc ~* '\m(insert\s+into|delete\s+from|update\s+\w+\s+set)\M'
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	functions := map[string]bool{}
	for _, r := range rows {
		functions[r.Function] = true
	}
	for _, f := range []string{"messages_count_rows", "contacts_index_write", "events_fan_out"} {
		if !functions[f] {
			t.Errorf("no trigger that writes runs %s(); found %v", f, functions)
		}
	}
	for _, r := range rows {
		if !r.Generic {
			t.Errorf("trigger %s: function %s() has no plan_cache_mode = force_generic_plan", r.Trigger, r.Function)
		}
	}
}
