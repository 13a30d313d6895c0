package dashboard_test

// BenchmarkInboxLive measures the inbox's live stream under load: 200 open dashboards (one
// signed-in teammate, each dashboard its own HTTP connection to GET
// /dashboard/live/inbox/stream, as the list of the All view opens it, rows rendered) while
// customers send 100 messages a second through the platform's webhook (the simulator's signed
// POSTs to the gateway), each from a new number: a new contact, conversation and message. A
// message's delivery latency is the time from the start of its webhook POST to each stream's
// receipt of the first event naming its conversation; it reports the median, 99th percentile
// and worst (deliver_p50_ms, deliver_p99_ms, deliver_max_ms) over every message and stream, the
// part of it after the gateway answered the POST, when the message was committed
// (after_answer_p50_ms, after_answer_p99_ms: the stream's own share), how
// many of them were never named (missed), the webhook POSTs that failed (webhook_errors) and
// the POSTs' own median and 99th percentile (webhook_p50_ms, webhook_p99_ms), the rate the
// messages were sent at (sent_per_s), the CPU the whole process (gateway, simulator and
// readers) used a second while sending (process_cpu_ms_per_s), how often a statement waited for
// one of the pool's connections and for how long on average (pool_waits_per_s,
// pool_wait_avg_ms: the hub's reads queue there behind the webhooks' transactions), the reloads (a stream that fell
// behind, or a read of the feed that found more changed conversations than it lists: the page
// then fetches its list, so the conversations of that read are not named and count as missed),
// and the Go heap, goroutine stacks and goroutines the 200 open streams add, per stream
// (heap_per_stream_kb, stack_per_stream_kb, goroutines_per_stream): server and client share the
// process, so that is the pair's cost, an upper bound of the gateway's. The run lasts -benchtime
// seconds of sending (a count: 20x sends for 20 s):
//
//	go test -run '^$' -bench InboxLive -benchtime 20x ./server/dashboard/

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/server/dashboard"
	"gateway/server/servertest"
	"gateway/store"
)

