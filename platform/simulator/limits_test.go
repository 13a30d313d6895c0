package simulator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sendAs POSTs a template send of name to to as the number; it returns the HTTP status and
// the Graph error code (0 on success).
func (h *harness) sendAs(phoneID, token, to, name string, comps ...map[string]any) (int, int) {
	h.t.Helper()
	code, out, _ := h.do(http.MethodPost, "/v23.0/"+phoneID+"/messages", token, templateSend(to, name, "en_US", comps...))
	if code == 200 {
		return code, 0
	}
	c, _, _, _ := graphErr(h.t, out)
	return code, c
}

func TestThroughputPerNumberPerClockSecond(t *testing.T) {
	clk := newFakeClock()
	cfg := webhookConfig(newReceiver(t)) // inbound messages need a webhook URL
	cfg.Clock = clk.Now
	h := newHarness(t, cfg)
	h.sim.AddNumber(Number{PhoneNumberID: testPhoneID, WabaID: testWabaID, DisplayPhoneNumber: testDisplay, AccessToken: testToken, Throughput: ThroughputStandard})
	h.sim.AddNumber(Number{PhoneNumberID: "777", WabaID: testWabaID, DisplayPhoneNumber: "15550000001", AccessToken: "tok-777", Throughput: ThroughputCoexistence})

	// A refused send (unknown template) does not use the second's throughput.
	if code, c := h.sendAs(testPhoneID, testToken, "+447700900001", "no_such_template"); code != 404 || c != 132001 {
		t.Fatalf("unknown template: HTTP %d code %d", code, c)
	}
	for i := range ThroughputStandard {
		if code, c := h.sendAs(testPhoneID, testToken, fmt.Sprintf("+4477009%05d", i), "welcome"); code != 200 {
			t.Fatalf("send %d: HTTP %d code %d", i, code, c)
		}
	}
	if code, c := h.sendAs(testPhoneID, testToken, "+447700999999", "welcome"); code != 400 || c != 130429 {
		t.Fatalf("send 81 in one second: HTTP %d code %d, want 400 130429", code, c)
	}
	// The coexistence number has its own 20/s.
	for i := range ThroughputCoexistence {
		if code, c := h.sendAs("777", "tok-777", fmt.Sprintf("+4477008%05d", i), "welcome"); code != 200 {
			t.Fatalf("coexistence send %d: HTTP %d code %d", i, code, c)
		}
	}
	if code, c := h.sendAs("777", "tok-777", "+447700888888", "welcome"); c != 130429 {
		t.Fatalf("coexistence send 21: HTTP %d code %d", code, c)
	}

	// Next second: inbound messages count against the throughput too.
	clk.Advance(time.Second)
	for i := range 5 {
		if _, err := h.sim.InjectInboundMessage(Inbound{PhoneNumberID: testPhoneID, From: fmt.Sprintf("44770070%04d", i), Name: "Ana", Type: "text", Payload: map[string]any{"body": "hi"}}); err != nil {
			t.Fatal(err)
		}
	}
	accepted := 0
	for i := range ThroughputStandard {
		if code, _ := h.sendAs(testPhoneID, testToken, fmt.Sprintf("+4477006%05d", i), "welcome"); code == 200 {
			accepted++
		}
	}
	if accepted != ThroughputStandard-5 {
		t.Fatalf("second with 5 inbound accepted %d sends, want %d", accepted, ThroughputStandard-5)
	}

	secs := h.sim.SendsPerSecond(testPhoneID)
	if len(secs) != 2 || secs[0].Sends != 80 || secs[1].Sends != 75 || secs[1].Inbound != 5 || !secs[1].Second.Equal(clk.Now()) {
		t.Fatalf("SendsPerSecond = %+v", secs)
	}
	if got := h.sim.MaxSendsPerSecond(testPhoneID); got != 80 {
		t.Fatalf("MaxSendsPerSecond = %d", got)
	}
	code, out, _ := h.do(http.MethodGet, "/_sim/rate?phone_number_id="+testPhoneID, "", nil)
	if code != 200 || out["max_sends"] != float64(80) || out["throughput"] != float64(80) || len(out["data"].([]any)) != 2 {
		t.Fatalf("GET /_sim/rate: %d %v", code, out)
	}
}

