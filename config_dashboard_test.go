package main

import (
	"testing"
	"time"
)

// The export settings are read from the environment; zero (unset) leaves the dashboard's
// defaults, and a malformed value is refused with the variable's name.
func TestDashboardExportSettings(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	o, err := loadDashboardOptions(env("GATEWAY_EXPORTS_PER_WORKSPACE", "5", "GATEWAY_EXPORT_STALL_TIMEOUT", "45s"), false)
	if err != nil || o.ExportsPerWorkspace != 5 || o.ExportStallTimeout != 45*time.Second {
		t.Fatalf("%+v %v", o, err)
	}
	if o, err := loadDashboardOptions(env(), false); err != nil || o.ExportsPerWorkspace != 0 || o.ExportStallTimeout != 0 {
		t.Fatalf("defaults: %+v %v", o, err)
	}
	for _, kv := range [][]string{{"GATEWAY_EXPORTS_PER_WORKSPACE", "0"}, {"GATEWAY_EXPORTS_PER_WORKSPACE", "many"},
		{"GATEWAY_EXPORT_STALL_TIMEOUT", "10ms"}, {"GATEWAY_EXPORT_STALL_TIMEOUT", "soon"}} {
		if _, err := loadDashboardOptions(env(kv...), false); err == nil {
			t.Errorf("%s=%s accepted", kv[0], kv[1])
		}
	}
}
