package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/server/domain"
	"gateway/server/servertest"
	"gateway/server/servertest/wait"
	"gateway/server/worker"
	"gateway/store"
)

type templateData struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Language string `json:"language"`
	Status   string `json:"status"`
	Category struct {
		ID    int64  `json:"id"`
		Name  string `json:"name"`
		Label string `json:"label"`
	} `json:"category"`
	BodyVariables   *int `json:"body_variables"`
	HeaderVariables *int `json:"header_variables"`
}

func listTemplates(t testing.TB, env *servertest.Env, key string) []templateData {
	t.Helper()
	var d struct {
		Templates []templateData `json:"templates"`
	}
	mustOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/templates", Key: key}), &d)
	return d.Templates
}

func names(ts []templateData) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name+"/"+t.Language)
	}
	return strings.Join(out, ",")
}

// templateEnv is a gateway over a quiet simulator that sends no webhooks (template status
// changes reach the gateway only through syncs), with one connected tenant, not yet synced.
func templateEnv(t *testing.T) (*servertest.Env, servertest.Tenant, store.Connection) {
	t.Helper()
	env := servertest.New(t, servertest.Config{Simulator: quietSim()})
	setSimWebhookURL(t, env, "")
	a := env.NewTenant("Acme Ltd")
	return env, a, env.ConnectNumber(a)
}