func TestLimitsControlAPI(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, Config{Clock: clk.Now, RatePerSecond: ThroughputStandard})
	code, out, _ := h.do(http.MethodPost, "/_sim/limits", "", map[string]any{"phone_number_id": testPhoneID, "throughput": 2, "pair_interval_ms": 6000, "pair_burst": 2})
	if code != 200 || out["throughput"] != float64(2) || out["pair_interval_ms"] != float64(6000) || out["pair_burst"] != float64(2) || out["portfolio"] != testWabaID {
		t.Fatalf("POST /_sim/limits: %d %v", code, out)
	}
	// Pair burst 2: two sends to one person pass, the third is 131056 (not 130429: the
	// throughput of 2 is used by then, so move to the next second first).
	for i := range 2 {
		if code, c := h.sendAs(testPhoneID, testToken, "+447700900001", "welcome"); code != 200 {
			t.Fatalf("pair send %d: %d %d", i, code, c)
		}
	}
	if _, c := h.sendAs(testPhoneID, testToken, "+447700900002", "welcome"); c != 130429 {
		t.Fatalf("third send in the second: code %d, want 130429", c)
	}
	clk.Advance(time.Second)
	if _, c := h.sendAs(testPhoneID, testToken, "+447700900001", "welcome"); c != 131056 {
		t.Fatalf("third send to one person within 6 s: code %d, want 131056", c)
	}
	// The pair refusal did not use the throughput: another person still gets two sends.
	for i := range 2 {
		if code, c := h.sendAs(testPhoneID, testToken, fmt.Sprintf("+44770090010%d", i), "welcome"); code != 200 {
			t.Fatalf("other person %d: %d %d", i, code, c)
		}
	}
	clk.Advance(6 * time.Second)
	if code, c := h.sendAs(testPhoneID, testToken, "+447700900001", "welcome"); code != 200 {
		t.Fatalf("after the pair interval: %d %d", code, c)
	}

	if code, _, _ := h.do(http.MethodGet, "/_sim/limits?phone_number_id=nope", "", nil); code != 404 {
		t.Fatalf("unknown number: %d", code)
	}
	if code, _, _ := h.do(http.MethodPost, "/_sim/portfolio", "", map[string]any{"id": "b1", "tier": "TIER_3K"}); code != 400 {
		t.Fatalf("unknown tier: %d", code)
	}
	code, out, _ = h.do(http.MethodPost, "/_sim/portfolio", "", map[string]any{"id": "b1", "tier": "tier_2k", "marketing_limit": true})
	if code != 200 || out["limit"] != float64(Tier2K) || out["marketing_limit"] != true {
		t.Fatalf("POST /_sim/portfolio: %d %v", code, out)
	}
	if code, _, _ := h.do(http.MethodPost, "/_sim/rate", "", nil); code != 405 {
		t.Fatalf("POST /_sim/rate: %d", code)
	}
}

