package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gateway/platform/whatsapp"
)

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func TestPercentile(t *testing.T) {
	var hundred []time.Duration
	for i := 1; i <= 100; i++ {
		hundred = append(hundred, ms(float64(i)))
	}
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", []time.Duration{ms(3)}, 99, ms(3)},
		{"p50 of 100", hundred, 50, ms(50)},
		{"p99 of 100", hundred, 99, ms(99)},
		{"p100 of 100", hundred, 100, ms(100)},
		{"tiny p is the minimum", hundred, 0.001, ms(1)},
		{"p50 of 3", []time.Duration{ms(1), ms(2), ms(9)}, 50, ms(2)},
		{"p99 of 3", []time.Duration{ms(1), ms(2), ms(9)}, 99, ms(9)},
	} {
		if got := percentile(tc.sorted, tc.p); got != tc.want {
			t.Errorf("%s: percentile(p%v) = %v, want %v", tc.name, tc.p, got, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	res := loadResult{OK: 4, Failed: 2, Window: 2 * time.Second,
		Latencies: []time.Duration{ms(4), ms(1), ms(3), ms(2)}, Samples: map[string]int{"500 boom": 2}}
	s := summarize(res)
	if s.PerSec != 2 {
		t.Errorf("PerSec = %v, want 2 (4 answers in 2 s)", s.PerSec)
	}
	if s.P50 != ms(2) || s.P99 != ms(4) {
		t.Errorf("P50, P99 = %v, %v; want 2ms, 4ms", s.P50, s.P99)
	}
	if s.OK != 4 || s.Errors != 2 || s.Samples["500 boom"] != 2 || s.Busy != -1 {
		t.Errorf("counts = %+v", s)
	}
	if z := summarize(loadResult{}); z.PerSec != 0 || z.P99 != 0 {
		t.Errorf("empty run = %+v, want zeros", z)
	}
}

func TestMergeResults(t *testing.T) {
	m := mergeResults([]loadResult{
		{OK: 1, Failed: 1, Latencies: []time.Duration{ms(1)}, Samples: map[string]int{"a": 1}},
		{OK: 2, Latencies: []time.Duration{ms(2), ms(3)}, Samples: map[string]int{"a": 2, "b": 1}},
	})
	if m.OK != 3 || m.Failed != 1 || len(m.Latencies) != 3 || m.Samples["a"] != 3 || m.Samples["b"] != 1 {
		t.Errorf("merged = %+v", m)
	}
}

func reportRows() []runStats {
	return []runStats{
		{Phase: phaseSend, Concurrency: 16, Target: targetGateway, PerSec: 1900, P50: ms(8), P99: ms(20), Busy: 0.97, Steal: 0.2,
			ServerCPU: 300 * time.Microsecond, Round: 1},
		{Phase: phaseSend, Concurrency: 16, Target: targetFloor, PerSec: 3000, P50: ms(5), P99: ms(12), Busy: -1, Steal: -1, Round: 1},
		{Phase: phasePoll, Concurrency: 64, Target: targetGateway, PerSec: 5000, P50: ms(12), P99: ms(30), Errors: 3, Busy: -1, Steal: -1, Round: 1},
		{Phase: phasePoll, Concurrency: 64, Target: targetFloor, PerSec: 20000, P50: ms(3), P99: ms(8), Busy: -1, Steal: -1, Round: 1},
		{Phase: phaseStatus, Concurrency: 16, Target: targetGateway, PerSec: 100, Busy: -1, Steal: -1, Round: 1},
	}
}

func TestRatio(t *testing.T) {
	rows := reportRows()
	if v, ok := ratio(rows, phaseSend, 16, 1); !ok || v < 0.633 || v > 0.634 {
		t.Errorf("send ratio = %v, %v; want 0.633", v, ok)
	}
	if v, ok := ratio(rows, phasePoll, 64, 1); !ok || v != 0.25 {
		t.Errorf("poll ratio = %v, %v; want 0.25", v, ok)
	}
	if _, ok := ratio(rows, phaseStatus, 16, 1); ok {
		t.Error("status has no floor row: want no ratio")
	}
	if _, ok := ratio(rows, phaseSend, 64, 1); ok {
		t.Error("no send rows at c=64: want no ratio")
	}
	if _, ok := ratio(rows, phaseSend, 16, 2); ok {
		t.Error("no round 2: want no ratio")
	}
	zero := []runStats{{Phase: phaseSend, Concurrency: 1, Target: targetGateway, PerSec: 5, Round: 1}, {Phase: phaseSend, Concurrency: 1, Target: targetFloor, Round: 1}}
	if _, ok := ratio(zero, phaseSend, 1, 1); ok {
		t.Error("a floor with 0 req/s must give no ratio")
	}
}

func TestMedianRatio(t *testing.T) {
	var rows []runStats
	for round, pair := range [][2]float64{{50, 100}, {90, 100}, {70, 100}, {40, 50}} {
		rows = append(rows,
			runStats{Phase: phasePoll, Concurrency: 16, Target: targetGateway, PerSec: pair[0], Round: round + 1},
			runStats{Phase: phasePoll, Concurrency: 16, Target: targetFloor, PerSec: pair[1], Round: round + 1})
	}
	// Ratios 0.5, 0.9, 0.7, 0.8: the median of four is (0.7+0.8)/2.
	if v, ok := medianRatio(rows, phasePoll, 16); !ok || math.Abs(v-0.75) > 1e-9 {
		t.Errorf("median of 4 = %v, %v; want 0.75", v, ok)
	}
	if v, ok := medianRatio(rows[:6], phasePoll, 16); !ok || math.Abs(v-0.7) > 1e-9 {
		t.Errorf("median of 3 = %v, %v; want 0.7", v, ok)
	}
	if _, ok := medianRatio(rows, phaseSend, 16); ok {
		t.Error("no send rows: want no median")
	}
	out := formatReport(rows, time.Second, 0)
	if !strings.Contains(out, "median of 4 rounds") || !strings.Contains(out, "poll   c=16 0.75x: meets") || !strings.HasPrefix(strings.TrimSpace(strings.Split(out, "\n")[3]), "round") {
		t.Errorf("report with rounds:\n%s", out)
	}
}

func TestFormatReport(t *testing.T) {
	out := formatReport(reportRows(), 10*time.Second, 2*time.Second)
	for _, want := range []string{
		"2s warm-up + 10s measured",
		"ours/floor",
		"1,900", "20,000", "0.63x", "0.25x", "97%", "20%", "300µs",
		"send   c=16 0.63x: meets the 0.6x goal",
		"poll   c=64 0.25x: BELOW the 0.6x goal",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "status c=16") || strings.Contains(out, "round") {
		t.Errorf("status has no ratio, so no verdict; one round, so no round column:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " floor ") && strings.HasSuffix(strings.TrimSpace(l), "x") {
			t.Errorf("a floor row carries a ratio: %q", l)
		}
	}
}

func TestCPUAccounting(t *testing.T) {
	busy, steal, total, ok := parseCPULine("cpu  100 0 50 800 20 0 10 20 5 0")
	if !ok || total != 1000 || busy != 180 || steal != 20 {
		t.Errorf("parseCPULine = %d, %d, %d, %v; want 180, 20, 1000", busy, steal, total, ok)
	}
	if _, _, _, ok := parseCPULine("intr 1 2 3"); ok {
		t.Error("not a cpu line: want !ok")
	}
	a := cpuSample{target: 100, self: 10, busy: 0, steal: 0, total: 0, ok: true}
	b := cpuSample{target: 200, self: 30, busy: 150, steal: 20, total: 200, ok: true}
	srv, gen, busyShare, stealShare := cpuPerRequest(a, b, 1000)
	if srv != time.Millisecond || gen != 200*time.Microsecond || busyShare != 0.75 || stealShare != 0.1 {
		t.Errorf("cpuPerRequest = %v, %v, %v, %v", srv, gen, busyShare, stealShare)
	}
	if _, _, busyShare, _ := cpuPerRequest(cpuSample{}, b, 10); busyShare != -1 {
		t.Error("an unknown sample must give -1")
	}
}

func TestErrorSamples(t *testing.T) {
	rows := []runStats{
		{Phase: phaseSend, Concurrency: 16, Target: targetGateway, Errors: 3, Samples: map[string]int{"500 b": 1, "502 a": 2}},
		{Phase: phaseSend, Concurrency: 16, Target: targetFloor},
	}
	got := errorSamples(rows)
	want := "  send c=16 gateway: 1× 500 b\n  send c=16 gateway: 2× 502 a\n"
	if got != want {
		t.Errorf("errorSamples = %q, want %q", got, want)
	}
}

func TestParseBenchFlags(t *testing.T) {
	o, err := parseBenchFlags(nil, "postgres://x/gateway_bench", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Duration != 10*time.Second || o.Warmup != 2*time.Second || o.Messages != 1_000_000 ||
		len(o.Concurrency) != 2 || o.Concurrency[0] != 16 || o.Concurrency[1] != 64 ||
		strings.Join(o.Phases, ",") != "send,send-rich,status,poll" || !o.Floor || !o.Gateway || o.DatabaseURL != "postgres://x/gateway_bench" {
		t.Errorf("defaults = %+v", o)
	}
	o, err = parseBenchFlags([]string{"--duration", "2s", "--concurrency", "4, 8", "--only", "poll,send", "--floor=false"}, "d", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Duration != 2*time.Second || o.Concurrency[1] != 8 || o.Phases[0] != phasePoll || o.Floor {
		t.Errorf("parsed = %+v", o)
	}
	for _, bad := range [][]string{
		{"--concurrency", "0"}, {"--concurrency", "a"}, {"--only", "send,send"}, {"--only", "read"},
		{"--duration", "0s"}, {"--duration", "1h"}, {"--messages", "0"}, {"--floor=false", "--gateway=false"}, {"extra"},
	} {
		if _, err := parseBenchFlags(bad, "d", io.Discard); err == nil {
			t.Errorf("flags %q: want an error", bad)
		}
	}
}

func TestBenchDSN(t *testing.T) {
	got, err := benchDSN("postgres://postgres@127.0.0.1:5432/gateway?sslmode=disable")
	if err != nil || got != "postgres://postgres@127.0.0.1:5432/gateway_bench?sslmode=disable" {
		t.Errorf("benchDSN = %q, %v", got, err)
	}
}

func TestFormatting(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{0: "-", 850 * time.Microsecond: "850µs", ms(4.216): "4.22ms",
		ms(17.04): "17.0ms", 1250 * time.Millisecond: "1.25s"} {
		if got := fmtDur(d); got != want {
			t.Errorf("fmtDur(%v) = %q, want %q", d, got, want)
		}
	}
	if got := commandLine([]string{"/tmp/bin/gateway", "bench", "--only", "send,poll", "a b"}); got != "gateway bench --only send,poll 'a b'" {
		t.Errorf("commandLine = %q", got)
	}
	if got := oneLine([]byte("a\n  b\tc"), 3); got != "a b…" {
		t.Errorf("oneLine = %q", got)
	}
}

func TestAppendRequestParses(t *testing.T) {
	body := sendBody(rand.New(rand.NewPCG(1, 1)))
	raw := appendRequest(nil, "POST", "127.0.0.1:9", "/v1/messages/template", body, "Authorization: Bearer k", "Content-Type: application/json")
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(req.Body)
	if req.Method != "POST" || req.URL.Path != "/v1/messages/template" || req.Host != "127.0.0.1:9" ||
		req.Header.Get("Authorization") != "Bearer k" || !bytes.Equal(got, body) {
		t.Errorf("parsed %s %s host %s auth %q body %q", req.Method, req.URL, req.Host, req.Header.Get("Authorization"), got)
	}
	var send struct {
		Destination   string   `json:"destination"`
		TemplateName  string   `json:"template_name"`
		BodyVariables []string `json:"body_variables"`
	}
	if err := json.Unmarshal(body, &send); err != nil || len(send.Destination) != 11 || send.TemplateName != benchTemplate.Name ||
		len(send.BodyVariables) != benchTemplate.BodyParams {
		t.Errorf("send body %s: %+v, %v", body, send, err)
	}
	get := appendRequest(nil, "GET", "h", "/v1/messages/7", nil, "Authorization: Bearer k")
	if req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(get))); err != nil || req.ContentLength != 0 {
		t.Errorf("GET parsed %v, %v", req, err)
	}
}

func TestStatusBody(t *testing.T) {
	b := statusBody(benchNumber, "wamid.bench.42", "delivered", 1700000000, "199900000009")
	var hook floorWebhook
	if err := json.Unmarshal(b, &hook); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	v := hook.Entry[0].Changes[0].Value
	if v.Metadata.PhoneNumberID != benchNumber.PhoneNumberID || v.Statuses[0].ID != "wamid.bench.42" ||
		v.Statuses[0].Status != "delivered" || v.Statuses[0].Timestamp != "1700000000" || hook.Entry[0].Changes[0].Field != "messages" {
		t.Errorf("parsed %+v", hook)
	}
	if !whatsapp.VerifySignature([]byte("s"), b, whatsapp.SignatureHeader([]byte("s"), b)) {
		t.Error("signature does not verify")
	}
}

func TestHTTPConnKeepsAliveAndReportsFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			http.Error(w, "not built yet", http.StatusInternalServerError)
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	c := &httpConn{addr: addr, deadline: time.Now().Add(5 * time.Second)}
	defer c.close()
	for i := 0; i < 3; i++ {
		code, _, err := c.do(appendRequest(nil, "POST", addr, "/ok", []byte(`{}`)))
		if err != nil || code != 200 {
			t.Fatalf("request %d: %d, %v", i, code, err)
		}
	}
	first := c.conn
	code, body, err := c.do(appendRequest(nil, "GET", addr, "/fail", nil))
	if err != nil || code != 500 || !strings.Contains(string(body), "not built yet") {
		t.Errorf("failure: %d %q %v", code, body, err)
	}
	if c.conn != first {
		t.Error("the connection was not kept alive")
	}
	// A connection the server closed is replaced transparently.
	srv.CloseClientConnections()
	if code, _, err := c.do(appendRequest(nil, "GET", addr, "/ok", nil)); err != nil || code != 200 {
		t.Errorf("after the server closed the connection: %d, %v", code, err)
	}
}

func TestRunLoadCountsOnlyTheWindow(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1)%10 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	var starts, ends atomic.Int32
	res := runLoad(t.Context(), addr, loadSpec{
		Concurrency: 4, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond,
		NewRequest: func(dst []byte, _ *rand.Rand) []byte {
			return appendRequest(dst, "GET", addr, "/", nil)
		},
		OnMeasureStart: func() { starts.Add(1) },
		OnMeasureEnd:   func() { ends.Add(1) },
	})
	if starts.Load() != 1 || ends.Load() != 1 {
		t.Errorf("edges called %d/%d times, want 1/1", starts.Load(), ends.Load())
	}
	if res.OK == 0 || res.Failed == 0 || len(res.Latencies) != res.OK || res.Window != 300*time.Millisecond {
		t.Errorf("result: ok %d failed %d latencies %d window %v", res.OK, res.Failed, len(res.Latencies), res.Window)
	}
	if int64(res.OK+res.Failed) >= served.Load() {
		t.Errorf("counted %d of %d served: the warm-up must not count", res.OK+res.Failed, served.Load())
	}
	if res.Samples["503 "] == 0 {
		t.Errorf("samples = %v, want 503s", res.Samples)
	}
}

