package broadcast_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/platform/whatsapp"
	"gateway/server/broadcast"
	"gateway/store"
	"gateway/store/storetest"
)

const (
	phoneID = "106540352242922"
	wabaID  = "102290129340398"
	bizID   = "biz-portfolio-1"
	token   = "token"
)

// rig is a store on a fresh database, the simulator on loopback and an account.
type rig struct {
	t       testing.TB
	st      *store.Store
	sim     *simulator.Simulator
	client  *whatsapp.Client
	account int64
	adopted atomic.Int64
}

// newRig starts the simulator with cfg (its webhooks go to a receiver that adopts broadcast
// recipients by their callback data, as the gateway's status path will).
func newRig(t testing.TB, cfg simulator.Config, throughput int) *rig {
	t.Helper()
	r := &rig{t: t, st: storetest.New(t)}
	a, err := r.st.CreateAccount(context.Background(), "acme", "acme@example.com", fmt.Sprintf("join-%d", time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	r.account = a.ID
	hook := httptest.NewServer(http.HandlerFunc(r.adopt))
	t.Cleanup(hook.Close)
	cfg.WebhookURL = hook.URL
	r.sim = simulator.New(cfg)
	t.Cleanup(func() { r.sim.Close() })
	base, err := r.sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.sim.AddNumber(simulator.Number{PhoneNumberID: phoneID, WabaID: wabaID, DisplayPhoneNumber: "15550783881",
		AccessToken: token, Throughput: throughput, BusinessID: bizID})
	r.sim.SeedTemplates(wabaID, simulator.DefaultTemplates())
	r.client = whatsapp.NewClient(base+"/v23.0", nil)
	return r
}

// adopt receives the simulator's status webhooks and adopts the recipients they name.
func (r *rig) adopt(w http.ResponseWriter, req *http.Request) {
	var p whatsapp.WebhookPayload
	if err := json.NewDecoder(req.Body).Decode(&p); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, e := range p.Entry {
		for _, c := range e.Changes {
			for _, s := range c.Value.Statuses {
				id, ok := broadcast.ParseCallbackData(s.BizOpaqueCallbackData)
				// The first report of an accepted message proves the call happened; the later
				// ones (delivered, read) would only repeat it.
				if !ok || s.Status != "sent" {
					continue
				}
				if changed, err := r.st.AdoptBroadcastRecipient(req.Context(), r.account, id, s.ID, time.Now()); err == nil && changed {
					r.adopted.Add(1)
				}
			}
		}
	}
	w.WriteHeader(http.StatusOK)
}

func (r *rig) sender() broadcast.PlatformSender {
	return broadcast.PlatformSender{Client: r.client, Token: func(string) string { return token }}
}

// engine returns a started engine; cancel its context to crash it.
func (r *rig) engine(ctx context.Context, cfg broadcast.Config) *broadcast.Engine {
	r.t.Helper()
	if cfg.Sender == nil {
		cfg.Sender = r.sender()
	}
	cfg.Poll = cmpOr(cfg.Poll, 50*time.Millisecond)
	e, err := broadcast.New(r.st, cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := e.Start(ctx); err != nil {
		r.t.Fatal(err)
	}
	return e
}

func cmpOr(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

// numbers returns n distinct recipients.
func numbers(n int) []store.RecipientInput {
	out := make([]store.RecipientInput, n)
	for i := range out {
		out[i] = store.RecipientInput{Mobile: fmt.Sprintf("4477%08d", i), Variables: map[string]string{"name": fmt.Sprintf("P%d", i)}}
	}
	return out
}

func (r *rig) create(template string, rs []store.RecipientInput) store.Broadcast {
	r.t.Helper()
	in := store.BroadcastInput{Name: "spring sale", PhoneNumberID: phoneID, Portfolio: bizID, TemplateName: template, TemplateLanguage: "en_US"}
	if template == "order_confirmation" {
		in.Params = []store.BroadcastParam{{Variable: "name"}, {Value: "ORD-1"}}
	}
	b, err := r.st.CreateBroadcast(context.Background(), r.account, in, rs)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// waitFor polls cond every 50 ms until it holds or limit passes.
func (r *rig) waitFor(limit time.Duration, what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out after %s waiting for %s (%d accepted by the simulator)", limit, what, len(r.sim.Sent()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *rig) broadcast(id int64) store.Broadcast {
	r.t.Helper()
	b, err := r.st.BroadcastByID(context.Background(), r.account, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

func (r *rig) counts(id int64) map[string]int {
	r.t.Helper()
	c, err := r.st.BroadcastCounts(context.Background(), r.account, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// accepted counts the simulator's accepted sends per recipient number.
func (r *rig) accepted() map[string]int {
	out := map[string]int{}
	for _, m := range r.sim.Sent() {
		out[m.WaID]++
	}
	return out
}

// recipients returns every recipient of the broadcast.
func (r *rig) recipients(id int64) []store.BroadcastRecipient {
	r.t.Helper()
	var out []store.BroadcastRecipient
	after := int64(0)
	for range 1000 {
		page, err := r.st.BroadcastRecipients(context.Background(), r.account, id, after, 1000)
		if err != nil {
			r.t.Fatal(err)
		}
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
		after = page[len(page)-1].ID
	}
	return out
}

// fakeClock is an injected clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}