func TestMessagingLimitAcceptsAndDropsPastTheBudget(t *testing.T) {
	rc := newReceiver(t)
	clk := newFakeClock()
	cfg := webhookConfig(rc)
	cfg.Clock = clk.Now
	h := newHarness(t, cfg)
	h.sim.AddNumber(Number{PhoneNumberID: testPhoneID, WabaID: testWabaID, DisplayPhoneNumber: testDisplay, AccessToken: testToken, BusinessID: "biz-1"})
	// A second number of the same portfolio shares its budget.
	h.sim.AddNumber(Number{PhoneNumberID: "777", WabaID: testWabaID, DisplayPhoneNumber: "15550000001", AccessToken: "tok-777", BusinessID: "biz-1"})
	h.sim.SetPortfolio("biz-1", 2, false)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	drain := func(n int) {
		for range n {
			rc.next()
		}
		if err := h.sim.WaitIdle(ctx); err != nil {
			t.Fatal(err)
		}
		rc.none()
	}

	// A user who wrote in (an open window) does not count.
	if _, err := h.sim.InjectInboundMessage(Inbound{PhoneNumberID: testPhoneID, From: "447700900009", Name: "Ana", Type: "text", Payload: map[string]any{"body": "hi"}}); err != nil {
		t.Fatal(err)
	}
	drain(1)
	for _, to := range []string{"+447700900001", "+447700900009"} {
		if code, c := h.sendAs(testPhoneID, testToken, to, "welcome"); code != 200 {
			t.Fatalf("%s: %d %d", to, code, c)
		}
	}
	drain(6)
	if code, c := h.sendAs("777", "tok-777", "+447700900002", "welcome"); code != 200 {
		t.Fatalf("second recipient: %d %d", code, c)
	}
	drain(3)
	if st := h.sim.Portfolio("biz-1"); st.Used != 2 || st.Dropped != 0 {
		t.Fatalf("portfolio %+v", st)
	}
	// The third new recipient: accepted with a wamid, then nothing.
	code, out := h.send(templateSend("+447700900003", "welcome", "en_US"))
	if code != 200 || out["messages"].([]any)[0].(map[string]any)["id"] == "" {
		t.Fatalf("past the budget: %d %v", code, out)
	}
	drain(0)
	sent := h.sim.Sent()
	if last := sent[len(sent)-1]; last.Dropped != DroppedMessagingLimit || last.WaID != "447700900003" {
		t.Fatalf("last sent %+v", last)
	}
	// People already reached in the 24 h may still be messaged.
	if code, _ := h.send(templateSend("+447700900001", "welcome", "en_US")); code != 200 {
		t.Fatal(code)
	}
	drain(3)
	if st := h.sim.Portfolio("biz-1"); st.Used != 2 || st.Dropped != 1 || st.Limit != 2 {
		t.Fatalf("portfolio %+v", st)
	}
	// The window moves: 24 h after the first reach the budget is free again.
	clk.Advance(24*time.Hour + time.Minute)
	if st := h.sim.Portfolio("biz-1"); st.Used != 0 {
		t.Fatalf("after 24 h: %+v", st)
	}
	if code, _ := h.send(templateSend("+447700900003", "welcome", "en_US")); code != 200 {
		t.Fatal(code)
	}
	drain(3)
}

func TestMarketingUserLimit131049(t *testing.T) {
	rc := newReceiver(t)
	clk := newFakeClock()
	cfg := webhookConfig(rc)
	cfg.Clock = clk.Now
	cfg.MarketingUserLimit = true
	h := newHarness(t, cfg)
	statuses := func() (last string, code int) {
		t.Helper()
		for {
			status, _, _, w := decodeStatus(t, rc.next())
			if status == "failed" {
				return status, w.Entry[0].Changes[0].Value.Statuses[0].Errors[0].Code
			}
			if status == "read" {
				return status, 0
			}
		}
	}
	send := func(to, name string, comps ...map[string]any) {
		t.Helper()
		if code, c := h.sendAs(testPhoneID, testToken, to, name, comps...); code != 200 {
			t.Fatalf("%s to %s: %d %d (the marketing limit is asynchronous)", name, to, code, c)
		}
	}
	send("+447700900001", "welcome")
	if st, _ := statuses(); st != "read" {
		t.Fatalf("first marketing: %s", st)
	}
	clk.Advance(time.Hour)
	send("+447700900001", "welcome")
	if st, c := statuses(); st != "failed" || c != 131049 {
		t.Fatalf("second marketing within 24 h: %s %d", st, c)
	}
	// Utility templates are not limited.
	send("+447700900001", "order_confirmation", bodyParams("Ana", "ORD-1"))
	if st, _ := statuses(); st != "read" {
		t.Fatalf("utility: %s", st)
	}
	// The refused resend restarted the 24 h.
	clk.Advance(23 * time.Hour)
	send("+447700900001", "welcome")
	if st, c := statuses(); c != 131049 {
		t.Fatalf("resend 24 h after the first, 23 h after a refused one: %s %d", st, c)
	}
	clk.Advance(24 * time.Hour)
	send("+447700900001", "welcome")
	if st, _ := statuses(); st != "read" {
		t.Fatalf("after 24 h quiet: %s", st)
	}
	// Marketing templates are not delivered to US numbers.
	send("+15551234567", "welcome")
	if st, c := statuses(); c != 131049 {
		t.Fatalf("US marketing: %s %d", st, c)
	}
}

