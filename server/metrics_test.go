package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"gateway/platform/eventhook"
	"gateway/platform/simulator"
	"gateway/server"
	"gateway/server/servertest"
	"gateway/server/servertest/wait"
	"gateway/server/worker"
)

const metricsToken = "metrics-test-token"

// scrape reads /metrics with the token and parses it with the Prometheus text parser.
func scrape(t *testing.T, env *servertest.Env) map[string]*dto.MetricFamily {
	t.Helper()
	r := env.Do(servertest.Request{Method: http.MethodGet, Path: "/metrics", Header: map[string]string{"Authorization": "Bearer " + metricsToken}})
	if r.Status != http.StatusOK {
		t.Fatalf("/metrics: %d %s", r.Status, r.Body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(r.Body)))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value is the sum of the family's samples whose labels include want (counters, gauges, and
// histogram sample counts).
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	var sum float64
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

// A live send through the simulator moves the send, platform-call, status-report, request and
// delivery metrics; /metrics needs its token on the API listener; the route label is the spec's
// template, never the raw path.
func TestMetricsMoveWithASendAStatusAndADelivery(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{Simulator: &simulator.Config{}, Options: server.Options{MetricsToken: metricsToken}})
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer wrong"}} {
		if r := env.Do(servertest.Request{Method: http.MethodGet, Path: "/metrics", Header: h}); r.Status != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") == "" {
			t.Fatalf("/metrics with %v: %d", h, r.Status)
		}
	}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(rcv.Close)
	secret, err := eventhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.CreateWebhookEndpoint(context.Background(), a.Account.ID, rcv.URL, secret); err != nil {
		t.Fatal(err)
	}
	d := worker.NewDispatcher(env.Store, worker.DispatcherConfig{PollInterval: 20 * time.Millisecond,
		Sender:  eventhook.NewSender(eventhook.SenderConfig{AllowPrivate: true}),
		Metrics: env.Server.Metrics()})
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)

	before := scrape(t, env)
	var sent sendData
	mustOK(t, send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "welcome"}), &sent)
	getMessage(env, a.Live, sent.MessageID)
	if err := env.Sim.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	var after map[string]*dto.MetricFamily
	wait.For(t, func() bool {
		after = scrape(t, env)
		return value(after, "gateway_eventhook_deliveries_total", map[string]string{"outcome": "succeeded"}) >= 1 &&
			value(after, "gateway_status_reports_total", nil) >= 3
	}, 10*time.Second, "a delivery and the three status reports in /metrics")
	moved := func(name string, labels map[string]string, atLeast float64) {
		t.Helper()
		b, a := value(before, name, labels), value(after, name, labels)
		if b < 0 {
			b = 0
		}
		if a-b < atLeast {
			t.Errorf("%s%v moved by %v, want at least %v", name, labels, a-b, atLeast)
		}
	}
	moved("gateway_sends_total", map[string]string{"mode": "live", "outcome": "sent", "platform_code": ""}, 1)
	moved("gateway_platform_call_duration_seconds", map[string]string{"call": "send_template", "outcome": "ok"}, 1)
	// The simulator reports sent, delivered and read; each report is counted once, as applied,
	// ignored (sent is already the message's status) or parked (it beat the send's recording).
	moved("gateway_status_reports_total", nil, 3)
	moved("gateway_status_reports_total", map[string]string{"result": "applied"}, 1)
	moved("gateway_eventhook_deliveries_total", map[string]string{"outcome": "succeeded"}, 1)
	moved("gateway_eventhook_attempt_duration_seconds", nil, 1)
	moved("gateway_eventhook_commit_to_attempt_seconds", nil, 1)
	moved("gateway_http_requests_total", map[string]string{"route": "/v1/messages/template", "method": "POST", "status": "200"}, 1)
	moved("gateway_http_request_duration_seconds", map[string]string{"route": "/v1/messages/{id}", "method": "GET"}, 1)
	for _, name := range []string{"gateway_eventhook_deliveries_due", "gateway_parked_statuses", "go_sql_max_open_connections"} {
		if value(after, name, nil) < 0 {
			t.Errorf("no %s", name)
		}
	}
	// Without a replica the reads that may lag are the primary's, and the state says so.
	if value(after, "gateway_db_lagging_reads_total", map[string]string{"pool": "replica"}) != 0 ||
		value(after, "gateway_db_replica_state", map[string]string{"state": "none"}) != 1 ||
		value(after, "gateway_db_replica_state", map[string]string{"state": "serving"}) != 0 {
		t.Errorf("replica metrics without a replica: reads on it %v, state none %v, serving %v",
			value(after, "gateway_db_lagging_reads_total", map[string]string{"pool": "replica"}),
			value(after, "gateway_db_replica_state", map[string]string{"state": "none"}),
			value(after, "gateway_db_replica_state", map[string]string{"state": "serving"}))
	}
	for _, m := range after["gateway_http_requests_total"].Metric {
		for _, l := range m.Label {
			if l.GetName() == "route" && strings.Contains(l.GetValue(), "/messages/") && !strings.HasSuffix(l.GetValue(), "{id}") && !strings.HasSuffix(l.GetValue(), "template") {
				t.Errorf("raw path as route label: %s", l.GetValue())
			}
		}
	}
}