func syncTemplates(t testing.TB, env *servertest.Env, accountID int64) domain.SyncResult {
	t.Helper()
	res, err := env.Server.SyncTemplates(context.Background(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestListTemplates(t *testing.T) {
	t.Parallel()
	env, a, conn := templateEnv(t)
	if ts := listTemplates(t, env, a.Live); len(ts) != 0 {
		t.Fatalf("before any sync: %v", names(ts))
	}
	res := syncTemplates(t, env, a.Account.ID)
	want := domain.SyncResult{AccountID: a.Account.ID, Fetched: 8, Approved: 6, TemplateSyncCounts: store.TemplateSyncCounts{Created: 8}}
	if res != want {
		t.Fatalf("first sync %+v, want %+v", res, want)
	}
	// Every status is stored; only approved ones are listed, newest first.
	if n := dbInt(t, env, `SELECT count(*) FROM templates WHERE account_id = $1`, a.Account.ID); n != 8 {
		t.Fatalf("%d templates stored, want 8", n)
	}
	ts := listTemplates(t, env, a.Live)
	if got := names(ts); got != "reservation_confirmation/en_US,appointment_reminder/es_MX,appointment_reminder/en_US,shipping_update/en_US,welcome/en_US,order_confirmation/en_US" {
		t.Fatalf("listed %s", got)
	}
	for _, tp := range ts {
		if tp.Status != "APPROVED" || tp.ID == 0 || tp.BodyVariables == nil || tp.HeaderVariables == nil {
			t.Fatalf("template %+v", tp)
		}
		wantCat := "UTILITY/Utility/2"
		if tp.Name == "welcome" {
			wantCat = "MARKETING/Marketing/1"
		}
		if got := fmt.Sprintf("%s/%s/%d", tp.Category.Name, tp.Category.Label, tp.Category.ID); got != wantCat {
			t.Fatalf("%s category %s, want %s", tp.Name, got, wantCat)
		}
		switch tp.Name {
		case "shipping_update":
			if *tp.HeaderVariables != 1 || *tp.BodyVariables != 1 {
				t.Fatalf("shipping_update variables %d/%d", *tp.HeaderVariables, *tp.BodyVariables)
			}
		case "order_confirmation", "reservation_confirmation":
			if *tp.HeaderVariables != 0 || *tp.BodyVariables != 2 {
				t.Fatalf("%s variables %d/%d", tp.Name, *tp.HeaderVariables, *tp.BodyVariables)
			}
		}
	}
	ids := map[string]int64{}
	for _, tp := range ts {
		ids[tp.Name+"/"+tp.Language] = tp.ID
	}

	// A second sync changes nothing.
	if res := syncTemplates(t, env, a.Account.ID); res.Unchanged != 8 || res.Created+res.Updated+res.Removed != 0 {
		t.Fatalf("second sync %+v", res)
	}

	// A status change on the platform: paused templates leave the list, reinstated ones return
	// with their id.
	if err := env.Sim.SetTemplateStatus(conn.WabaID, "1094411223344002", "PAUSED", ""); err != nil {
		t.Fatal(err)
	}
	if res := syncTemplates(t, env, a.Account.ID); res.Updated != 1 || res.Approved != 5 {
		t.Fatalf("sync after pause %+v", res)
	}
	if got := names(listTemplates(t, env, a.Live)); strings.Contains(got, "welcome") {
		t.Fatalf("paused template listed: %s", got)
	}
	if err := env.Sim.SetTemplateStatus(conn.WabaID, "1094411223344002", "REINSTATED", ""); err != nil {
		t.Fatal(err)
	}
	syncTemplates(t, env, a.Account.ID)
	if ts := listTemplates(t, env, a.Live); len(ts) != 6 || ts[4].Name != "welcome" || ts[4].ID != ids["welcome/en_US"] {
		t.Fatalf("after reinstating: %s", names(ts))
	}

	// A template in a category we did not know: the category is added with a label.
	env.Sim.SeedTemplates(conn.WabaID, []simulator.Template{{Name: "spring_sale", Language: "en_US", Category: "MARKETING_LITE",
		Components: []map[string]any{{"type": "BODY", "text": "Spring sale: {{1}} off"}}}})
	if res := syncTemplates(t, env, a.Account.ID); res.Created != 1 {
		t.Fatalf("sync with a new template %+v", res)
	}
	ts = listTemplates(t, env, a.Live)
	if ts[0].Name != "spring_sale" || ts[0].Category.Name != "MARKETING_LITE" || ts[0].Category.Label != "Marketing lite" ||
		ts[0].Category.ID < 100 || *ts[0].BodyVariables != 1 {
		t.Fatalf("new template %+v", ts[0])
	}

	// Templates gone from the platform are marked DELETED; a template deleted and re-created
	// under the same name and language (a new platform id) keeps its row and id.
	env.Sim.Reset(true)
	env.Sim.AddNumber(simulator.Number{PhoneNumberID: conn.PhoneNumberID, WabaID: conn.WabaID, AccessToken: conn.AccessToken})
	env.Sim.SeedTemplates(conn.WabaID, []simulator.Template{{ID: "1094411223349999", Name: "order_confirmation", Language: "en_US",
		Category: "UTILITY", Components: []map[string]any{{"type": "BODY", "text": "Hi {{1}}, order {{2}} confirmed."}}}})
	res = syncTemplates(t, env, a.Account.ID)
	if res.Fetched != 1 || res.Removed != 8 || res.Updated != 1 {
		t.Fatalf("sync after deletions %+v", res)
	}
	ts = listTemplates(t, env, a.Live)
	if len(ts) != 1 || ts[0].ID != ids["order_confirmation/en_US"] {
		t.Fatalf("after deletions: %+v (order_confirmation was %d)", ts, ids["order_confirmation/en_US"])
	}
	if n := dbInt(t, env, `SELECT count(*) FROM templates WHERE account_id = $1 AND status = 'DELETED'`, a.Account.ID); n != 8 {
		t.Fatalf("%d templates marked DELETED, want 8", n)
	}
	// A deleted template cannot be sent.
	r := send(env, a.Live, map[string]any{"destination": "15551234567", "template_id": ids["welcome/en_US"]})
	mustFail(t, r, http.StatusNotFound, "template_not_found")
}

func TestListTemplatesAtMost200(t *testing.T) {
	t.Parallel()
	env, a, conn := templateEnv(t)
	var many []simulator.Template
	for i := range 205 {
		many = append(many, simulator.Template{Name: fmt.Sprintf("bulk_%03d", i), Language: "en_US", Category: "UTILITY",
			Components: []map[string]any{{"type": "BODY", "text": "Hello"}}})
	}
	env.Sim.SeedTemplates(conn.WabaID, many)
	if res := syncTemplates(t, env, a.Account.ID); res.Fetched != 213 || res.Approved != 211 {
		t.Fatalf("sync %+v", res)
	}
	ts := listTemplates(t, env, a.Live)
	if len(ts) != 200 || ts[0].Name != "bulk_204" || ts[199].Name != "bulk_005" {
		t.Fatalf("%d templates, first %s, last %s", len(ts), ts[0].Name, ts[len(ts)-1].Name)
	}
}

func TestListTemplatesTenancy(t *testing.T) {
	t.Parallel()
	env, a, _ := templateEnv(t)
	b := env.NewTenant("Beta Inc")
	syncTemplates(t, env, a.Account.ID)
	if ts := listTemplates(t, env, b.Live); len(ts) != 0 {
		t.Fatalf("B lists A's templates: %s", names(ts))
	}
	env.ConnectNumber(b)
	syncTemplates(t, env, b.Account.ID)
	ta, tb := listTemplates(t, env, a.Live), listTemplates(t, env, b.Live)
	if len(ta) != 6 || len(tb) != 6 {
		t.Fatalf("A %d, B %d templates", len(ta), len(tb))
	}
	for i := range ta {
		if ta[i].ID == tb[i].ID {
			t.Fatalf("A and B share template id %d", ta[i].ID)
		}
	}
	mustFail(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/templates"}), http.StatusUnauthorized, "unauthorized")
}

func TestSyncTemplatesFailures(t *testing.T) {
	t.Parallel()
	env, _, _ := templateEnv(t)
	b := env.NewTenant("Beta Inc")
	if _, err := env.Server.SyncTemplates(context.Background(), b.Account.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("sync without a number: %v", err)
	}
	// A number the platform does not know (bad token): the platform's error, nothing stored.
	if _, err := env.Store.ConnectNumber(context.Background(), store.Connection{AccountID: b.Account.ID, WabaID: "waba-x",
		PhoneNumberID: "pn-x", PhoneNumber: "15550000000", DisplayName: "X", AccessToken: "wrong"}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Server.SyncTemplates(context.Background(), b.Account.ID); err == nil || !strings.Contains(err.Error(), "190") {
		t.Fatalf("sync with a bad token: %v", err)
	}
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestTemplateSyncer(t *testing.T) {
	t.Parallel()
	env, a, _ := templateEnv(t)
	b := env.NewTenant("Beta Inc")
	env.ConnectNumber(b)
	c := env.NewTenant("Gamma Co") // connected with a token the platform refuses
	if _, err := env.Store.ConnectNumber(context.Background(), store.Connection{AccountID: c.Account.ID, WabaID: "waba-x",
		PhoneNumberID: "pn-x", PhoneNumber: "15550000000", DisplayName: "X", AccessToken: "wrong"}); err != nil {
		t.Fatal(err)
	}
	env.NewTenant("Delta Co") // no number: not synced
	clock := &fakeClock{t: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	sy := newSyncer(env, 10*time.Minute, clock.Now)
	ctx := context.Background()

	if synced, failed := sy.RunOnce(ctx); synced != 2 || failed != 1 {
		t.Fatalf("first pass: %d synced, %d failed", synced, failed)
	}
	if len(listTemplates(t, env, a.Live)) != 6 || len(listTemplates(t, env, b.Live)) != 6 {
		t.Fatal("the first pass did not sync both accounts")
	}
	// Nothing is due until the interval has passed.
	clock.Advance(9 * time.Minute)
	if synced, failed := sy.RunOnce(ctx); synced != 0 || failed != 0 {
		t.Fatalf("pass before the interval: %d synced, %d failed", synced, failed)
	}
	clock.Advance(time.Minute)
	if synced, failed := sy.RunOnce(ctx); synced != 2 || failed != 1 {
		t.Fatalf("pass after the interval: %d synced, %d failed", synced, failed)
	}
	// A newly connected account is synced on the next pass.
	d := env.NewTenant("Epsilon Co")
	env.ConnectNumber(d)
	if synced, _ := sy.RunOnce(ctx); synced != 1 || len(listTemplates(t, env, d.Live)) != 6 {
		t.Fatalf("new account: %d synced", synced)
	}
	// An inactive account is skipped.
	if _, err := env.Store.SetAccountActive(ctx, a.Account.ID, false); err != nil {
		t.Fatal(err)
	}
	clock.Advance(10 * time.Minute)
	if synced, failed := sy.RunOnce(ctx); synced != 2 || failed != 1 {
		t.Fatalf("pass with an inactive account: %d synced, %d failed", synced, failed)
	}

	// The service shape: Start runs a pass at once; Stop is idempotent, also before Start.
	newSyncer(env, time.Minute, nil).Stop()
	e := env.NewTenant("Zeta Co")
	env.ConnectNumber(e)
	live := newSyncer(env, time.Hour, nil)
	if err := live.Start(ctx); err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool {
		return dbInt(t, env, `SELECT count(*) FROM templates WHERE account_id = $1`, e.Account.ID) > 0
	}, 10*time.Second, "the started syncer's first sync")
	live.Stop()
	live.Stop()
}

// newSyncer is the syncer serve builds, over env's store and server.
func newSyncer(env *servertest.Env, every time.Duration, clock func() time.Time) *worker.TemplateSyncer {
	return worker.NewTemplateSyncer(worker.TemplateSyncConfig{Accounts: env.Store.ConnectedAccountIDs,
		Sync: env.Server.SyncAccountTemplates, Every: every, Clock: clock})
}
