package dashboard_test

import (
	"net/http"
	"strings"
	"testing"

	"gateway/server/servertest"
	"gateway/store"
)

// "Sync now" pulls the templates from the platform; the page shows every status, a rejected
// template with the platform's reason, categories, variables and buttons, and filters by
// status and category.
func TestTemplatesPageSyncAndFilters(t *testing.T) {
	env := reportsEnv(t)
	a := signUp(t, env, "Acme", "owner@acme.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Acme"}})
	if p := a.get("/dashboard/templates"); !strings.Contains(p.Body, "No templates match") {
		t.Fatalf("before the sync:\n%s", p.Body)
	}
	p := a.post("/dashboard/templates/sync", nil)
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/templates?notice=synced" {
		t.Fatalf("sync now: %d %s", p.Status, p.Header.Get("Location"))
	}
	p = a.get("/dashboard/templates?notice=synced")
	for _, want := range []string{"The templates were synced", "flash_sale", "REJECTED", "Reason: PROMOTIONAL", "payment_reminder", "PENDING",
		"order_confirmation", "<code>{{1}}</code>, <code>{{2}}</code>", "Hi [1], your order [2] is confirmed.", "es_MX"} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("templates page lacks %q", want)
		}
	}
	p = a.get("/dashboard/templates?status=REJECTED")
	if !strings.Contains(p.Body, "flash_sale") || strings.Contains(p.Body, "order_confirmation") || strings.Count(p.Body, `<section class="template"`) != 1 {
		t.Errorf("status filter:\n%s", p.Body)
	}
	p = a.get("/dashboard/templates?category=MARKETING")
	if strings.Contains(p.Body, "order_confirmation (") || !strings.Contains(p.Body, "flash_sale") {
		t.Errorf("category filter:\n%s", p.Body)
	}
}
