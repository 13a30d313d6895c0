package worker

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"gateway/platform/eventhook"
	"gateway/server/servertest/wait"
)

// BenchmarkDispatcher measures the dispatcher against a loopback receiver answering 204:
// deliveries per second draining a backlog of b.N deliveries with 1 and 10 endpoints, beside
// the bare claim-sign-POST-mark loop run just before it on the same schema (x-floor is the
// ratio), and the lag from an event's commit to its first attempt while events arrive at half
// the rate the dispatcher drained with one endpoint (b.N events). Run:
//
//	go test -run '^$' -bench BenchmarkDispatcher -benchtime 20000x ./server/
//
// It also reports the CPU per delivery of this process (dispatcher and receiver) and of the
// database's backends. The backends connected while the backlog drains are the dispatcher's,
// so the figure is the dispatcher's database cost (PostgreSQL must run on this machine).
func BenchmarkDispatcher(b *testing.B) {
	for _, endpoints := range []int{1, 10} {
		b.Run(fmt.Sprintf("floor/endpoints=%d", endpoints), func(b *testing.B) { benchFloor(b, endpoints) })
		b.Run(fmt.Sprintf("backlog/endpoints=%d", endpoints), func(b *testing.B) { benchBacklog(b, endpoints) })
	}
	b.Run("lag/half-max", benchLag)
}

// benchRates holds the deliveries/s measured in this process, by "floor/N" and "backlog/N"
// (N endpoints), so that a later sub-benchmark can compare with them.
var benchRates sync.Map

// benchReceiver counts the deliveries it receives.
type benchReceiver struct {
	srv *httptest.Server
	n   atomic.Int64
}

func newBenchReceiver(b *testing.B) *benchReceiver {
	br := &benchReceiver{}
	br.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		br.n.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(br.srv.Close)
	return br
}

func benchBacklog(b *testing.B, endpoints int) {
	r := drainBacklog(b, endpoints, b.N)
	benchRates.Store(fmt.Sprintf("backlog/%d", endpoints), r.rate)
	b.ReportMetric(float64(r.elapsed.Nanoseconds())/float64(r.total), "ns/op")
	b.ReportMetric(r.rate, "deliveries/s")
	if floor, ok := benchRates.Load(fmt.Sprintf("floor/%d", endpoints)); ok {
		b.ReportMetric(r.rate/floor.(float64), "x-floor")
	}
	b.ReportMetric(float64(r.givenBack), "given-back")
	// CPU per delivery: this process (dispatcher and receiver) and the database's backends
	// serving this database (Linux only; the figures are left out elsewhere).
	if r.goCPU > 0 {
		b.ReportMetric(float64(r.goCPU.Microseconds())/float64(r.total), "go-µs/delivery")
	}
	if r.pgCPU > 0 {
		b.ReportMetric(float64(r.pgCPU.Microseconds())/float64(r.total), "pg-µs/delivery")
	}
}

// drained is what drainBacklog measured.
type drained struct {
	total        int64
	elapsed      time.Duration
	rate         float64 // deliveries/s
	givenBack    int64
	goCPU, pgCPU time.Duration // 0 when unknown
}

// drainBacklog makes a backlog of about n deliveries over the endpoints (one account), starts
// a dispatcher and measures until the receiver has every delivery.
func drainBacklog(b *testing.B, endpoints, n int) drained {
	b.StopTimer()
	e := newWHEnv(b)
	acct := e.account("bench")
	rcv := newBenchReceiver(b)
	for range endpoints {
		e.endpointURL(acct.ID, rcv.srv.URL+"/hook", nil)
	}
	events := max(1, n/endpoints)
	for left := events; left > 0; left -= 5000 {
		e.events(acct.ID, min(left, 5000))
	}
	if _, err := e.st.DB().Exec(`VACUUM ANALYZE webhook_deliveries`); err != nil {
		b.Fatal(err)
	}
	r := drained{total: int64(events * endpoints)}
	b.StartTimer()
	start, goCPU0 := time.Now(), processCPU()
	d := e.dispatcher(DispatcherConfig{}, false)
	pgCPU0 := backendsCPU(e)
	wait.For(b, func() bool { return rcv.n.Load() >= r.total }, 10*time.Minute, "every delivery")
	r.elapsed = time.Since(start)
	b.StopTimer()
	r.rate = float64(r.total) / r.elapsed.Seconds()
	r.givenBack = d.overflowed.Load()
	if g := processCPU(); g > 0 {
		r.goCPU = g - goCPU0
	}
	if p := backendsCPU(e); p > 0 {
		r.pgCPU = p - pgCPU0
	}
	return r
}

