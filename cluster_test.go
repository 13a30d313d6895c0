package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"gateway/platform/simulator"
	"gateway/store/storetest"
)

// TestCluster is the topology test (make cluster-test; skipped unless GATEWAY_CLUSTER_DIR names
// a directory for the databases): a primary and a streaming replica, PgBouncer in transaction
// mode in front of the primary, and three `gateway serve` behind a round-robin proxy, under a
// steady load of sends (the simulator reports their statuses to the gateways through the
// proxy) with a customer endpoint receiving every event. Meanwhile one gateway is killed with
// SIGKILL and started again, PgBouncer restarts, and the replica stops and starts. At the end:
// every accepted send reached the simulator exactly once, no send reached it twice, every event
// the database holds reached the endpoint (duplicates only as at-least-once redelivery), the
// listings kept answering, and each step's /readyz is printed.
func TestCluster(t *testing.T) {
	dir := os.Getenv("GATEWAY_CLUSTER_DIR")
	if dir == "" {
		t.Skip("the topology test: run make cluster-test")
	}
	bin := gatewayBinary(t)
	cluster := func(cmd string) {
		t.Helper()
		out, err := exec.Command(".ci/cluster", cmd, dir).CombinedOutput()
		if err != nil {
			t.Fatalf(".ci/cluster %s: %v\n%s", cmd, err, out)
		}
	}
	t.Cleanup(func() { exec.Command(".ci/cluster", "down", dir).Run() })
	cluster("up")
	urls := clusterEnvFile(t, dir+"/env")

	// The platform simulator, in this process so that its sends can be counted.
	const appSecret = "cluster-app-secret"
	simCfg := simulator.DefaultConfig()
	simCfg.AppSecret = appSecret
	simCfg.SentDelay, simCfg.DeliveredDelay, simCfg.ReadDelay = 50*time.Millisecond, 100*time.Millisecond, 150*time.Millisecond
	addrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	proxy := newRRProxy(addrs)
	t.Cleanup(proxy.srv.Close)
	simCfg.WebhookURL = proxy.srv.URL + "/platform/webhook"
	sim := simulator.New(simCfg)
	seedSimulator(sim)
	simURL, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	env := []string{
		"DATABASE_URL=" + urls["POOLER_URL"],
		"DATABASE_DIRECT_URL=" + urls["PRIMARY_URL"],
		"DATABASE_REPLICA_URL=" + urls["REPLICA_URL"],
		"GATEWAY_REPLICA_MAX_LAG=5s",
		"GATEWAY_MIGRATE=false",
		"GATEWAY_DB_POOL=8",
		"GATEWAY_REPLICAS=3",
		"GATEWAY_SECRET_KEY=" + hex.EncodeToString(storetest.TestKey),
		"GATEWAY_WEBHOOK_ALLOW_PRIVATE=true",
		"GATEWAY_METRICS_TOKEN=cluster-metrics",
		"PLATFORM_BASE_URL=" + simURL + "/v23.0",
		"PLATFORM_APP_SECRET=" + appSecret,
		"LOG_LEVEL=warn",
	}
	if out, err := clusterRun(bin, env, "migrate", "up"); err != nil {
		t.Fatalf("migrate up: %v\n%s", err, out)
	}
	acct := adminJSON(t, env, "account", "create", "--name", "Cluster Ltd", "--email", "cluster@example.com")
	id := fmt.Sprint(int64(acct["id"].(float64)))
	key := adminJSON(t, env, "key", "create", "--account", id, "--mode", "live")["key"].(string)
	adminJSON(t, append(append([]string{}, env...), "GATEWAY_ADMIN_ACCESS_TOKEN="+devNumber.AccessToken), "number", "connect",
		"--account", id, "--waba-id", devNumber.WabaID,
		"--phone-number-id", devNumber.PhoneNumberID, "--phone-number", devNumber.DisplayPhoneNumber,
		"--display-name", "Cluster")
	adminJSON(t, env, "templates", "sync", "--account", id)
	owner := adminJSON(t, env, "user", "create", "--account", id, "--email", "ops@example.com", "--role", "owner")
	rcv := newWHReceiver(t, false, nil)
	w := adminJSON(t, env, "webhook", "create", "--account", id, "--url", rcv.url())
	rcv.setSecret(w["secret"].(string))

	gateways := make([]*process, len(addrs))
	serveAt := func(i int) {
		gateways[i] = startProcess(t, append(append([]string{}, env...), "GATEWAY_ADDR="+addrs[i]), "serve")
		waitHTTP(t, "http://"+addrs[i]+"/readyz", 30*time.Second)
	}
	for i := range addrs {
		serveAt(i)
	}
	step := func(name string) {
		t.Logf("step: %s", name)
		for i, a := range addrs {
			t.Logf("  gateway %d /readyz: %s", i+1, clusterReadyz(a))
		}
	}
	step("three gateways up")

	// The load: four clients sending to distinct destinations, each send retried with its
	// Idempotency-Key on a transport error, a 5xx or a 409 (in progress) for up to 30 s, and a
	// reader of the API listings and the dashboard's pages (the replica's reads) every 200 ms.
	load := newClusterLoad(proxy.srv.URL, key)
	load.signIn(t, "ops@example.com", owner["password"].(string))
	ctx, stopLoad := context.WithCancel(context.Background())
	var loaders sync.WaitGroup
	for c := range 4 {
		loaders.Add(1)
		go func() { defer loaders.Done(); load.sender(ctx, c) }()
	}
	loaders.Add(1)
	go func() { defer loaders.Done(); load.reader(ctx) }()
	defer stopLoad()
	pause := func() { time.Sleep(4 * time.Second) }

	pause()
	gateways[0].kill(syscall.SIGKILL)
	<-gateways[0].done
	step("gateway 1 killed (SIGKILL)")
	pause()
	serveAt(0)
	step("gateway 1 started again")
	pause()
	// Every database statement fails from PgBouncer's stop until it answers again and the
	// gateways' pools reconnect: the reads of that window are counted apart.
	load.setQuiet(true)
	cluster("pgbouncer-restart")
	clusterWaitReadyz(t, addrs, "200 Ready", 15*time.Second)
	// A pooled connection that the restart closed fails its next statement once; the load
	// touches every pooled connection within a few seconds.
	time.Sleep(3 * time.Second)
	load.setQuiet(false)
	step("PgBouncer restarted")
	pause()
	cluster("replica-stop")
	clusterWaitReadyz(t, addrs, "replica down", 15*time.Second)
	step("replica stopped")
	pause()
	cluster("replica-start")
	clusterWaitReadyz(t, addrs, "on the replica", 30*time.Second)
	step("replica started again")
	pause()
	stopLoad()
	loaders.Wait()

	// Quiescence: every event the database holds has reached the endpoint.
	db, err := sqlx.Open("postgres", urls["PRIMARY_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var events []string
	missing := func() []string {
		events = events[:0]
		if err := db.Select(&events, `SELECT id::text FROM events WHERE account_id = $1`, id); err != nil {
			t.Fatal(err)
		}
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		var out []string
		for _, e := range events {
			if rcv.ids[e] == 0 {
				out = append(out, e)
			}
		}
		return out
	}
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if len(missing()) == 0 && sim.WebhookStats().Pending == 0 {
			time.Sleep(2 * time.Second) // the last reports' events
			if len(missing()) == 0 {
				break
			}
		}
		time.Sleep(500 * time.Millisecond)
	}

	// The counts.
	// Each send's destination ends with its own sequence number; the gateway may send it in
	// another form (a leading +).
	seqOf := func(dest string) string { return dest[max(0, len(dest)-7):] }
	sent := map[string]int{}
	for _, m := range sim.Sent() {
		sent[seqOf(m.To)]++
	}
	accepted, unknown, rejected := load.outcomes()
	lost, twice := 0, 0
	for _, dest := range accepted {
		if sent[seqOf(dest)] == 0 {
			lost++
		}
	}
	for _, n := range sent {
		if n > 1 {
			twice++
		}
	}
	distinct, acks, _, bad := rcv.stats()
	lostEvents := missing()
	reads, readFailures, duringRestart := load.readCounts()
	t.Logf("counts: %d sends accepted, %d of unknown outcome, %d refused; the simulator saw %d sends", len(accepted), unknown, len(rejected), len(sim.Sent()))
	t.Logf("counts: accepted sends lost %d, sent twice %d", lost, twice)
	t.Logf("counts: %d events in the database, %d received (%d deliveries acknowledged: %d redeliveries), %d lost, %d failed verification",
		len(events), distinct, acks, acks-distinct, len(lostEvents), len(bad))
	t.Logf("counts: listings and dashboard pages read %d times, %d answers not 200 (and %d while PgBouncer restarted)", reads, readFailures, duringRestart)
	for i, a := range addrs {
		t.Logf("gateway %d: %s", i+1, strings.Join(clusterLagMetrics(a), "; "))
	}
	if len(accepted) < 50 {
		t.Errorf("only %d sends accepted: the load did not run", len(accepted))
	}
	if lost != 0 || twice != 0 {
		t.Errorf("accepted sends lost: %d, sends made twice: %d; want none", lost, twice)
	}
	if len(lostEvents) != 0 || len(bad) != 0 {
		t.Errorf("events lost: %d (e.g. %v), deliveries failing verification: %d", len(lostEvents), clusterHead(lostEvents, 5), len(bad))
	}
	if readFailures != 0 {
		t.Errorf("%d listing reads did not answer 200: %v", readFailures, clusterHead(load.readErrors(), 5))
	}
	for code, n := range clusterTally(rejected) {
		t.Logf("refused: %s × %d", code, n)
	}
}

// clusterEnvFile reads KEY=value lines.
func clusterEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			out[k] = v
		}
	}
	return out
}

