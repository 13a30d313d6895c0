package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/server/broadcast"
	"gateway/server/servertest"
)

type broadcastCounts struct {
	Total, Pending, Sending, Unknown, Sent, Delivered, Read, Failed, Cancelled int
}

type preflightData struct {
	Recipients       int `json:"recipients"`
	Duplicates       int `json:"duplicates"`
	OptedOut         int `json:"opted_out"`
	Blocked          int `json:"blocked"`
	USMarketing      int `json:"us_marketing"`
	Throughput       int `json:"throughput"`
	EstimatedSeconds int `json:"estimated_seconds"`
	Budget           struct {
		Limit  *int     `json:"limit"`
		Used   int      `json:"used"`
		Needed int      `json:"needed"`
		Share  *float64 `json:"share"`
	} `json:"budget"`
}

type broadcastData struct {
	ID          int64           `json:"id"`
	Name        string          `json:"name"`
	CampaignID  int64           `json:"campaign_id"`
	State       string          `json:"state"`
	PauseReason string          `json:"pause_reason"`
	ScheduledAt *time.Time      `json:"scheduled_at"`
	TimeZone    string          `json:"time_zone"`
	Counts      broadcastCounts `json:"counts"`
	Rate        float64         `json:"rate"`
	Preflight   preflightData   `json:"preflight"`
	Mode        string          `json:"mode"`
}

type recipientData struct {
	ID         int64  `json:"id"`
	Mobile     string `json:"mobile"`
	Status     string `json:"status"`
	Attempts   int    `json:"attempts"`
	MessageID  string `json:"message_id"`
	ErrorCode  *int   `json:"error_code"`
	ErrorTitle string `json:"error_title"`
}

type recipientPage struct {
	Recipients []recipientData `json:"recipients"`
	NextCursor *string         `json:"next_cursor"`
}

// startBroadcastEngine runs the broadcast engine over the env's gateway send path, as serve
// does, until the test ends.
func startBroadcastEngine(t *testing.T, env *servertest.Env, throughput int) {
	t.Helper()
	e, err := broadcast.New(env.Store, broadcast.Config{Sender: env.Server.BroadcastSender(), Share: 1,
		Poll: 50 * time.Millisecond, Throughput: func(context.Context, string) int { return throughput }})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
}

func createBroadcast(t *testing.T, env *servertest.Env, key string, body map[string]any) broadcastData {
	t.Helper()
	r := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/broadcasts", Key: key, Body: body})
	b := decodeEnv(t, r)
	if r.Status != http.StatusCreated || !b.Success {
		t.Fatalf("want 201, got %d %s", r.Status, r.Body)
	}
	var out broadcastData
	r.JSON(t, &struct {
		Data *broadcastData `json:"data"`
	}{&out})
	return out
}

func getBroadcast(t *testing.T, env *servertest.Env, key string, id int64) broadcastData {
	t.Helper()
	var out broadcastData
	wantOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: fmt.Sprintf("/v1/broadcasts/%d", id), Key: key}), &out)
	return out
}

// waitBroadcast polls the broadcast until its state is want.
func waitBroadcast(t *testing.T, env *servertest.Env, key string, id int64, want string) broadcastData {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b := getBroadcast(t, env, key, id)
		if b.State == want {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("broadcast %d still %s (%+v), want %s", id, b.State, b.Counts, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func allRecipients(t *testing.T, env *servertest.Env, key string, id int64, limit int) []recipientData {
	t.Helper()
	var out []recipientData
	path := fmt.Sprintf("/v1/broadcasts/%d/recipients?limit=%d", id, limit)
	for {
		var p recipientPage
		wantOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: path, Key: key}), &p)
		out = append(out, p.Recipients...)
		if p.NextCursor == nil {
			return out
		}
		path = fmt.Sprintf("/v1/broadcasts/%d/recipients?limit=%d&cursor=%s", id, limit, *p.NextCursor)
	}
}

