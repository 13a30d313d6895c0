package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"syscall"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/store"
	"gateway/store/storetest"
)

// broadcastRig is a gateway binary over a fresh database, sending to an in-process simulator
// whose signed status reports go back to the gateway's address (kept across restarts).
type broadcastRig struct {
	t    *testing.T
	sim  *simulator.Simulator
	env  []string
	addr string
	key  string
	gw   *process
}

// newBroadcastRig seeds an account with the development number (throughput reported as
// STANDARD, 80/s, and not enforced by the simulator, so the gateway's own pacing is what is
// measured; messaging limit unlimited) and a live key, and starts the gateway.
func newBroadcastRig(t *testing.T) *broadcastRig {
	t.Helper()
	r := &broadcastRig{t: t, addr: freeAddr(t)}
	r.sim = simulator.New(simulator.Config{AppSecret: "local-app-secret", WebhookURL: "http://" + r.addr + "/platform/webhook",
		SentDelay: 300 * time.Millisecond, DeliveredDelay: time.Second, ReadDelay: 2 * time.Second,
		WebhookAttempts: 8, WebhookRetryBase: 200 * time.Millisecond})
	n := devNumber
	n.MessagingLimitTier = "TIER_UNLIMITED"
	r.sim.AddNumber(n)
	r.sim.SeedTemplates(n.WabaID, simulator.DefaultTemplates())
	simURL, err := r.sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.sim.Close() })
	dsn := storetest.DSN(t)
	vars := map[string]string{"DATABASE_URL": dsn, "PLATFORM_BASE_URL": simURL + "/v23.0", "GATEWAY_ADDR": r.addr,
		"GATEWAY_MIGRATE": "false", "LOG_LEVEL": "warn", "PLATFORM_TIMEOUT": "2s", "GATEWAY_SEND_RECORD_RETRY": "1s",
		"GATEWAY_BROADCAST_LEASE": "2s", "GATEWAY_BROADCAST_UNKNOWN_AFTER": "5s", "GATEWAY_BROADCAST_RESEND_UNKNOWN_AFTER": "40s"}
	for k, v := range vars {
		r.env = append(r.env, k+"="+v)
	}
	bg := context.Background()
	a, err := openApp(bg, mustConfig(t, func(k string) string { return vars[k] }), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	acct, err := createAccount(bg, a.store, "Broadcast Ltd", "broadcast@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.ConnectNumber(bg, store.Connection{AccountID: acct.ID, WabaID: n.WabaID, PhoneNumberID: n.PhoneNumberID,
		PhoneNumber: n.DisplayPhoneNumber, DisplayName: "Broadcast", AccessToken: n.AccessToken}); err != nil {
		t.Fatal(err)
	}
	if err := devSyncTemplates(bg, a, acct.ID); err != nil {
		t.Fatal(err)
	}
	k, err := createKey(bg, a.store, acct.ID, "live")
	if err != nil {
		t.Fatal(err)
	}
	r.key = k.Key
	r.start()
	return r
}

// start runs the gateway and waits until it answers.
func (r *broadcastRig) start() {
	r.t.Helper()
	r.gw = startProcess(r.t, r.env, "serve")
	waitHTTP(r.t, "http://"+r.addr+"/healthz", 30*time.Second)
}

// call makes an API request and decodes the envelope's data into out.
func (r *broadcastRig) call(method, path string, body any, want int, out any) {
	r.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			r.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+r.addr+path, rd)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		r.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, &struct {
			Data any `json:"data"`
		}{out}); err != nil {
			r.t.Fatal(err)
		}
	}
}

type e2eBroadcast struct {
	ID     int64          `json:"id"`
	State  string         `json:"state"`
	Counts map[string]int `json:"counts"`
}

func (r *broadcastRig) create(n int) e2eBroadcast {
	r.t.Helper()
	rs := make([]map[string]any, n)
	for i := range rs {
		rs[i] = map[string]any{"mobile": fmt.Sprintf("4477%08d", i), "variables": map[string]string{"name": fmt.Sprintf("P%d", i)}}
	}
	var b e2eBroadcast
	r.call(http.MethodPost, "/v1/broadcasts", map[string]any{"name": "spring sale", "template_name": "order_confirmation",
		"parameters": []any{map[string]any{"variable": "name"}, map[string]any{"value": "ORD-1"}}, "recipients": rs}, http.StatusCreated, &b)
	return b
}