// clusterRun runs a short gateway command to its end.
func clusterRun(bin string, env []string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(append(os.Environ(), "GATEWAY_ENV=development"), env...)
	return cmd.CombinedOutput()
}

// clusterReadyz is a gateway's /readyz answer in one line.
func clusterReadyz(addr string) string {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		return "no answer (" + err.Error() + ")"
	}
	defer resp.Body.Close()
	var env struct{ Message string }
	b, _ := io.ReadAll(resp.Body)
	json.Unmarshal(b, &env)
	return fmt.Sprintf("%d %s", resp.StatusCode, env.Message)
}

// clusterWaitReadyz waits until every gateway's /readyz says want.
func clusterWaitReadyz(t *testing.T, addrs []string, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		all := true
		for _, a := range addrs {
			if !strings.Contains(clusterReadyz(a), want) {
				all = false
			}
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			for i, a := range addrs {
				t.Logf("gateway %d /readyz: %s", i+1, clusterReadyz(a))
			}
			t.Fatalf("the gateways' /readyz did not say %q within %s", want, within)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// clusterLagMetrics are a gateway's counts of the reads that may lag by pool.
func clusterLagMetrics(addr string) []string {
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer cluster-metrics")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return []string{err.Error()}
	}
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "gateway_db_lagging_reads_total{") {
			out = append(out, l)
		}
	}
	return out
}

