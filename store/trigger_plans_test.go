package store_test

import (
	"context"
	"testing"

	"gateway/store/storetest"
)

// Every trigger that writes plans its statements generically (migration 000023): with custom
// plans each row re-planned each of its statements, a quarter of PostgreSQL's CPU per send; the
// statement triggers (000030) keep the setting too. And none compiles its plans (jit = off,
// 000031): a kept plan whose estimate passed jit_above_cost compiled at every call, 15 to 336 ms
// each. A CREATE OR REPLACE FUNCTION that forgets to repeat either setting fails here.
func TestHotTriggersPlanGenerically(t *testing.T) {
	s := storetest.New(t)
	var rows []struct {
		Trigger  string `db:"trigger"`
		Function string `db:"function"`
		Generic  bool   `db:"generic"`
		NoJIT    bool   `db:"nojit"`
	}
	err := s.DB().SelectContext(context.Background(), &rows, `SELECT t.tgrelid::regclass::text || '.' || t.tgname AS trigger,
			p.proname AS function,
			COALESCE('plan_cache_mode=force_generic_plan' = ANY (p.proconfig), false) AS generic,
			COALESCE('jit=off' = ANY (p.proconfig), false) AS nojit
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
	for _, f := range []string{"messages_count_rows", "contacts_index_write", "contacts_index_inserted", "events_fan_out"} {
		if !functions[f] {
			t.Errorf("no trigger that writes runs %s(); found %v", f, functions)
		}
	}
	for _, r := range rows {
		if !r.Generic {
			t.Errorf("trigger %s: function %s() has no plan_cache_mode = force_generic_plan", r.Trigger, r.Function)
		}
		if !r.NoJIT {
			t.Errorf("trigger %s: function %s() has no jit = off", r.Trigger, r.Function)
		}
	}
}