func TestTemplatePausedMidRun132015(t *testing.T) {
	h := newHarness(t, Config{})
	var (
		paused  atomic.Bool
		okSends atomic.Int32
		wg      sync.WaitGroup
		mu      sync.Mutex
		results []string
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				pausedBefore := paused.Load()
				code, out, _ := h.do(http.MethodPost, "/v23.0/"+testPhoneID+"/messages", testToken, templateSend(fmt.Sprintf("+447700%01d%05d", w, i), "welcome", "en_US"))
				c := 0
				if code == 200 {
					okSends.Add(1)
				} else {
					c, _, _, _ = graphErr(t, out)
				}
				mu.Lock()
				switch {
				case pausedBefore && (code != 400 || c != 132015):
					results = append(results, fmt.Sprintf("send after the pause: %d %d", code, c))
				case code != 200 && c != 132015:
					results = append(results, fmt.Sprintf("unexpected: %d %d", code, c))
				}
				mu.Unlock()
			}
		}()
	}
	// Pause once the run is under way.
	for deadline := time.Now().Add(waitLimit); okSends.Load() < 40 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	code, out, _ := h.do(http.MethodPost, "/_sim/template-status", "", map[string]any{"waba_id": testWabaID, "template_id": "1094411223344002", "status": "PAUSED"})
	if code != 200 {
		t.Fatalf("pause: %d %v", code, out)
	}
	paused.Store(true)
	wg.Wait()
	if len(results) > 0 {
		t.Fatal(results)
	}
	if n := okSends.Load(); n < 40 || n == 800 {
		t.Fatalf("%d of 800 sends accepted: the pause did not fall in the middle of the run", n)
	}
	if code, c := h.sendAs(testPhoneID, testToken, "+447700900001", "welcome"); code != 400 || c != 132015 {
		t.Fatalf("after the run: %d %d", code, c)
	}
}

func TestThroughputUpgrade131057(t *testing.T) {
	rc := newReceiver(t)
	clk := newFakeClock()
	cfg := webhookConfig(rc)
	cfg.Clock = clk.Now
	cfg.RatePerSecond = ThroughputStandard
	h := newHarness(t, cfg)
	code, out, _ := h.do(http.MethodPost, "/_sim/upgrade", "", map[string]any{"phone_number_id": testPhoneID, "window_ms": 60000})
	if code != 200 || out["upgrading_until"] == nil {
		t.Fatalf("POST /_sim/upgrade: %d %v", code, out)
	}
	var hook struct {
		Entry []struct {
			Changes []struct {
				Field string         `json:"field"`
				Value map[string]any `json:"value"`
			} `json:"changes"`
		} `json:"entry"`
	}
	if err := json.Unmarshal(rc.next().body, &hook); err != nil {
		t.Fatal(err)
	}
	if ch := hook.Entry[0].Changes[0]; ch.Field != "phone_number_quality_update" || ch.Value["event"] != "THROUGHPUT_UPGRADE" {
		t.Fatalf("webhook %+v", ch)
	}
	if code, c := h.sendAs(testPhoneID, testToken, "+447700900001", "welcome"); code != 500 || c != 131057 {
		t.Fatalf("during the upgrade: HTTP %d code %d, want 500 131057", code, c)
	}
	clk.Advance(59 * time.Second)
	if _, c := h.sendAs(testPhoneID, testToken, "+447700900001", "welcome"); c != 131057 {
		t.Fatalf("59 s in: code %d", c)
	}
	clk.Advance(time.Second)
	for i := range ThroughputStandard + 1 {
		if code, c := h.sendAs(testPhoneID, testToken, fmt.Sprintf("+4477009%05d", i), "welcome"); code != 200 {
			t.Fatalf("after the upgrade, send %d: %d %d", i, code, c)
		}
	}
	if lim, err := h.sim.Limits(testPhoneID); err != nil || lim.Throughput != ThroughputHigh || lim.UpgradingUntil != nil {
		t.Fatalf("limits %+v %v", lim, err)
	}
	code, out, _ = h.do(http.MethodGet, "/v23.0/"+testPhoneID+"?fields=throughput", testToken, nil)
	if code != 200 || out["throughput"].(map[string]any)["level"] != "HIGH" {
		t.Fatalf("GET number: %d %v", code, out)
	}
}