// processCPU is the CPU time this process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendsCPU is the CPU time used so far by the PostgreSQL backends connected to the env's
// database (read from /proc: PostgreSQL must run on this machine), 0 when unknown.
func backendsCPU(e *whEnv) time.Duration {
	var pids []int
	if err := e.st.DB().Select(&pids, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`); err != nil {
		return 0
	}
	var total time.Duration
	for _, pid := range pids {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return 0
		}
		// Fields after "(comm) ": state is field 3, utime 14 and stime 15, in clock ticks.
		f := strings.Fields(string(raw)[strings.LastIndexByte(string(raw), ')')+2:])
		if len(f) < 13 {
			return 0
		}
		u, _ := strconv.Atoi(f[11])
		s, _ := strconv.Atoi(f[12])
		total += time.Duration(u+s) * 10 * time.Millisecond // USER_HZ is 100 on Linux
	}
	return total
}

// benchLag offers b.N events (one endpoint) at a fixed rate, half the deliveries/s the
// dispatcher drained with one endpoint in this process (measured first when the backlog
// benchmark did not run), in a transaction every 2 ms followed by a NOTIFY (the wake-up of a
// writer outside the store), and reports the lag from each event's commit (the moment its
// INSERT returned) to the start of its first attempt (the moment the dispatcher handed it to
// the sender): p50, p99 and the largest.
func benchLag(b *testing.B) {
	max1, ok := benchRates.Load("backlog/1")
	if !ok {
		max1 = drainBacklog(b, 1, 20000).rate
	}
	rate := max1.(float64) / 2
	e := newWHEnv(b)
	acct := e.account("bench")
	rcv := newBenchReceiver(b)
	e.endpointURL(acct.ID, rcv.srv.URL+"/hook", nil)
	st := &startTimes{Sender: eventhook.NewSender(eventhook.SenderConfig{AllowPrivate: true, MaxConnsPerHost: -1}), at: map[string]time.Time{}}
	e.dispatcher(DispatcherConfig{Sender: st}, false)
	committed := make(map[string]time.Time, b.N)
	b.ResetTimer()
	start := time.Now()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for sent := 0; sent < b.N; {
		<-tick.C
		k := min(int(rate*time.Since(start).Seconds())-sent, b.N-sent)
		if k <= 0 {
			continue
		}
		var ids []string
		if err := e.st.DB().Select(&ids, `INSERT INTO events (account_id, type, data)
			SELECT $1, 'contact.created', jsonb_build_object('contact_id', g, 'mobile', (15550000000 + g)::text, 'name', 'Contact ' || g)
			FROM generate_series(1, $2) g RETURNING id`, acct.ID, k); err != nil {
			b.Fatal(err)
		}
		at := time.Now()
		for _, id := range ids {
			committed[id] = at
		}
		// The store's writers wake this process's dispatcher after their commit; this one
		// writes by hand, so it wakes it as a writer elsewhere does (a NOTIFY after the commit).
		e.notify()
		sent += k
	}
	offered := float64(b.N) / time.Since(start).Seconds()
	wait.For(b, func() bool { return rcv.n.Load() >= int64(b.N) }, 10*time.Minute, "every delivery")
	b.StopTimer()
	st.mu.Lock()
	lags := make([]time.Duration, 0, len(committed))
	for id, c := range committed {
		if a, ok := st.at[id]; ok {
			lags = append(lags, a.Sub(c))
		}
	}
	st.mu.Unlock()
	if len(lags) != b.N {
		b.Fatalf("first attempts of %d events seen, want %d", len(lags), b.N)
	}
	sort.Slice(lags, func(i, k int) bool { return lags[i] < lags[k] })
	q := func(p float64) float64 { return float64(lags[int(p*float64(len(lags)-1))].Microseconds()) / 1000 }
	b.ReportMetric(offered, "events/s")
	b.ReportMetric(q(0.5), "lag-p50-ms")
	b.ReportMetric(q(0.99), "lag-p99-ms")
	b.ReportMetric(q(1), "lag-max-ms")
	b.ReportMetric(0, "ns/op")
}

// startTimes is a EventSender that notes when each event's first attempt starts.
type startTimes struct {
	*eventhook.Sender
	mu sync.Mutex
	at map[string]time.Time // event id → start of attempt 1
}

func (s *startTimes) Send(ctx context.Context, r eventhook.Request) eventhook.Result {
	if r.Attempt == 1 {
		now := time.Now()
		s.mu.Lock()
		s.at[r.EventID] = now
		s.mu.Unlock()
	}
	return s.Sender.Send(ctx, r)
}

// benchFloor is the bare reference loop, measured in the same run on the same
// schema: 16 workers, each claiming 10 due deliveries, signing the body with HMAC-SHA256,
// POSTing it over a kept-alive connection and marking the batch delivered. No attempt log, no
// per-endpoint bounds, no retries: the ceiling the dispatcher is compared with.
func benchFloor(b *testing.B, endpoints int) {
	e := newWHEnv(b)
	acct := e.account("bench")
	rcv := newBenchReceiver(b)
	for range endpoints {
		e.endpointURL(acct.ID, rcv.srv.URL+"/hook", nil)
	}
	events := max(1, b.N/endpoints)
	for left := events; left > 0; left -= 5000 {
		e.events(acct.ID, min(left, 5000))
	}
	// The floor claims the oldest due deliveries of all endpoints: it gets the one due index
	// that serves it, in place of the dispatcher's per-endpoint one (same number of indexes).
	if _, err := e.st.DB().Exec(`DROP INDEX webhook_deliveries_endpoint_due_idx;
		CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`); err != nil {
		b.Fatal(err)
	}
	if _, err := e.st.DB().Exec(`VACUUM ANALYZE webhook_deliveries`); err != nil {
		b.Fatal(err)
	}
	total := int64(events * endpoints)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	body := []byte(`{"id":"00000000-0000-0000-0000-000000000000","event":"message.sent","created_at":"2026-11-21T10:00:00Z","data":{"message_id":1,"chat_message_id":"wamid.x","conversation_id":1,"contact_id":1,"destination":"15551234567","template":"t","source":"api"}}`)
	ctx := context.Background()
	b.ResetTimer()
	start, goCPU0, pgCPU0 := time.Now(), processCPU(), backendsCPU(e)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ids, err := floorClaimDeliveries(ctx, e.st.DB(), 10)
				if err != nil {
					b.Error(err)
					return
				}
				if len(ids) == 0 {
					return
				}
				for _, id := range ids {
					mac := hmac.New(sha256.New, []byte("whsec_floor"))
					mac.Write(body)
					req, _ := http.NewRequest(http.MethodPost, rcv.srv.URL+"/hook", bytes.NewReader(body))
					req.Header.Set("X-Service-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
					req.Header.Set("X-Service-Delivery", id)
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if err := floorMarkDelivered(ctx, e.st.DB(), ids); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if rcv.n.Load() != total {
		b.Fatalf("floor delivered %d of %d", rcv.n.Load(), total)
	}
	rate := float64(total) / elapsed.Seconds()
	benchRates.Store(fmt.Sprintf("floor/%d", endpoints), rate)
	b.ReportMetric(rate, "deliveries/s")
	if g := processCPU(); g > 0 {
		b.ReportMetric(float64((g-goCPU0).Microseconds())/float64(total), "go-µs/delivery")
	}
	if p := backendsCPU(e); p > 0 {
		b.ReportMetric(float64((p-pgCPU0).Microseconds())/float64(total), "pg-µs/delivery")
	}
}

// floorClaimDeliveries is the floor's claim: up to n due pending deliveries, pushed out by a
// 30 s lease, in one statement.
func floorClaimDeliveries(ctx context.Context, db *sqlx.DB, n int) ([]string, error) {
	var ids []string
	err := db.SelectContext(ctx, &ids, `WITH c AS (
			SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now()
			ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
		UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_attempt_at = now() + interval '30 seconds'
		FROM c WHERE d.id = c.id RETURNING d.id::text`, n)
	return ids, err
}

// floorMarkDelivered is the floor's mark: the claimed deliveries succeeded.
func floorMarkDelivered(ctx context.Context, db *sqlx.DB, ids []string) error {
	_, err := db.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'succeeded', completed_at = now()
		WHERE id = ANY($1::uuid[])`, "{"+strings.Join(ids, ",")+"}")
	return err
}