type e2eRecipient struct {
	Mobile   string `json:"mobile"`
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
}

// recipients pages through the broadcast's recipients.
func (r *broadcastRig) recipients(id int64) []e2eRecipient {
	r.t.Helper()
	var out []e2eRecipient
	path := fmt.Sprintf("/v1/broadcasts/%d/recipients?limit=1000", id)
	for {
		var p struct {
			Recipients []e2eRecipient `json:"recipients"`
			NextCursor *string        `json:"next_cursor"`
		}
		r.call(http.MethodGet, path, nil, http.StatusOK, &p)
		out = append(out, p.Recipients...)
		if p.NextCursor == nil {
			return out
		}
		path = fmt.Sprintf("/v1/broadcasts/%d/recipients?limit=1000&cursor=%s", id, *p.NextCursor)
	}
}

func (r *broadcastRig) get(id int64) e2eBroadcast {
	r.t.Helper()
	var b e2eBroadcast
	r.call(http.MethodGet, fmt.Sprintf("/v1/broadcasts/%d", id), nil, http.StatusOK, &b)
	return b
}

// waitSent waits until the simulator has accepted n sends.
func (r *broadcastRig) waitSent(n int, within time.Duration) {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for len(r.sim.Sent()) < n {
		if time.Now().After(deadline) {
			r.t.Fatalf("%d sends accepted, waiting for %d", len(r.sim.Sent()), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The gateway process is killed with SIGKILL three times during a broadcast and started
// again each time: every recipient is accepted by the platform exactly once (counted at the
// simulator: none twice, none skipped), the broadcast completes with every recipient sent,
// and with the number at 80 messages per second no clock second at the simulator saw more
// than 80 sends (the simulator does not enforce the rate here). A recipient whose message was
// recorded but whose request never reached the platform (killed in between) is sent again
// once the platform's reports have had GATEWAY_BROADCAST_RESEND_UNKNOWN_AFTER to name it.
func TestBroadcastSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the gateway binary")
	}
	r := newBroadcastRig(t)
	const n = 1200
	b := r.create(n)
	for _, at := range []int{200, 500, 800} {
		r.waitSent(at, 60*time.Second)
		r.gw.kill(syscall.SIGKILL)
		t.Logf("killed at %d accepted sends", len(r.sim.Sent()))
		r.start()
	}
	deadline := time.Now().Add(120 * time.Second)
	var got e2eBroadcast
	for got = r.get(b.ID); got.State != "completed"; got = r.get(b.ID) {
		if time.Now().After(deadline) {
			t.Fatalf("broadcast not completed: %+v (%d accepted)", got, len(r.sim.Sent()))
		}
		time.Sleep(200 * time.Millisecond)
	}
	sends := map[string]int{}
	for _, m := range r.sim.Sent() {
		sends[m.WaID]++
	}
	for i := range n {
		if c := sends[fmt.Sprintf("4477%08d", i)]; c != 1 {
			t.Errorf("recipient %d: %d platform sends, want 1", i, c)
		}
	}
	if len(sends) != n {
		t.Errorf("the simulator accepted sends to %d people, want %d", len(sends), n)
	}
	resent := 0
	for _, rec := range r.recipients(b.ID) {
		if rec.Status != "sent" {
			t.Errorf("recipient %s is %s", rec.Mobile, rec.Status)
		}
		if rec.Attempts > 1 {
			resent++
		}
	}
	if c := got.Counts; c["pending"]+c["sending"]+c["failed"]+c["cancelled"] != 0 || c["total"] != n {
		t.Errorf("counts %v", c)
	}
	if most := r.sim.MaxSendsPerSecond(devNumber.PhoneNumberID); most > 80 {
		t.Errorf("a second saw %d sends at the simulator, over the number's 80", most)
	} else {
		t.Logf("counts %v; most sends in one second %d; recipients called again after the crash: %d", got.Counts, most, resent)
	}
}