// Without a token configured, /metrics is not served on the API's listener.
func TestMetricsNotPublicByDefault(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	if r := env.Do(servertest.Request{Method: http.MethodGet, Path: "/metrics"}); r.Status != http.StatusNotFound {
		t.Fatalf("/metrics without a configured token: %d %s", r.Status, r.Body)
	}
}

// A rejected send is counted with the platform's error code. Every log line of an API request carries its request id and, once the key is known, the
// account id, including lines logged deep in a handler; the key itself never appears.
func TestLogLinesCarryRequestAndAccount(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	env, a := sendEnv(t, servertest.Config{Logger: logger, Options: server.Options{MetricsToken: metricsToken}})
	env.Sim.Script("15551234567", simulator.Outcome{FailSync: 131026})
	r := send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "welcome"})
	if r.Status != http.StatusBadGateway {
		t.Fatalf("scripted rejection: %d %s", r.Status, r.Body)
	}
	if n := value(scrape(t, env), "gateway_sends_total", map[string]string{"mode": "live", "outcome": "platform_rejected", "platform_code": "131026"}); n != 1 {
		t.Errorf("sends rejected with platform code 131026: %v, want 1", n)
	}
	id := r.Header.Get("X-Request-Id")
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if m["request_id"] == id {
			lines = append(lines, m)
		}
	}
	msgs := map[string]bool{}
	for _, m := range lines {
		msgs[m["msg"].(string)] = true
		if m["account_id"] != float64(a.Account.ID) {
			t.Errorf("line %v: account_id %v, want %d", m["msg"], m["account_id"], a.Account.ID)
		}
	}
	if !msgs["request"] || !msgs["platform refused send"] {
		t.Fatalf("lines with request id %s: %v", id, msgs)
	}
	if strings.Contains(logs.String(), a.Live) || strings.Contains(logs.String(), a.Live[len(a.Live)-20:]) {
		t.Fatal("the key reached the logs")
	}
}

// The reconciliation's figures reach /metrics through ObserveReconcile, its OnPass hook.
func TestMetricsCountReconciliation(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{Options: server.Options{MetricsToken: metricsToken}})
	before := scrape(t, env)
	env.Server.Metrics().ObserveReconcile(2, 1, 3, 4)
	after := scrape(t, env)
	for result, want := range map[string]float64{"applied": 2, "adopted": 1, "orphaned": 3, "pruned": 4} {
		l := map[string]string{"result": result}
		if got := value(after, "gateway_reconciliation_total", l) - value(before, "gateway_reconciliation_total", l); got != want {
			t.Errorf("gateway_reconciliation_total{result=%q} moved by %v, want %v", result, got, want)
		}
	}
}
