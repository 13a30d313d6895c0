package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/server/broadcast"
	"gateway/server/servertest"
)

// A portfolio at the 2,000 tier and a broadcast to 2,500 people it has not reached: through
// the gateway's send path, 2,000 are sent and the broadcast pauses for the portfolio's budget
// with the time it can resume (and its broadcast.paused event); once the injected clock
// reaches that time it resumes by itself and sends the other 500. The simulator, which keeps
// the same budget, drops none, and accepts each person once.
func TestBroadcastPortfolioBudgetPausesAndResumes(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Now().UTC().Truncate(time.Millisecond)}
	env := servertest.New(t, servertest.Config{Simulator: &simulator.Config{Clock: clock.Now}})
	a := env.NewTenant("Acme Ltd")
	conn := env.ConnectNumber(a)
	syncTemplates(t, env, a.Account.ID)
	env.Sim.SetPortfolio(conn.WabaID, simulator.Tier2K, false)
	// The lease outlasts the slowest run's sending of the 2,000 claimed recipients: a lease that
	// runs out before a call gives its recipient back due a lease later on the injected clock,
	// which stands still here until the resume (the store's budget test covers that case).
	e, err := broadcast.New(env.Store, broadcast.Config{Sender: env.Server.BroadcastSender(), Share: 1,
		Poll: 50 * time.Millisecond, Clock: clock.Now, Lease: 10 * time.Minute,
		Throughput: func(context.Context, string) int { return 1000 },
		Budget:     func(context.Context, int64, string) int { return simulator.Tier2K }})
	if err != nil {
		t.Fatal(err)
	}
	var rs []any
	for i := range 2500 {
		rs = append(rs, map[string]any{"mobile": fmt.Sprintf("4477%08d", i), "variables": map[string]any{"name": fmt.Sprintf("P%d", i)}})
	}
	b := createBroadcast(t, env, a.Live, map[string]any{"name": "tiered", "template_name": "order_confirmation",
		"parameters": []any{map[string]any{"variable": "name"}, map[string]any{"value": "ORD-1"}}, "recipients": rs})
	// The recipients are due from the database's now(); the clock starts past it.
	clock.Advance(time.Since(clock.Now()) + time.Second)
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop(context.Background()) })
	var paused struct {
		broadcastData
		ResumeAt *time.Time `json:"resume_at"`
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		wantOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: fmt.Sprintf("/v1/broadcasts/%d", b.ID), Key: a.Live}), &paused)
		if paused.State == "paused" && paused.Counts.Sending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not paused: %+v", paused)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c := paused.Counts
	if paused.PauseReason != "portfolio_limit" || paused.ResumeAt == nil || !paused.ResumeAt.After(clock.Now()) ||
		c.Sent+c.Delivered+c.Read != 2000 || c.Pending != 500 {
		t.Fatalf("paused %+v resume_at %v (clock %v)", paused.broadcastData, paused.ResumeAt, clock.Now())
	}
	if got := distinctAccepted(env.Sim); got != 2000 {
		t.Fatalf("the simulator accepted sends to %d people while paused, want 2000", got)
	}
	var events int
	if err := env.Store.DB().Get(&events, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'broadcast.paused'
		AND data->>'reason' = 'portfolio_limit'`, a.Account.ID); err != nil || events != 1 {
		t.Fatalf("broadcast.paused events: %d (%v)", events, err)
	}
	clock.Advance(paused.ResumeAt.Sub(clock.Now()) + time.Second)
	done := waitBroadcast(t, env, a.Live, b.ID, "completed")
	if c := done.Counts; c.Sent+c.Delivered+c.Read != 2500 || c.Failed+c.Unknown+c.Pending != 0 {
		t.Fatalf("completed %+v", c)
	}
	if got := distinctAccepted(env.Sim); got != 2500 || len(env.Sim.Sent()) != 2500 {
		t.Fatalf("the simulator accepted %d sends to %d people, want 2500 each once", len(env.Sim.Sent()), got)
	}
	for _, m := range env.Sim.Sent() {
		if m.Dropped != "" {
			t.Fatalf("the simulator dropped a send past the portfolio's limit: %+v", m)
		}
	}
}

func distinctAccepted(sim *simulator.Simulator) int {
	seen := map[string]bool{}
	for _, m := range sim.Sent() {
		seen[m.WaID] = true
	}
	return len(seen)
}