// The report compares the gateway's CPU per rich send with its CPU per text send, per
// concurrency, against the +10 % limit; it says nothing when either row is missing.
func TestRichCost(t *testing.T) {
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	rows := []runStats{
		{Phase: phaseSend, Concurrency: 16, Target: targetGateway, ServerCPU: us(1000), Round: 1},
		{Phase: phaseSend, Concurrency: 16, Target: targetFloor, ServerCPU: us(400), Round: 1},
		{Phase: phaseSendRich, Concurrency: 16, Target: targetGateway, ServerCPU: us(1050), Round: 1},
	}
	if got := richCost(rows); !strings.Contains(got, "c=16") || !strings.Contains(got, "+5%") || !strings.Contains(got, "meets") {
		t.Fatalf("5 %% dearer: %q", got)
	}
	rows[2].ServerCPU = us(1200)
	if got := richCost(rows); !strings.Contains(got, "+20%") || !strings.Contains(got, "ABOVE") {
		t.Fatalf("20 %% dearer: %q", got)
	}
	if got := richCost(rows[:2]); got != "" {
		t.Fatalf("no send-rich row: %q", got)
	}
	if ps, err := parsePhases("send,send-rich"); err != nil || len(ps) != 2 || ps[1] != phaseSendRich {
		t.Fatalf("parsePhases: %v %v", ps, err)
	}
}
