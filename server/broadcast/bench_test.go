package broadcast_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gateway/platform/eventhook"
	"gateway/platform/simulator"
	"gateway/server/broadcast"
	"gateway/server/worker"
	"gateway/store"
)

// cpuTime is the process's user and system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBroadcast100k sends one broadcast of BROADCAST_BENCH_N recipients (default 100,000)
// with the number at 1,000 messages/s against the simulator, each recipient's message recorded
// around its platform call as the gateway records it (keyedSender), status reports flowing back
// to a receiver that writes to the database, customer webhooks flowing (the account's endpoint
// on loopback, the dispatcher delivering the events the broadcast writes), and the tables it
// grows analyzed every 30 s as autovacuum would (analyzeEvery). It reports the rate reached
// (recipients/s, from the first send to the broadcast's completion), the busiest second at the
// simulator (max-sends/s), the customer webhooks delivered per recipient (webhooks/recipient), the
// CPU time of the whole process (engine, sender, simulator, receiver, dispatcher and client) per recipient
// (cpu-µs/recipient) and that of the database's backends (pg-cpu-µs/recipient, without the
// analyses, reported apart as analyze-cpu-µs/recipient; the server's WAL writer and
// checkpointer, shared with other databases, are left out). Run it with -benchtime=1x
// -count=3 -timeout=60m and take the medians.
func BenchmarkBroadcast100k(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("BROADCAST_BENCH_N")); err == nil && v > 0 {
		n = v
	}
	for range b.N {
		b.StopTimer()
		r := newRig(b, simulator.DefaultConfig(), simulator.ThroughputHigh)
		bc, err := r.st.CreateBroadcast(context.Background(), r.account, store.BroadcastInput{Name: "bench", PhoneNumberID: phoneID,
			Portfolio: bizID, TemplateName: "order_confirmation", TemplateLanguage: "en_US",
			Params: []store.BroadcastParam{{Variable: "name"}, {Value: "ORD-1"}}}, numbers(n))
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		e, err := broadcast.New(r.st, broadcast.Config{Sender: r.sender(), Share: 1, Workers: 64,
			Throughput: func(context.Context, string) int { return simulator.ThroughputHigh }})
		if err != nil {
			b.Fatal(err)
		}
		// Customer webhooks flow too: an endpoint of the account on loopback, and the dispatcher
		// every gateway runs delivering the broadcast's events to it.
		var delivered atomic.Int64
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			delivered.Add(1)
			w.WriteHeader(http.StatusNoContent)
		}))
		defer hook.Close()
		secret, err := eventhook.NewSecret()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.st.CreateWebhookEndpoint(context.Background(), r.account, hook.URL, secret); err != nil {
			b.Fatal(err)
		}
		dispatcher := worker.NewDispatcher(r.st, worker.DispatcherConfig{AllowPrivate: true, PollInterval: 200 * time.Millisecond})
		stopAnalyze := r.analyzeEvery(analyzeInterval)
		b.StartTimer()
		if err := dispatcher.Start(ctx); err != nil {
			b.Fatal(err)
		}
		pg0 := r.serverCPU()
		cpu0, t0 := cpuTime(b), time.Now()
		if err := e.Start(ctx); err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(time.Duration(n/50+60) * time.Second)
		for {
			got, err := r.st.BroadcastByID(context.Background(), r.account, bc.ID)
			if err != nil {
				b.Fatal(err)
			}
			if got.State == store.BroadcastCompleted {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("not completed in time: %d accepted", len(r.sim.Sent()))
			}
			time.Sleep(100 * time.Millisecond)
		}
		elapsed, cpu := time.Since(t0), cpuTime(b)-cpu0
		analyzed := stopAnalyze()
		dispatcher.Stop()
		pg := r.serverCPU().since(pg0) - analyzed
		b.StopTimer()
		if err := e.Stop(context.Background()); err != nil {
			b.Fatal(err)
		}
		cancel()
		sent := r.sim.Sent()
		seen := make(map[string]bool, len(sent))
		for _, m := range sent {
			if seen[m.WaID] {
				b.Fatalf("recipient %s sent twice", m.WaID)
			}
			seen[m.WaID] = true
		}
		if len(seen) != n {
			for _, rec := range r.recipients(bc.ID) {
				if !seen[rec.Mobile] {
					b.Logf("recipient %s not accepted: %s after %d calls, %q", rec.Mobile, rec.State, rec.Attempts, rec.ErrorTitle)
				}
			}
			b.Fatalf("the simulator accepted %d distinct recipients, want %d", len(seen), n)
		}
		b.ReportMetric(float64(n)/elapsed.Seconds(), "recipients/s")
		b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/recipient")
		b.ReportMetric(float64(pg.Microseconds())/float64(n), "pg-cpu-µs/recipient")
		b.ReportMetric(float64(analyzed.Microseconds())/float64(n), "analyze-cpu-µs/recipient")
		b.ReportMetric(float64(r.sim.MaxSendsPerSecond(phoneID)), "max-sends/s")
		b.ReportMetric(float64(delivered.Load())/float64(n), "webhooks/recipient")
	}
}

// analyzeInterval is the time between the benchmark's analyses (analyzeEvery): half
// autovacuum's default naptime.
const analyzeInterval = 30 * time.Second

// grownTables are the tables a broadcast grows as it sends (its recipients, and the messages,
// contacts, conversations and keys of the send path).
const grownTables = "broadcast_recipients, messages, contacts, conversations, idempotency_keys"

// analyzeEvery analyzes grownTables every d, on a connection of its own, until the returned
// func is called, which returns the CPU time that connection's backend spent. It stands in
// for autovacuum's analyze, which the development server runs without: a server with it on
// visits a database once a minute by default and analyzes the tables that changed by a tenth,
// so the statistics follow a broadcast's tables and the statements whose plans were made
// while they were nearly empty are planned again.
func (r *rig) analyzeEvery(d time.Duration) (stop func() time.Duration) {
	conn, err := r.st.DB().Conn(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	var pid int
	if err := conn.QueryRowContext(context.Background(), `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		r.t.Fatal(err)
	}
	cpu0 := backendTime(pid)
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if _, err := conn.ExecContext(context.Background(), `ANALYZE `+grownTables); err != nil {
					r.t.Errorf("analyze: %v", err)
					return
				}
			}
		}
	}()
	return func() time.Duration {
		close(done)
		<-ended
		used := backendTime(pid) - cpu0
		conn.Close()
		return used
	}
}

// backendCPU is the CPU time so far of each PostgreSQL backend of the rig's database, by pid.
type backendCPU map[int]time.Duration

// serverCPU reads the CPU time of the backends connected to the rig's database.
func (r *rig) serverCPU() backendCPU {
	r.t.Helper()
	var pids []int
	if err := r.st.DB().Select(&pids, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`); err != nil {
		r.t.Fatal(err)
	}
	out := backendCPU{}
	for _, pid := range pids {
		out[pid] = backendTime(pid)
	}
	return out
}

// backendTime is the CPU time (user and system, from /proc/<pid>/stat) of process pid so far;
// zero when it cannot be read.
func backendTime(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's closing parenthesis: utime and stime are the 12th and
	// 13th, in clock ticks (100 a second on Linux).
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// since returns the CPU the backends used after start: a backend started since counts whole.
func (c backendCPU) since(start backendCPU) time.Duration {
	var d time.Duration
	for pid, t := range c {
		d += t - start[pid]
	}
	return d
}
