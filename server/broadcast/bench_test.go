package broadcast_test

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/server/broadcast"
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
// to a receiver that writes to the database, and reports the rate reached (recipients/s, from
// the first send to the broadcast's completion) and the CPU time of the whole process (engine,
// sender, simulator, receiver and client; PostgreSQL not included) per recipient. Run it with
// -benchtime=1x -count=3 and take the medians.
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
		b.StartTimer()
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
			b.Fatalf("the simulator accepted %d distinct recipients, want %d", len(seen), n)
		}
		b.ReportMetric(float64(n)/elapsed.Seconds(), "recipients/s")
		b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/recipient")
		b.ReportMetric(float64(r.sim.MaxSendsPerSecond(phoneID)), "max-sends/s")
	}
}
