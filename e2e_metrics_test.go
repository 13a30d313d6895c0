package main

import (
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"gateway/store/storetest"
)

// gateway serve with GATEWAY_METRICS_ADDR serves /metrics there, in the Prometheus text
// format, and not on the API's address (no token configured); on SIGTERM it logs that it has
// shut down.
func TestE2EMetricsListenerAndShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	gwAddr, metricsAddr := freeAddr(t), freeAddr(t)
	env := []string{
		"DATABASE_URL=" + storetest.DSN(t),
		"GATEWAY_ADDR=" + gwAddr,
		"GATEWAY_METRICS_ADDR=" + metricsAddr,
		"GATEWAY_SECRET_KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
		"LOG_LEVEL=info",
	}
	p := startProcess(t, env, "serve")
	waitHTTP(t, "http://"+gwAddr+"/readyz", 30*time.Second)
	if r, err := http.Get("http://" + gwAddr + "/v1/me"); err == nil {
		r.Body.Close()
	}

	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("metrics listener: %d %s", resp.StatusCode, b)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	for _, name := range []string{"gateway_http_requests_total", "gateway_eventhook_deliveries_due", "go_sql_open_connections"} {
		if fams[name] == nil {
			t.Errorf("no %s on the metrics listener", name)
		}
	}
	if !strings.Contains(string(b), `route="/v1/me"`) {
		t.Errorf("the request to /v1/me is not counted by its route")
	}
	api, err := http.Get("http://" + gwAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	api.Body.Close()
	if api.StatusCode != http.StatusNotFound {
		t.Errorf("/metrics on the API's address without a token: %d, want 404", api.StatusCode)
	}

	p.kill(syscall.SIGTERM)
	if out := p.out.String(); !strings.Contains(out, `"msg":"shut down"`) {
		t.Fatalf("serve did not log that it shut down:\n%s", tail(out, 2000))
	}
}
