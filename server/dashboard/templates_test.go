package dashboard_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"gateway/server/domain"
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
	for _, want := range []string{"The templates were synced", "flash_sale", "REJECTED", "Reason: Promotional content", "<code>PROMOTIONAL</code>", "payment_reminder", "PENDING",
		"order_confirmation", "<code>{{1}}</code>, <code>{{2}}</code>", "Hi {{1}}, your order {{2}} is confirmed.", "es_MX"} {
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

// A template status webhook from the platform (the simulator's message_template_status_update)
// carries the rejection reason: REJECTED with a reason shows it on the templates page and takes
// the template out of GET /v1/templates (approved only); a later APPROVED clears the reason and
// lists it again.
func TestTemplateRejectionWebhook(t *testing.T) {
	env := reportsEnv(t)
	a := signUp(t, env, "Acme", "owner@acme.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	conn := env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Acme"}})
	if p := a.post("/dashboard/templates/sync", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("sync now: %d", p.Status)
	}
	key, hash, prefix, err := domain.GenerateKey(domain.ModeLive)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.CreateAPIKey(context.Background(), acc, domain.ModeLive, hash, prefix); err != nil {
		t.Fatal(err)
	}
	listed := func() bool {
		t.Helper()
		var list struct {
			Data struct {
				Templates []struct {
					Name string `json:"name"`
				} `json:"templates"`
			} `json:"data"`
		}
		r := env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/templates", Key: key})
		if r.Status != http.StatusOK {
			t.Fatalf("GET /v1/templates: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &list)
		for _, tp := range list.Data.Templates {
			if tp.Name == "order_confirmation" {
				return true
			}
		}
		return false
	}
	// The order_confirmation section of the templates page.
	section := func() string {
		t.Helper()
		p := a.get("/dashboard/templates")
		for _, s := range strings.Split(p.Body, `<section class="template"`) {
			if strings.Contains(s, ">order_confirmation <span") {
				return s
			}
		}
		t.Fatalf("order_confirmation not on the templates page:\n%s", p.Body)
		return ""
	}
	var id string
	for _, tp := range env.Sim.Templates(conn.WabaID) {
		if tp.Name == "order_confirmation" && tp.Language == "en_US" {
			id = tp.ID
		}
	}
	if s := section(); !strings.Contains(s, ">APPROVED<") || strings.Contains(s, "Reason:") || !listed() {
		t.Fatalf("before the webhook:\n%s", s)
	}
	if err := env.Sim.SetTemplateStatus(conn.WabaID, id, "REJECTED", "INVALID_FORMAT"); err != nil {
		t.Fatal(err)
	}
	if s := section(); !strings.Contains(s, ">REJECTED<") || !strings.Contains(s, "Reason: Invalid format") {
		t.Fatalf("after REJECTED with a reason:\n%s", s)
	}
	if listed() {
		t.Fatal("GET /v1/templates lists the rejected template")
	}
	if p := a.get("/dashboard/templates?status=REJECTED"); !strings.Contains(p.Body, ">order_confirmation <span") {
		t.Fatalf("status filter REJECTED:\n%s", p.Body)
	}
	// The platform's event times are whole seconds: the next event must be a later second.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
	if err := env.Sim.SetTemplateStatus(conn.WabaID, id, "APPROVED", ""); err != nil {
		t.Fatal(err)
	}
	if s := section(); !strings.Contains(s, ">APPROVED<") || strings.Contains(s, "Reason:") || !listed() {
		t.Fatalf("after APPROVED:\n%s", s)
	}
	var reason string
	env.Store.DB().Get(&reason, `SELECT rejected_reason FROM templates WHERE account_id = $1 AND platform_id = $2`, acc, id)
	if reason != "" {
		t.Fatalf("stored reason after APPROVED: %q", reason)
	}
}
