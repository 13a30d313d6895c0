package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"gateway/platform/whatsapp"
	"gateway/store"
)

// Every metric the gateway exports is registered here, on a registry of its own (never the
// global one, so several servers in one test process do not collide). Hot paths call the small
// methods below with a few fixed label values; the label children they need are looked up in a
// map guarded by the client library, with no allocation beyond the first use of a combination.

// Metrics holds the gateway's Prometheus metrics. A nil *Metrics records nothing.
type Metrics struct {
	reg *prometheus.Registry

	requests      *prometheus.CounterVec
	requestTime   *prometheus.HistogramVec
	sends         *prometheus.CounterVec
	platformTime  *prometheus.HistogramVec
	statusReports *prometheus.CounterVec
	deliveries    *prometheus.CounterVec
	attemptTime   prometheus.Histogram
	deliveryLag   prometheus.Histogram
	reconciled    *prometheus.CounterVec
	mediaStreams  *prometheus.CounterVec
}

// NewMetrics registers every metric; st, when not nil, adds the database pool's statistics and
// the backlog gauges (due deliveries, parked statuses), read from the database at each scrape.
func NewMetrics(st *store.Store) *Metrics {
	reg := prometheus.NewRegistry()
	latency := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	m := &Metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_http_requests_total",
			Help: "HTTP requests by route (the spec's path template), method and status."}, []string{"route", "method", "status"}),
		requestTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gateway_http_request_duration_seconds",
			Help: "HTTP request latency by route and method.", Buckets: latency}, []string{"route", "method"}),
		sends: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_sends_total",
			Help: "Template sends by key mode, outcome (sent or the error code) and the platform's error code when it rejected the send."},
			[]string{"mode", "outcome", "platform_code"}),
		platformTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gateway_platform_call_duration_seconds",
			Help: "Calls to the messaging platform by call and outcome (ok, rejected, unavailable).", Buckets: latency}, []string{"call", "outcome"}),
		statusReports: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_status_reports_total",
			Help: "Platform status reports by result: applied (the status moved), ignored (duplicate, regression or unusable), parked (send not recorded yet)."},
			[]string{"result"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_eventhook_deliveries_total",
			Help: "Customer webhook (eventhook) delivery attempts by outcome: succeeded, retry (failed, will be retried), dead (failed for good)."}, []string{"outcome"}),
		attemptTime: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gateway_eventhook_attempt_duration_seconds",
			Help: "How long customer endpoints took to answer an attempt.", Buckets: latency}),
		deliveryLag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gateway_eventhook_commit_to_attempt_seconds",
			Help: "From an event's commit to the start of its first delivery attempt.", Buckets: latency}),
		reconciled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_reconciliation_total",
			Help: "What the parked-status reconciliation did: applied (parked reports applied), adopted (sends of unknown outcome that took a reported wamid), orphaned (pending sends marked outcome unknown), pruned (parked reports too old to apply)."},
			[]string{"result"}),
		mediaStreams: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gateway_media_downloads_total",
			Help: "Media files streamed by GET /v1/media/{media_id}, by outcome: complete, checksum_mismatch (cut: the bytes did not match the webhook's sha256), incomplete (cut: the platform did not send the whole file), client_gone."},
			[]string{"outcome"}),
	}
	reg.MustRegister(m.requests, m.requestTime, m.sends, m.platformTime, m.statusReports, m.deliveries, m.attemptTime, m.deliveryLag, m.reconciled, m.mediaStreams,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, r := range []string{"applied", "ignored", "parked"} {
		m.statusReports.WithLabelValues(r)
	}
	for _, o := range []string{"succeeded", "retry", "dead"} {
		m.deliveries.WithLabelValues(o)
	}
	for _, r := range []string{"applied", "adopted", "orphaned", "pruned"} {
		m.reconciled.WithLabelValues(r)
	}
	for _, o := range []string{"complete", "checksum_mismatch", "incomplete", "client_gone"} {
		m.mediaStreams.WithLabelValues(o)
	}
	if st != nil {
		reg.MustRegister(collectors.NewDBStatsCollector(st.DB().DB, "gateway"), backlogCollector{st}, readsCollector{st})
	}
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveReconcile counts what one reconciliation pass did (the process wiring passes the
// reconciler's counts here from its OnPass hook).
func (m *Metrics) ObserveReconcile(applied, adopted, orphaned, pruned int64) {
	if m == nil {
		return
	}
	m.reconciled.WithLabelValues("applied").Add(float64(applied))
	m.reconciled.WithLabelValues("adopted").Add(float64(adopted))
	m.reconciled.WithLabelValues("orphaned").Add(float64(orphaned))
	m.reconciled.WithLabelValues("pruned").Add(float64(pruned))
}

func (m *Metrics) observeRequest(route, method string, status int, d time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.requestTime.WithLabelValues(route, method).Observe(d.Seconds())
}

// ObserveSend counts a send (domain.SendObserver): by key mode, outcome (sent or the error
// code) and the platform's error code when it refused the send.
func (m *Metrics) ObserveSend(mode, outcome, platformCode string) {
	if m == nil {
		return
	}
	m.sends.WithLabelValues(mode, outcome, platformCode).Inc()
}

// observeMediaStream counts a media download by its outcome.
func (m *Metrics) observeMediaStream(outcome string) {
	if m == nil {
		return
	}
	m.mediaStreams.WithLabelValues(outcome).Inc()
}

func (m *Metrics) observeStatusReport(result string) {
	if m == nil {
		return
	}
	m.statusReports.WithLabelValues(result).Inc()
}

// ObserveDelivery implements DeliveryObserver.
func (m *Metrics) ObserveDelivery(outcome string, latency, lag time.Duration, first bool) {
	if m == nil {
		return
	}
	m.deliveries.WithLabelValues(outcome).Inc()
	m.attemptTime.Observe(latency.Seconds())
	if first {
		m.deliveryLag.Observe(max(lag, 0).Seconds())
	}
}

// routeLabel is the request's route as the spec writes it (/v1/messages/{id}), from Echo's
// registered pattern, never the raw path; requests no route matched share "unmatched".
func routeLabel(c echo.Context) string {
	p := c.Path()
	if p == "" || strings.HasSuffix(p, "/*") {
		return "unmatched"
	}
	if !strings.Contains(p, ":") {
		return p
	}
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, ":") {
			parts[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

// backlogCollector reads the due deliveries and parked statuses at scrape time.
type backlogCollector struct{ st *store.Store }

var (
	dueDesc       = prometheus.NewDesc("gateway_eventhook_deliveries_due", "Customer webhook (eventhook) deliveries pending and due now.", nil, nil)
	oldestDueDesc = prometheus.NewDesc("gateway_eventhook_oldest_due_seconds", "How long the oldest due customer webhook delivery has been due.", nil, nil)
	parkedDesc    = prometheus.NewDesc("gateway_parked_statuses", "Status reports parked until their send is recorded.", nil, nil)
)

func (b backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- dueDesc
	ch <- oldestDueDesc
	ch <- parkedDesc
}

func (b backlogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	bl, err := b.st.Backlog(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(dueDesc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(dueDesc, prometheus.GaugeValue, float64(bl.DueDeliveries))
	ch <- prometheus.MustNewConstMetric(oldestDueDesc, prometheus.GaugeValue, bl.OldestDueSeconds)
	ch <- prometheus.MustNewConstMetric(parkedDesc, prometheus.GaugeValue, float64(bl.ParkedStatuses))
}

// readsCollector reports which pool served the reads that may lag (the store's counts) and the
// replica's state as last checked.
type readsCollector struct{ st *store.Store }

var (
	readsDesc = prometheus.NewDesc("gateway_db_lagging_reads_total",
		"Reads that may lag (reports, lists, exports, API listings) by the pool that served them: replica or primary.", []string{"pool"}, nil)
	replicaDesc = prometheus.NewDesc("gateway_db_replica_state",
		"1 for the replica's state as last checked (none, serving, lagging, down), 0 for the others.", []string{"state"}, nil)
	replicaLagDesc = prometheus.NewDesc("gateway_db_replica_lag_seconds", "The replica's lag as last measured.", nil, nil)
)

func (r readsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- readsDesc
	ch <- replicaDesc
	ch <- replicaLagDesc
}

func (r readsCollector) Collect(ch chan<- prometheus.Metric) {
	replica, primary := r.st.ReadsServed()
	ch <- prometheus.MustNewConstMetric(readsDesc, prometheus.CounterValue, float64(replica), "replica")
	ch <- prometheus.MustNewConstMetric(readsDesc, prometheus.CounterValue, float64(primary), "primary")
	state, lag := r.st.ReplicaState()
	for _, s := range []string{store.ReplicaNone, store.ReplicaServing, store.ReplicaLagging, store.ReplicaDown} {
		v := 0.0
		if s == state {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(replicaDesc, prometheus.GaugeValue, v, s)
	}
	ch <- prometheus.MustNewConstMetric(replicaLagDesc, prometheus.GaugeValue, lag.Seconds())
}

// measuredPlatform times every platform call.
type measuredPlatform struct {
	p Platform
	m *Metrics
}

func (mp measuredPlatform) observe(call string, start time.Time, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "unavailable"
		var pe *whatsapp.Error
		if errors.As(err, &pe) {
			outcome = "rejected"
		}
	}
	mp.m.platformTime.WithLabelValues(call, outcome).Observe(time.Since(start).Seconds())
}

func (mp measuredPlatform) SendTemplate(ctx context.Context, token, phoneNumberID string, t whatsapp.TemplateSend) (whatsapp.SendResult, error) {
	if err := waitCallGate(ctx); err != nil { // a broadcast's pace (broadcast_sender.go)
		return whatsapp.SendResult{}, err
	}
	start := time.Now()
	r, err := mp.p.SendTemplate(ctx, token, phoneNumberID, t)
	mp.observe("send_template", start, err)
	return r, err
}

func (mp measuredPlatform) SendText(ctx context.Context, token, phoneNumberID, to, body string) (whatsapp.SendResult, error) {
	start := time.Now()
	r, err := mp.p.SendText(ctx, token, phoneNumberID, to, body)
	mp.observe("send_text", start, err)
	return r, err
}

func (mp measuredPlatform) ListTemplates(ctx context.Context, token, wabaID string) ([]whatsapp.Template, error) {
	start := time.Now()
	r, err := mp.p.ListTemplates(ctx, token, wabaID)
	mp.observe("list_templates", start, err)
	return r, err
}

// metricsEndpoint serves /metrics on the API's listener, only with the configured bearer token
// (GATEWAY_METRICS_TOKEN); without one configured it is a 404 there, and the metrics are served
// only on GATEWAY_METRICS_ADDR.
func (s *Server) metricsEndpoint(c echo.Context) error {
	want := s.opts.MetricsToken
	if want == "" {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	got, ok := strings.CutPrefix(c.Request().Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
		return newAPIError(http.StatusUnauthorized, "unauthorized", "Send the metrics token as Authorization: Bearer <token>")
	}
	s.metrics.Handler().ServeHTTP(c.Response(), c.Request())
	return nil
}

// Metrics returns the server's metrics (for the dispatcher and a separate metrics listener).
func (s *Server) Metrics() *Metrics { return s.metrics }
