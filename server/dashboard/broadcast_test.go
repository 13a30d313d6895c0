package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/server/broadcast"
	"gateway/server/dashboard"
	"gateway/server/domain"
	"gateway/server/servertest"
	"gateway/store"
)

// broadcastEnv is a gateway over the simulator (statuses reported after the delays) with the
// broadcast engine running as serve runs it.
func broadcastEnv(t *testing.T, delivered, read time.Duration) *servertest.Env {
	t.Helper()
	c := &testConnector{}
	env := servertest.New(t, servertest.Config{
		Dashboard: dashboard.Options{Development: true, SignupOpen: true},
		Connector: c,
		Simulator: &simulator.Config{SentDelay: 50 * time.Millisecond, DeliveredDelay: delivered, ReadDelay: read},
	})
	c.st = env.Store
	e, err := broadcast.New(env.Store, broadcast.Config{Sender: env.Server.BroadcastSender(), Share: 1,
		Poll: 50 * time.Millisecond, Throughput: func(context.Context, string) int { return 80 }})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop(context.Background()) })
	return env
}

// connectWorkspace connects the workspace's number and syncs its templates; it returns the id
// of order_confirmation (two body variables).
func connectWorkspace(t *testing.T, env *servertest.Env, acc int64) int64 {
	t.Helper()
	env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Broadcast Bakery"}})
	if _, err := env.Server.SyncTemplates(context.Background(), acc); err != nil {
		t.Fatal(err)
	}
	var tpl int64
	if err := env.Store.DB().Get(&tpl, `SELECT id FROM templates WHERE account_id = $1 AND name = 'order_confirmation'`, acc); err != nil {
		t.Fatal(err)
	}
	return tpl
}

var reBroadcastPage = regexp.MustCompile(`^/dashboard/broadcasts/(\d+)\?notice=(.+)$`)

// startForm is a filled start form of the order_confirmation template (two body variables).
func startForm(tpl int64, key, name, numbers, sendAt string) url.Values {
	return url.Values{"template": {fmt.Sprint(tpl)}, "key": {key}, "name": {name}, "numbers": {numbers},
		"p1_source": {"value"}, "p1_value": {"friend"}, "p2_source": {"value"}, "p2_value": {"ORD-1"},
		"send_at": {sendAt}, "time_zone": {"America/Sao_Paulo"}}
}

type progressAnswer struct {
	State                              string `json:"state"`
	Total, Done, Sent, Delivered, Read int
	Failed, Waiting, Percent           int
	RateText                           string `json:"rate_text"`
}