func clusterHead(s []string, n int) []string { return s[:min(n, len(s))] }

func clusterTally(s []string) map[string]int {
	out := map[string]int{}
	for _, x := range s {
		out[x]++
	}
	return out
}

// rrProxy is the load balancer in front of the gateways: each request goes to the next gateway
// in turn; a gateway that refuses the connection is skipped (the request never reached it), and
// one that fails after the request was sent gives the client a 502, as a real balancer would.
type rrProxy struct {
	backends []string
	next     atomic.Uint64
	srv      *httptest.Server
	tr       *http.Transport
}

func newRRProxy(backends []string) *rrProxy {
	p := &rrProxy{backends: backends, tr: &http.Transport{MaxIdleConnsPerHost: 64, ResponseHeaderTimeout: 60 * time.Second}}
	p.srv = httptest.NewServer(p)
	return p
}

func (p *rrProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	for range p.backends {
		b := p.backends[p.next.Add(1)%uint64(len(p.backends))]
		req, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+b+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := p.tr.RoundTrip(req)
		var op *net.OpError
		if err != nil && errors.As(err, &op) && op.Op == "dial" {
			continue
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
		resp.Body.Close()
		return
	}
	http.Error(w, "no gateway answers", http.StatusBadGateway)
}

// clusterLoad drives sends and listings through the proxy and keeps their outcomes.
type clusterLoad struct {
	base, key string
	seq       atomic.Int64
	client    http.Client
	browser   http.Client // signed in to the dashboard (its session cookie), redirects not followed

	mu         sync.Mutex
	accepted   []string // destinations of the sends answered 200
	unknown    int      // still of unknown outcome after the retries
	rejected   []string // error codes of refused sends
	reads      int
	readFailed []string
	// quiet marks a fault that makes the primary unreachable for a moment (PgBouncer's
	// restart): reads failing meanwhile are counted apart.
	quiet       bool
	quietFailed int
}

func newClusterLoad(base, key string) *clusterLoad {
	return &clusterLoad{base: base, key: key, client: http.Client{Timeout: 40 * time.Second}}
}

// signIn signs the browser client in to the dashboard.
func (l *clusterLoad) signIn(t *testing.T, email, password string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	l.browser = http.Client{Jar: jar, Timeout: 40 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := l.browser.PostForm(l.base+"/dashboard/signin", url.Values{"email": {email}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound {
		t.Fatalf("dashboard sign-in: %d", resp.StatusCode)
	}
}

func (l *clusterLoad) sender(ctx context.Context, c int) {
	for ctx.Err() == nil && l.seq.Load() < 5000 {
		n := l.seq.Add(1)
		dest := fmt.Sprintf("1555%07d", n)
		body := `{"destination":"` + dest + `","template_name":"order_confirmation","name":"Ana","body_variables":["Ana","ORD-` +
			fmt.Sprint(n) + `"],"client_reference":"cluster-` + fmt.Sprint(n) + `"}`
		status, code := l.send(body, fmt.Sprintf("cluster-%d-%d", c, n))
		l.mu.Lock()
		switch {
		case status == http.StatusOK:
			l.accepted = append(l.accepted, dest)
		case status == 0 || status >= 500 || code == "idempotency_in_progress":
			l.unknown++
		default:
			l.rejected = append(l.rejected, fmt.Sprintf("%d %s", status, code))
		}
		l.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
}

// send posts one send, retrying with its key for up to 30 s while the answer is not final.
func (l *clusterLoad) send(body, key string) (status int, code string) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodPost, l.base+"/v1/messages/template", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+l.key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		resp, err := l.client.Do(req)
		status, code = 0, "transport"
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var env struct{ Code string }
			json.Unmarshal(b, &env)
			status, code = resp.StatusCode, env.Code
		}
		if status != 0 && status < 500 && code != "idempotency_in_progress" {
			return status, code
		}
		if time.Now().After(deadline) {
			return status, code
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func (l *clusterLoad) reader(ctx context.Context) {
	for ctx.Err() == nil {
		for _, path := range []string{"/v1/messages?limit=5", "/v1/campaigns", "/v1/contacts?limit=5", "/dashboard/campaigns", "/dashboard/messages"} {
			req, _ := http.NewRequest(http.MethodGet, l.base+path, nil)
			c := &l.client
			if strings.HasPrefix(path, "/v1/") {
				req.Header.Set("Authorization", "Bearer "+l.key)
			} else {
				c = &l.browser
			}
			resp, err := c.Do(req)
			l.mu.Lock()
			l.reads++
			failed := ""
			switch {
			case err != nil:
				failed = path + ": " + err.Error()
			case resp.StatusCode != http.StatusOK:
				failed = fmt.Sprintf("%s: %d", path, resp.StatusCode)
			}
			if failed != "" && l.quiet {
				l.quietFailed++
			} else if failed != "" {
				l.readFailed = append(l.readFailed, failed)
			}
			l.mu.Unlock()
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (l *clusterLoad) outcomes() (accepted []string, unknown int, rejected []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	accepted = append([]string(nil), l.accepted...)
	sort.Strings(accepted)
	return accepted, l.unknown, append([]string(nil), l.rejected...)
}

func (l *clusterLoad) readCounts() (reads, failed, duringRestart int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reads, len(l.readFailed), l.quietFailed
}

// setQuiet starts or ends a window in which read failures are expected.
func (l *clusterLoad) setQuiet(q bool) {
	l.mu.Lock()
	l.quiet = q
	l.mu.Unlock()
}

func (l *clusterLoad) readErrors() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.readFailed...)
}