// A test key's broadcast is simulated end to end: created with its pre-flight (a duplicate
// merged), sent by the engine without the platform, its recipients paged with their message
// ids, the counts moving to delivered and read as test messages do; a live key does not see it.
func TestBroadcastTestModeSimulated(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	startBroadcastEngine(t, env, 80)
	b := createBroadcast(t, env, a.Test, map[string]any{
		"name": "spring sale", "template_name": "order_confirmation_update",
		"parameters": []any{map[string]any{"variable": "name"}, map[string]any{"value": "ORD-1"}},
		"recipients": []any{
			map[string]any{"mobile": "447700900001", "variables": map[string]any{"name": "Ana"}},
			map[string]any{"mobile": "447700900002", "variables": map[string]any{"name": "Ben"}},
			map[string]any{"mobile": "447700900001", "variables": map[string]any{"name": "Ana"}},
		},
	})
	if b.Mode != "test" || b.Preflight.Recipients != 2 || b.Preflight.Duplicates != 1 || b.Counts.Total != 2 {
		t.Fatalf("created %+v", b)
	}
	done := waitBroadcast(t, env, a.Test, b.ID, "completed")
	if c := done.Counts; c.Sent+c.Delivered+c.Read != 2 || c.Failed != 0 {
		t.Fatalf("counts %+v", c)
	}
	rs := allRecipients(t, env, a.Test, b.ID, 1)
	if len(rs) != 2 || rs[0].Status != "sent" || rs[0].MessageID == "" || rs[1].Attempts != 1 {
		t.Fatalf("recipients %+v", rs)
	}
	deadline := time.Now().Add(20 * time.Second)
	for getBroadcast(t, env, a.Test, b.ID).Counts.Read != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("not read: %+v", getBroadcast(t, env, a.Test, b.ID).Counts)
		}
		time.Sleep(200 * time.Millisecond)
	}
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: fmt.Sprintf("/v1/broadcasts/%d", b.ID), Key: a.Live}), http.StatusNotFound, "not_found")
	var live, test struct {
		Broadcasts []broadcastData `json:"broadcasts"`
	}
	wantOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/broadcasts", Key: a.Live}), &live)
	wantOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/broadcasts", Key: a.Test}), &test)
	if len(live.Broadcasts) != 0 || len(test.Broadcasts) != 1 || test.Broadcasts[0].ID != b.ID {
		t.Fatalf("live sees %d, test sees %+v", len(live.Broadcasts), test.Broadcasts)
	}
	var events int
	if err := env.Store.DB().Get(&events, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'broadcast.completed'
		AND test AND (data->>'broadcast_id')::bigint = $2`, a.Account.ID, b.ID); err != nil || events != 1 {
		t.Fatalf("broadcast.completed events: %d (%v)", events, err)
	}
}

// A live broadcast goes through the gateway's send path against the simulator: the pre-flight
// leaves out an opted-out contact and a duplicate, each remaining recipient is accepted once
// by the platform, its message is in the broadcast's campaign, the recipients carry the
// platform's ids, and the broadcast completes with its event. The pre-flight of a MARKETING
// template leaves out US numbers.
func TestBroadcastLiveThroughSendPath(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{Simulator: &simulator.Config{}})
	a := env.NewTenant("Acme Ltd")
	env.ConnectNumber(a)
	syncTemplates(t, env, a.Account.ID)
	if r := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: a.Live, Body: map[string]any{"mobile": "447700900009"}}); r.Status != http.StatusOK {
		t.Fatalf("contact: %d %s", r.Status, r.Body)
	}
	if _, err := env.Store.SetContactBlocked(context.Background(), a.Account.ID, "447700900009", true); err != nil {
		t.Fatal(err)
	}
	startBroadcastEngine(t, env, 80)
	mobiles := []string{"447700900001", "447700900002", "447700900003", "447700900009", "447700900002"}
	var rs []any
	for i, m := range mobiles {
		rs = append(rs, map[string]any{"mobile": m, "variables": map[string]any{"name": fmt.Sprintf("P%d", i)}})
	}
	b := createBroadcast(t, env, a.Live, map[string]any{"name": "november", "template_name": "order_confirmation",
		"parameters": []any{map[string]any{"variable": "name"}, map[string]any{"value": "ORD-1"}}, "recipients": rs})
	if pf := b.Preflight; pf.Recipients != 3 || pf.Duplicates != 1 || pf.Blocked+pf.OptedOut != 1 || pf.Throughput != 80 || pf.EstimatedSeconds != 1 {
		t.Fatalf("preflight %+v", pf)
	}
	waitBroadcast(t, env, a.Live, b.ID, "completed")
	got := map[string]int{}
	for _, m := range env.Sim.Sent() {
		got[m.WaID]++
	}
	for _, m := range mobiles[:3] {
		if got[m] != 1 {
			t.Errorf("%s: %d platform sends, want 1 (%v)", m, got[m], got)
		}
	}
	if len(got) != 3 {
		t.Errorf("the simulator accepted sends to %v", got)
	}
	for _, r := range allRecipients(t, env, a.Live, b.ID, 100) {
		if r.Status != "sent" || !strings.HasPrefix(r.MessageID, "wamid.") {
			t.Errorf("recipient %+v", r)
		}
	}
	c := getCampaign(t, env, a.Live, b.CampaignID)
	if c.Name != "november" || c.Counts.Total != 3 {
		t.Errorf("campaign %+v", c)
	}
	var events int
	if err := env.Store.DB().Get(&events, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'broadcast.completed'
		AND NOT test`, a.Account.ID); err != nil || events != 1 {
		t.Fatalf("broadcast.completed events: %d (%v)", events, err)
	}
	var pf preflightData
	wantOK(t, env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/broadcasts/preflight", Key: a.Live, Body: map[string]any{
		"name": "promo", "template_name": "welcome",
		"recipients": []any{map[string]any{"mobile": "15551234567"}, map[string]any{"mobile": "447700900001"}}}}), &pf)
	if pf.Recipients != 1 || pf.USMarketing != 1 || pf.Budget.Limit != nil || pf.Budget.Needed != 1 {
		t.Fatalf("marketing preflight %+v (limit %v)", pf, pf.Budget.Limit)
	}
}