func progressOf(t *testing.T, u *user, id int64) progressAnswer {
	t.Helper()
	p := u.get(fmt.Sprintf("/dashboard/broadcasts/%d/progress", id))
	if p.Status != http.StatusOK || !strings.HasPrefix(p.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("progress: %d %s", p.Status, p.Body)
	}
	var out progressAnswer
	if err := json.Unmarshal([]byte(p.Body), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A broadcast from the dashboard: the form's mistakes shown on their inputs, the pre-flight
// (recipients, duplicates) before anything is made, a scheduled start made once however often
// the confirm is submitted, pause and resume of it with their audit entries; a broadcast at
// once sent by the engine (one platform call per recipient), its progress as JSON and on the
// page, its recipients and its CSV; a cancel of a finished one refused in words; another
// workspace's broadcast a 404.
func TestDashboardBroadcast(t *testing.T) {
	env := broadcastEnv(t, 100*time.Millisecond, 200*time.Millisecond)
	u := signUp(t, env, "Broadcast Bakery", "owner@bakery.example")
	acc := accountOf(t, env.Store, "owner@bakery.example")
	tpl := connectWorkspace(t, env, acc)
	p := u.get("/dashboard/templates")
	if !strings.Contains(p.Body, fmt.Sprintf(`href="/dashboard/broadcasts/new?template=%d"`, tpl)) {
		t.Fatalf("the templates page has no broadcast link for the template:\n%s", p.Body)
	}
	p = u.get(fmt.Sprintf("/dashboard/broadcasts/new?template=%d", tpl))
	key := find(t, reFormKey, p.Body)
	if p.Status != http.StatusOK || !strings.Contains(p.Body, `name="p2_source"`) || strings.Contains(p.Body, `name="p3_source"`) {
		t.Fatalf("form for a two-variable template: %d\n%s", p.Status, p.Body)
	}

	// Mistakes: an unreadable number, a time zone that is none.
	f := startForm(tpl, key, "Spring sale", "5511987654321\nnot a number", "")
	f.Set("time_zone", "Mars/Olympus")
	p = u.post("/dashboard/broadcasts/preflight", f)
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, `id="b-numbers-error"`) || !strings.Contains(p.Body, "line 2") {
		t.Fatalf("an unreadable number: %d\n%s", p.Status, p.Body)
	}
	f = startForm(tpl, key, "Spring sale", "5511987654321", "")
	f.Set("time_zone", "Mars/Olympus")
	if p = u.post("/dashboard/broadcasts/preflight", f); p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, `id="b-zone-error"`) {
		t.Fatalf("an unknown time zone: %d\n%s", p.Status, p.Body)
	}

	// The pre-flight of a scheduled broadcast: three people, one listed twice; nothing made.
	at := time.Now().Add(48 * time.Hour).In(mustZone(t, "America/Sao_Paulo")).Format("2006-01-02T15:04")
	f = startForm(tpl, key, "Spring sale", "5511987654321\n5511987654322\n+55 11 98765-4321\n5511987654323", at)
	p = u.post("/dashboard/broadcasts/preflight", f)
	if p.Status != http.StatusOK || !strings.Contains(p.Body, `<dd id="pf-recipients">3</dd>`) || !strings.Contains(p.Body, `<dd id="pf-duplicates">1</dd>`) ||
		!strings.Contains(p.Body, "(America/Sao_Paulo)") {
		t.Fatalf("pre-flight: %d\n%s", p.Status, p.Body)
	}
	if n := countRows(t, env, `SELECT count(*) FROM broadcasts WHERE account_id = $1`, acc); n != 0 {
		t.Fatalf("the pre-flight made %d broadcasts", n)
	}
	// Confirmed twice: made once.
	p = u.post("/dashboard/broadcasts", f)
	m := reBroadcastPage.FindStringSubmatch(p.Header.Get("Location"))
	if p.Status != http.StatusSeeOther || m == nil || m[2] != "broadcast-started" {
		t.Fatalf("start: %d %s\n%s", p.Status, p.Header.Get("Location"), p.Body)
	}
	scheduled := mustID(m[1])
	p = u.post("/dashboard/broadcasts", f)
	if m2 := reBroadcastPage.FindStringSubmatch(p.Header.Get("Location")); m2 == nil || m2[1] != m[1] || m2[2] != "broadcast-started-before" {
		t.Fatalf("second submit: %d %s", p.Status, p.Header.Get("Location"))
	}
	if n := countRows(t, env, `SELECT count(*) FROM broadcasts WHERE account_id = $1`, acc); n != 1 {
		t.Fatalf("%d broadcasts after two submits of one form, want 1", n)
	}
	if pr := progressOf(t, u, scheduled); pr.State != store.BroadcastScheduled || pr.Total != 3 || pr.Waiting != 3 || pr.RateText != "—" {
		t.Fatalf("scheduled: %+v", pr)
	}
	for _, step := range []struct{ action, notice, state, says string }{
		{"pause", "broadcast-paused", store.BroadcastPaused, "The broadcast is paused"},
		{"resume", "broadcast-resumed", store.BroadcastScheduled, "The broadcast was resumed"},
		{"resume", "broadcast-state", store.BroadcastScheduled, "so nothing was done"},
	} {
		p = u.post(fmt.Sprintf("/dashboard/broadcasts/%d/%s", scheduled, step.action), nil)
		if want := fmt.Sprintf("/dashboard/broadcasts/%d?notice=%s", scheduled, step.notice); p.Header.Get("Location") != want {
			t.Fatalf("%s: %d %s, want %s", step.action, p.Status, p.Header.Get("Location"), want)
		}
		if pr := progressOf(t, u, scheduled); pr.State != step.state {
			t.Fatalf("after %s: %s, want %s", step.action, pr.State, step.state)
		}
		// The page the post opens says what happened.
		if pg := u.get(p.Header.Get("Location")); !strings.Contains(pg.Body, `<p class="notice" role="status">`) || !strings.Contains(pg.Body, step.says) {
			t.Fatalf("after %s the page shows no notice:\n%s", step.action, pg.Body)
		}
	}
	if a := auditActions(t, env, acc); !strings.Contains(a, "broadcast.started") || !strings.Contains(a, "broadcast.paused") || !strings.Contains(a, "broadcast.resumed") {
		t.Fatalf("audit log: %s", a)
	}

	// At once: the engine sends each recipient once; the page and the CSV show the results.
	p = u.get("/dashboard/broadcasts/new?template=" + fmt.Sprint(tpl))
	f = startForm(tpl, find(t, reFormKey, p.Body), "Flash", "5511900000001\n5511900000002", "")
	p = u.post("/dashboard/broadcasts", f)
	m = reBroadcastPage.FindStringSubmatch(p.Header.Get("Location"))
	if m == nil {
		t.Fatalf("start at once: %d %s\n%s", p.Status, p.Header.Get("Location"), p.Body)
	}
	now := mustID(m[1])
	waitFor(t, "the broadcast to complete with its messages read", func() bool {
		pr := progressOf(t, u, now)
		return pr.State == store.BroadcastCompleted && pr.Read == 2
	})
	if pr := progressOf(t, u, now); pr.Total != 2 || pr.Done != 2 || pr.Percent != 100 || pr.Failed != 0 {
		t.Fatalf("completed: %+v", pr)
	}
	if sent := env.Sim.Sent(); len(sent) != 2 {
		t.Fatalf("the platform got %d sends, want 2", len(sent))
	}
	p = u.get(fmt.Sprintf("/dashboard/broadcasts/%d", now))
	if p.Status != http.StatusOK || strings.Count(p.Body, `<td data-label="Status" class="status">`) != 2 ||
		!strings.Contains(p.Body, `<progress id="b-bar" max="2" value="2"`) || !strings.Contains(p.Body, `id="campaign-link"`) {
		t.Fatalf("broadcast page: %d\n%s", p.Status, p.Body)
	}
	p = u.get(fmt.Sprintf("/dashboard/broadcasts/%d/export.csv", now))
	if p.Status != http.StatusOK || !strings.HasPrefix(p.Body, "recipient_id,mobile,") || strings.Count(p.Body, "\n") != 4 ||
		!strings.Contains(p.Body, dashboard.ExportTrailer+",2") {
		t.Fatalf("export: %d\n%s", p.Status, p.Body)
	}
	// The broadcast's events, as the triggers wrote them, are what the WebhookEvent schema says.
	for typ, schema := range map[string]string{"broadcast.paused": "BroadcastPausedEvent", "broadcast.completed": "BroadcastCompletedEvent"} {
		evs := env.Events(t, acc, typ, 10)
		if len(evs) == 0 {
			t.Fatalf("no %s event", typ)
		}
		for _, ev := range evs {
			if err := env.ValidateSchema(schema, domain.EventBody(ev)); err != nil {
				t.Errorf("%s: %v\n%s", typ, err, domain.EventBody(ev))
			}
		}
	}
	p = u.post(fmt.Sprintf("/dashboard/broadcasts/%d/cancel", now), nil)
	if p.Header.Get("Location") != fmt.Sprintf("/dashboard/broadcasts/%d?notice=broadcast-state", now) {
		t.Fatalf("cancel of a completed broadcast: %d %s", p.Status, p.Header.Get("Location"))
	}
	p = u.get("/dashboard/broadcasts")
	if !strings.Contains(p.Body, "Spring sale") || !strings.Contains(p.Body, "Flash") {
		t.Fatalf("list:\n%s", p.Body)
	}

	other := signUp(t, env, "Other", "owner@other.example")
	for _, path := range []string{"", "/progress", "/export.csv"} {
		if p := other.get(fmt.Sprintf("/dashboard/broadcasts/%d%s", now, path)); p.Status != http.StatusNotFound {
			t.Fatalf("another workspace's %s: %d", path, p.Status)
		}
	}
	if p := other.post(fmt.Sprintf("/dashboard/broadcasts/%d/pause", scheduled), nil); p.Status != http.StatusNotFound {
		t.Fatalf("another workspace's pause: %d", p.Status)
	}
	// A test key's broadcast is the API's: the panel neither shows nor changes it.
	if _, err := env.Store.DB().Exec(`UPDATE broadcasts SET test = true WHERE account_id = $1 AND id = $2`, acc, scheduled); err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{"pause", "cancel"} {
		if p := u.post(fmt.Sprintf("/dashboard/broadcasts/%d/%s", scheduled, action), nil); p.Status != http.StatusNotFound {
			t.Fatalf("a test key's broadcast's %s: %d", action, p.Status)
		}
	}
	if p := u.get(fmt.Sprintf("/dashboard/broadcasts/%d", scheduled)); p.Status != http.StatusNotFound {
		t.Fatalf("a test key's broadcast's page: %d", p.Status)
	}
}

func countRows(t *testing.T, env *servertest.Env, q string, args ...any) int {
	t.Helper()
	var n int
	if err := env.Store.DB().Get(&n, q, args...); err != nil {
		t.Fatal(err)
	}
	return n
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func mustID(s string) int64 {
	var n int64
	fmt.Sscan(s, &n)
	return n
}
