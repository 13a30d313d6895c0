package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

	"gateway/server/servertest/wait"
)

// BenchmarkDispatcher measures the dispatcher against a loopback receiver answering 204:
// deliveries per second draining a backlog of b.N deliveries with 1 and 10 endpoints, and the
// lag from an event's commit to its first attempt while events arrive at a steady rate below
// capacity (b.N events). Run:
//
//	go test -run '^$' -bench BenchmarkDispatcher -benchtime 20000x ./server/
//
// It also reports the CPU per delivery of this process (dispatcher and receiver) and of the
// database's backends. The backends connected while the backlog drains are the dispatcher's,
// so the figure is the dispatcher's database cost (PostgreSQL must run on this machine).
func BenchmarkDispatcher(b *testing.B) {
	for _, endpoints := range []int{1, 10} {
		b.Run(fmt.Sprintf("backlog/endpoints=%d", endpoints), func(b *testing.B) { benchBacklog(b, endpoints) })
		b.Run(fmt.Sprintf("floor/endpoints=%d", endpoints), func(b *testing.B) { benchFloor(b, endpoints) })
	}
	for _, rate := range []int{1000, 3000} {
		b.Run(fmt.Sprintf("lag/rate=%d", rate), func(b *testing.B) { benchLag(b, rate) })
	}
}

// benchReceiver counts deliveries and records the lag from created_at to arrival.
type benchReceiver struct {
	srv   *httptest.Server
	n     atomic.Int64
	mu    sync.Mutex
	lags  []time.Duration
	track bool
}

func newBenchReceiver(b *testing.B, track bool) *benchReceiver {
	br := &benchReceiver{track: track}
	br.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if br.track {
			var ev struct {
				CreatedAt time.Time `json:"created_at"`
			}
			json.Unmarshal(body, &ev)
			lag := time.Since(ev.CreatedAt)
			br.mu.Lock()
			br.lags = append(br.lags, lag)
			br.mu.Unlock()
		}
		br.n.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(br.srv.Close)
	return br
}

func benchBacklog(b *testing.B, endpoints int) {
	e := newWHEnv(b)
	acct := e.account("bench")
	rcv := newBenchReceiver(b, false)
	for range endpoints {
		e.endpointURL(acct.ID, rcv.srv.URL+"/hook", nil)
	}
	events := max(1, b.N/endpoints)
	for left := events; left > 0; left -= 5000 {
		e.events(acct.ID, min(left, 5000))
	}
	if _, err := e.st.DB().Exec(`VACUUM ANALYZE webhook_deliveries`); err != nil {
		b.Fatal(err)
	}
	total := int64(events * endpoints)
	b.ResetTimer()
	start, goCPU0 := time.Now(), processCPU()
	d := e.dispatcher(DispatcherConfig{}, false)
	pgCPU0 := backendsCPU(e)
	wait.For(b, func() bool { return rcv.n.Load() >= total }, 10*time.Minute, "every delivery")
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(total)/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(d.overflowed.Load()), "given-back")
	// CPU per delivery: this process (dispatcher and receiver) and the database's backends
	// serving this database (Linux only; the figures are left out elsewhere).
	if g := processCPU(); g > 0 {
		b.ReportMetric(float64((g-goCPU0).Microseconds())/float64(total), "go-µs/delivery")
	}
	if p := backendsCPU(e); p > 0 {
		b.ReportMetric(float64((p-pgCPU0).Microseconds())/float64(total), "pg-µs/delivery")
	}
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

func benchLag(b *testing.B, rate int) {
	e := newWHEnv(b)
	acct := e.account("bench")
	rcv := newBenchReceiver(b, true)
	e.endpointURL(acct.ID, rcv.srv.URL+"/hook", nil)
	e.dispatcher(DispatcherConfig{}, false)
	// Insert b.N events at the rate, in small transactions every 10 ms.
	per := max(1, rate/100)
	b.ResetTimer()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for sent := 0; sent < b.N; {
		<-tick.C
		k := min(per, b.N-sent)
		e.events(acct.ID, k)
		sent += k
	}
	wait.For(b, func() bool { return rcv.n.Load() >= int64(b.N) }, 10*time.Minute, "every delivery")
	b.StopTimer()
	rcv.mu.Lock()
	lags := append([]time.Duration(nil), rcv.lags...)
	rcv.mu.Unlock()
	sort.Slice(lags, func(i, k int) bool { return lags[i] < lags[k] })
	q := func(p float64) float64 { return float64(lags[int(p*float64(len(lags)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "lag-p50-ms")
	b.ReportMetric(q(0.99), "lag-p99-ms")
	b.ReportMetric(0, "ns/op")
}

// benchFloor is the bare reference loop, measured in the same run on the same
// schema: 16 workers, each claiming 10 due deliveries, signing the body with HMAC-SHA256,
// POSTing it over a kept-alive connection and marking the batch delivered. No attempt log, no
// per-endpoint bounds, no retries: the ceiling the dispatcher is compared with.
func benchFloor(b *testing.B, endpoints int) {
	e := newWHEnv(b)
	acct := e.account("bench")
	rcv := newBenchReceiver(b, false)
	for range endpoints {
		e.endpointURL(acct.ID, rcv.srv.URL+"/hook", nil)
	}
	events := max(1, b.N/endpoints)
	for left := events; left > 0; left -= 5000 {
		e.events(acct.ID, min(left, 5000))
	}
	if _, err := e.st.DB().Exec(`VACUUM ANALYZE webhook_deliveries`); err != nil {
		b.Fatal(err)
	}
	total := int64(events * endpoints)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	body := []byte(`{"id":"00000000-0000-0000-0000-000000000000","event":"message.sent","created_at":"2026-11-21T10:00:00Z","data":{"message_id":1,"chat_message_id":"wamid.x","conversation_id":1,"contact_id":1,"destination":"15551234567","template":"t","source":"api"}}`)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
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
	b.ReportMetric(float64(total)/elapsed.Seconds(), "deliveries/s")
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