// broadcastOps are the broadcast operations, on broadcast id.
func broadcastOps(id int64) []servertest.Request {
	body := map[string]any{"name": "n", "template_name": "order_confirmation_update",
		"parameters": []any{map[string]any{"value": "a"}, map[string]any{"value": "b"}},
		"recipients": []any{map[string]any{"mobile": "447700900001"}}}
	p := fmt.Sprintf("/v1/broadcasts/%d", id)
	return []servertest.Request{
		{Method: http.MethodPost, Path: "/v1/broadcasts", Body: body},
		{Method: http.MethodPost, Path: "/v1/broadcasts/preflight", Body: body},
		{Method: http.MethodGet, Path: "/v1/broadcasts"},
		{Method: http.MethodGet, Path: p},
		{Method: http.MethodPost, Path: p + "/pause"},
		{Method: http.MethodPost, Path: p + "/resume"},
		{Method: http.MethodPost, Path: p + "/cancel"},
		{Method: http.MethodGet, Path: p + "/recipients"},
	}
}

// Pause, resume and cancel move a broadcast through its states and refuse what its state does
// not allow with a 409 naming it; each pause writes broadcast.paused. A missing id, or one of
// another account, is a 404 on every operation, and no key is a 401.
func TestBroadcastControl(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a, other := env.NewTenant("Acme Ltd"), env.NewTenant("Other Ltd")
	body := broadcastOps(0)[0].Body.(map[string]any)
	body["send_at"], body["time_zone"] = time.Now().Add(48*time.Hour).In(time.UTC).Format("2006-01-02T15:04"), "America/New_York"
	b := createBroadcast(t, env, a.Test, body)
	if b.State != "scheduled" || b.ScheduledAt == nil || b.TimeZone != "America/New_York" {
		t.Fatalf("created %+v", b)
	}
	do := func(action string, status int) broadcastData {
		t.Helper()
		r := env.Do(servertest.Request{Method: http.MethodPost, Path: fmt.Sprintf("/v1/broadcasts/%d/%s", b.ID, action), Key: a.Test})
		var out broadcastData
		if status == http.StatusOK {
			wantOK(t, r, &out)
		} else {
			wantFailure(t, r, status, "broadcast_state")
		}
		return out
	}
	if p := do("pause", http.StatusOK); p.State != "paused" || p.PauseReason != "operator" {
		t.Fatalf("paused %+v", p)
	}
	do("pause", http.StatusOK)
	if r := do("resume", http.StatusOK); r.State != "scheduled" {
		t.Fatalf("resumed %+v", r)
	}
	do("resume", http.StatusConflict)
	if c := do("cancel", http.StatusOK); c.State != "cancelled" || c.Counts.Cancelled != 1 {
		t.Fatalf("cancelled %+v", c)
	}
	do("cancel", http.StatusConflict)
	do("pause", http.StatusConflict)
	var paused int
	if err := env.Store.DB().Get(&paused, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'broadcast.paused'`,
		a.Account.ID); err != nil || paused != 1 {
		t.Fatalf("broadcast.paused events: %d (%v); a second pause with the same reason writes none", paused, err)
	}
	for _, r := range broadcastOps(b.ID)[3:] {
		r.Key = other.Test
		wantFailure(t, env.Do(r), http.StatusNotFound, "not_found")
	}
	for _, r := range broadcastOps(b.ID) {
		if got := env.Do(r); got.Status != http.StatusUnauthorized || got.Code(t) != "unauthorized" {
			t.Errorf("%s %s without a key: %d %s", r.Method, r.Path, got.Status, got.Body)
		}
	}
}

// What a broadcast refuses: no number connected (409), an unknown template (404), parameters
// that do not fit the template, recipients and an audience at once, a missing variable, an
// unknown time zone or audience, a bad cursor or id (422), and a body over 4 MiB (413). A
// create retried with its Idempotency-Key is replayed, not made twice.
func TestBroadcastRefusals(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{Simulator: &simulator.Config{}})
	a := env.NewTenant("Acme Ltd")
	base := func() map[string]any {
		return map[string]any{"name": "n", "template_name": "order_confirmation",
			"parameters": []any{map[string]any{"variable": "name"}, map[string]any{"value": "b"}},
			"recipients": []any{map[string]any{"mobile": "447700900001", "variables": map[string]any{"name": "Ana"}}}}
	}
	paths := []string{"/v1/broadcasts", "/v1/broadcasts/preflight"}
	for _, path := range paths {
		wantFailure(t, env.Do(servertest.Request{Method: http.MethodPost, Path: path, Key: a.Live, Body: base()}), http.StatusConflict, "number_not_connected")
	}
	env.ConnectNumber(a)
	syncTemplates(t, env, a.Account.ID)
	for _, path := range paths {
		post := func(body any) *servertest.Response {
			return env.Do(servertest.Request{Method: http.MethodPost, Path: path, Key: a.Live, Body: body})
		}
		b := base()
		b["template_name"] = "nope"
		wantFailure(t, post(b), http.StatusNotFound, "template_not_found")
		for field, change := range map[string]func(map[string]any){
			"parameters":                  func(b map[string]any) { b["parameters"] = []any{map[string]any{"value": "a"}} },
			"parameters.1":                func(b map[string]any) { b["parameters"] = []any{map[string]any{"variable": "name"}, map[string]any{}} },
			"recipients":                  func(b map[string]any) { b["audience_id"] = 7 },
			"recipients.0.variables.name": func(b map[string]any) { b["recipients"] = []any{map[string]any{"mobile": "447700900001"}} },
			"time_zone":                   func(b map[string]any) { b["time_zone"] = "Mars/Olympus" },
			"template_name": func(b map[string]any) {
				b["template_name"] = "shipping_update"
				b["parameters"] = []any{map[string]any{"value": "x"}}
			},
			"audience_id": func(b map[string]any) {
				delete(b, "recipients")
				b["audience_id"] = 7
				b["parameters"] = []any{map[string]any{"variable": "name"}, map[string]any{"value": "b"}}
			},
		} {
			b := base()
			change(b)
			if e := wantFailure(t, post(b), http.StatusUnprocessableEntity, "validation_failed"); len(e.Errors[field]) == 0 {
				t.Errorf("%s: errors %v, want one on %s", path, e.Errors, field)
			}
		}
		big := base()
		big["name"] = strings.Repeat("x", 100)
		rs := make([]any, 0, 9000)
		for i := range 9000 {
			rs = append(rs, map[string]any{"mobile": fmt.Sprintf("4477%08d", i), "variables": map[string]any{"name": strings.Repeat("y", 500)}})
		}
		big["recipients"] = rs
		wantFailure(t, post(big), http.StatusRequestEntityTooLarge, "payload_too_large")
	}
	key := map[string]string{"Idempotency-Key": "bc-1"}
	r1 := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/broadcasts", Key: a.Live, Body: base(), Header: key})
	r2 := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/broadcasts", Key: a.Live, Body: base(), Header: key})
	if r1.Status != http.StatusCreated || string(r1.Body) != string(r2.Body) || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry: %d %s / %d %s", r1.Status, r1.Body, r2.Status, r2.Body)
	}
	for _, path := range []string{"/v1/broadcasts?cursor=%21", "/v1/broadcasts/0", "/v1/broadcasts/1/recipients?cursor=%21"} {
		wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: path, Key: a.Live}), http.StatusUnprocessableEntity, "validation_failed")
	}
	for _, action := range []string{"pause", "resume", "cancel"} {
		wantFailure(t, env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/broadcasts/0/" + action, Key: a.Live}), http.StatusUnprocessableEntity, "validation_failed")
	}
}