// BenchmarkSendLimits measures the limit bookkeeping of one accepted send: throughput
// second, pair bucket and portfolio budget.
func BenchmarkSendLimits(b *testing.B) {
	s := New(Config{RatePerSecond: 1 << 30, PairInterval: 6 * time.Second, MessagingLimit: 1 << 30})
	defer s.Close()
	n := Number{PhoneNumberID: "1", WabaID: "w", AccessToken: "t"}
	s.AddNumber(n)
	now := time.Unix(1_800_000_000, 0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.mu.Lock()
		if _, ge := s.reserveSend(n, now); ge != nil {
			b.Fatal(ge)
		}
		to := fmt.Sprint(447700000000 + i)
		s.pairAllowed("1", to, now)
		s.portfolioOf("w").reach(to, now)
		s.mu.Unlock()
		if i%1000 == 999 {
			now = now.Add(time.Second)
		}
	}
}

func TestMessagingLimitTier2KOf2500Recipients(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, Config{Clock: clk.Now, MessagingLimit: Tier2K})
	for i := range 2500 {
		if i == 1000 {
			clk.Advance(12 * time.Hour) // within the same 24 h
		}
		if code, c := h.sendAs(testPhoneID, testToken, fmt.Sprintf("+4479111%05d", i), "welcome"); code != 200 {
			t.Fatalf("send %d: %d %d", i, code, c)
		}
	}
	dropped := 0
	for _, m := range h.sim.Sent() {
		if m.Dropped != "" {
			dropped++
		}
	}
	if st := h.sim.Portfolio(testWabaID); st.Used != Tier2K || st.Dropped != 500 || dropped != 500 {
		t.Fatalf("portfolio %+v, %d dropped in the log", st, dropped)
	}
	// 24 h after the first 1,000 were reached, their share of the budget is free again.
	clk.Advance(12*time.Hour + time.Minute)
	if st := h.sim.Portfolio(testWabaID); st.Used != 1000 {
		t.Fatalf("after the first 1,000 left the window: %+v", st)
	}
}

func TestPerRecipientStateIsForgottenWhenItNoLongerMatters(t *testing.T) {
	s := New(Config{PairInterval: 6 * time.Second, MarketingUserLimit: true})
	defer s.Close()
	s.AddNumber(Number{PhoneNumberID: "1", WabaID: "w", AccessToken: "t"})
	now := time.Unix(1_800_000_000, 0)
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.portfolioOf("w")
	for i := range maxTracked {
		to := fmt.Sprint(447700000000 + i)
		if !s.pairAllowed("1", to, now) || p.marketingRefused(to, now) {
			t.Fatalf("first send to %s refused", to)
		}
	}
	// Still live: the next new recipient sweeps nothing away, and later ones do not sweep again.
	if !s.pairAllowed("1", "447800000000", now) || len(s.pairs) != maxTracked+1 || s.pairSweep != 2*maxTracked {
		t.Fatalf("live pairs swept: %d entries, next sweep at %d", len(s.pairs), s.pairSweep)
	}
	if s.pairAllowed("1", "447700000000", now) {
		t.Fatal("a live pair lost its state")
	}
	later := now.Add(25 * time.Hour)
	for i := range maxTracked {
		s.pairAllowed("1", fmt.Sprint(447900000000+i), later)
	}
	if len(s.pairs) > maxTracked+1 {
		t.Fatalf("%d pair entries after the old ones went stale", len(s.pairs))
	}
	p.marketingRefused("447800000001", later)
	if len(p.lastMarketing) != 1 || p.marketingRefused("447700000000", later) {
		t.Fatalf("%d marketing entries after 25 h", len(p.lastMarketing))
	}
}