// The load: open dashboards and customer messages a second, 200 and 100 unless the
// environment says otherwise (INBOX_LIVE_DASHBOARDS, INBOX_LIVE_RATE).
var (
	liveDashboards = envInt("INBOX_LIVE_DASHBOARDS", 200)
	livePerSecond  = envInt("INBOX_LIVE_RATE", 100)
)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func BenchmarkInboxLive(b *testing.B) {
	c := &testConnector{}
	env := servertest.New(b, servertest.Config{
		Dashboard: dashboard.Options{Development: true, SignupOpen: true, WebhookAllowPrivate: true},
		Connector: c,
		Simulator: &simulator.Config{SentDelay: time.Hour, DeliveredDelay: time.Hour, ReadDelay: time.Hour},
	})
	c.st = env.Store
	u := signUp(b, env, "Live Inbox", "live@example.com")
	acc := accountOf(b, env.Store, "live@example.com")
	conn := env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Live Inbox"}})
	cookies := u.c.Jar.Cookies(mustURL(b, env.URL+"/dashboard/"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// open opens one dashboard's stream and reads its first event.
	type stream struct {
		r    *bufio.Reader
		body interface{ Close() error }
	}
	open := func() (stream, error) {
		jar, _ := cookiejar.New(nil)
		jar.SetCookies(mustURL(b, env.URL+"/dashboard/"), cookies)
		c := &http.Client{Jar: jar, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
		req, _ := http.NewRequestWithContext(ctx, "GET", env.URL+"/dashboard/live/inbox/stream?since=&view=all&patch=1", nil)
		resp, err := c.Do(req)
		if err != nil {
			return stream{}, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return stream{}, fmt.Errorf("live stream: %d", resp.StatusCode)
		}
		s := stream{r: bufio.NewReader(resp.Body), body: resp.Body}
		for { // the retry field, then the first event
			line, err := s.r.ReadString('\n')
			if err != nil {
				return stream{}, err
			}
			if strings.HasPrefix(line, "data: ") {
				return s, nil
			}
		}
	}

	// Memory: the process before and after every dashboard opened its stream.
	heapNow := func() (heap, stack uint64, goroutines int) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse, m.StackInuse, runtime.NumGoroutine()
	}
	heap0, stack0, gr0 := heapNow()
	streams := make([]stream, liveDashboards)
	for i := range streams {
		s, err := open()
		if err != nil {
			b.Fatal(err)
		}
		streams[i] = s
	}
	heap1, stack1, gr1 := heapNow()

	// Each dashboard reads its stream until it ends; seen[i] is when dashboard i first saw each
	// conversation named.
	seen := make([]map[int64]time.Time, liveDashboards)
	var reloads atomic.Int64
	var wg sync.WaitGroup
	for i, s := range streams {
		seen[i] = map[int64]time.Time{}
		// A buffer that holds a whole event's start, given after the memory was measured (it is
		// the reader's, not the gateway's).
		s.r = bufio.NewReaderSize(s.r, 64<<10)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				// The line in the reader's buffer, without copying it; of a line longer than the
				// buffer only its start is looked at.
				line, err := s.r.ReadSlice('\n')
				for skip := err; skip == bufio.ErrBufferFull; {
					_, skip = s.r.ReadSlice('\n')
					err = skip
				}
				if err != nil {
					return
				}
				switch {
				case bytes.HasPrefix(line, []byte("event: reload")):
					reloads.Add(1)
				case bytes.HasPrefix(line, []byte("data: ")):
					if bytes.Contains(line, []byte(`"reload":true`)) {
						reloads.Add(1) // more changed than one read lists: the page fetches its list
					}
					// Only the event's first member, the changed conversations, is read, in
					// place: the rows after it are what a page shows, not what is measured, and
					// decoding (or copying) them 200 times would put the readers' work, and their
					// garbage, on the machine's two cores beside the gateway's.
					at := time.Now()
					ids, ok := changedIDs(line[6:])
					if !ok {
						b.Errorf("event data %.80q", line)
						return
					}
					for _, id := range ids {
						if _, ok := seen[i][id]; !ok {
							seen[i][id] = at
						}
					}
				}
			}
		}()
	}

	// The customers: livePerSecond messages a second for b.N seconds, each from a new number,
	// each at its time on the schedule (a ticker would drop the ticks a busy machine makes the
	// loop late for, and send fewer).
	sent, answered := map[string]time.Time{}, map[string]time.Time{}
	var posts []time.Duration
	var mu sync.Mutex
	var lost atomic.Int64
	var sends sync.WaitGroup
	every := time.Second / time.Duration(livePerSecond)
	b.ResetTimer()
	cpu0, pool0 := processCPU(), env.Store.DB().Stats()
	began := time.Now()
	for n := 0; n < b.N*livePerSecond; n++ {
		time.Sleep(time.Until(began.Add(time.Duration(n) * every)))
		from := fmt.Sprintf("4479%08d", n)
		sends.Add(1)
		go func() {
			defer sends.Done()
			start := time.Now()
			if _, err := env.Sim.InjectInboundMessage(simulator.Inbound{PhoneNumberID: conn.PhoneNumberID, From: from,
				Name: "Customer " + from, Type: "text", Payload: map[string]any{"body": "hello"}}); err != nil {
				lost.Add(1) // the webhook POST failed (the gateway did not answer in time)
				return
			}
			took := time.Since(start)
			mu.Lock()
			sent[from] = start
			answered[from] = start.Add(took)
			posts = append(posts, took)
			mu.Unlock()
		}()
	}
	sending := time.Since(began)
	sends.Wait()
	cpu, pool := processCPU()-cpu0, env.Store.DB().Stats()
	time.Sleep(3 * time.Second) // the last events
	cancel()
	for _, s := range streams {
		s.body.Close()
	}
	wg.Wait()
	b.StopTimer()

	// Each conversation's number, then every (message, stream) latency.
	var rows []struct {
		ID     int64  `db:"id"`
		Mobile string `db:"mobile"`
	}
	if err := env.Store.DB().Select(&rows, `SELECT v.id, k.mobile FROM conversations v JOIN contacts k ON k.account_id = v.account_id
		AND k.id = v.contact_id WHERE v.account_id = $1`, acc); err != nil {
		b.Fatal(err)
	}
	var lat, after []time.Duration
	missed := 0
	for _, r := range rows {
		start, ok := sent[r.Mobile]
		if !ok {
			continue // recorded, though its webhook POST timed out
		}
		for i := range seen {
			at, ok := seen[i][r.ID]
			if !ok {
				missed++
				continue
			}
			lat = append(lat, at.Sub(start))
			after = append(after, at.Sub(answered[r.Mobile]))
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	sort.Slice(after, func(i, j int) bool { return after[i] < after[j] })
	sort.Slice(posts, func(i, j int) bool { return posts[i] < posts[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	if len(lat) > 0 {
		b.ReportMetric(ms(lat[len(lat)/2]), "deliver_p50_ms")
		b.ReportMetric(ms(lat[len(lat)*99/100]), "deliver_p99_ms")
		b.ReportMetric(ms(lat[len(lat)-1]), "deliver_max_ms")
		b.ReportMetric(ms(after[len(after)/2]), "after_answer_p50_ms")
		b.ReportMetric(ms(after[len(after)*99/100]), "after_answer_p99_ms")
	}
	if len(posts) > 0 {
		b.ReportMetric(ms(posts[len(posts)/2]), "webhook_p50_ms")
		b.ReportMetric(ms(posts[len(posts)*99/100]), "webhook_p99_ms")
	}
	b.ReportMetric(float64(b.N*livePerSecond)/sending.Seconds(), "sent_per_s")
	b.ReportMetric(cpu.Seconds()*1000/sending.Seconds(), "process_cpu_ms_per_s")
	if waits := pool.WaitCount - pool0.WaitCount; waits > 0 {
		b.ReportMetric(float64(waits)/sending.Seconds(), "pool_waits_per_s")
		b.ReportMetric(ms((pool.WaitDuration-pool0.WaitDuration)/time.Duration(waits)), "pool_wait_avg_ms")
	}
	b.ReportMetric(float64(missed), "missed")
	b.ReportMetric(float64(lost.Load()), "webhook_errors")
	b.ReportMetric(float64(reloads.Load()), "reloads")
	b.ReportMetric(float64(int64(heap1)-int64(heap0))/float64(liveDashboards)/1024, "heap_per_stream_kb")
	b.ReportMetric(float64(int64(stack1)-int64(stack0))/float64(liveDashboards)/1024, "stack_per_stream_kb")
	b.ReportMetric(float64(gr1-gr0)/float64(liveDashboards), "goroutines_per_stream")
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// changedIDs reads the ids of an event's first member, {"changed":[1,2,...], without
// allocating beyond the slice it returns.
func changedIDs(data []byte) ([]int64, bool) {
	const head = `{"changed":[`
	if !bytes.HasPrefix(data, []byte(head)) {
		return nil, false
	}
	var ids []int64
	var n int64
	digits := false
	for _, c := range data[len(head):] {
		switch {
		case c >= '0' && c <= '9':
			n, digits = n*10+int64(c-'0'), true
		case c == ',' || c == ']':
			if digits {
				ids = append(ids, n)
			}
			if c == ']' {
				return ids, true
			}
			n, digits = 0, false
		default:
			return nil, false
		}
	}
	return nil, false
}

func mustURL(b *testing.B, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		b.Fatal(err)
	}
	return u
}
