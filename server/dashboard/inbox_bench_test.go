package dashboard_test

// BenchmarkInboxLive measures the inbox's live feed under load: 200 open dashboards (one
// signed-in teammate, each dashboard its own HTTP connection) poll GET /dashboard/live/inbox
// once a second while customers send 100 messages a second through the platform's webhook
// (the simulator's signed POSTs to the gateway), each from a new number. A message's delivery
// latency is the time from the start of its webhook POST to the end of each dashboard's first
// poll that names its conversation; it reports the median, 99th percentile and worst
// (deliver_p50_ms, deliver_p99_ms, deliver_max_ms) over every message and dashboard, how many
// of them were never seen (missed), and the Go heap and goroutines the 200 dashboards' idle
// connections add, per dashboard (heap_per_dashboard_kb, goroutines_per_dashboard): server and
// client share the process, so that is the pair's cost, an upper bound of the gateway's. The
// run lasts -benchtime seconds of sending (a count: 20x sends for 20 s):
//
//	go test -run '^$' -bench InboxLive -benchtime 20x ./server/dashboard/

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
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

	type poll struct {
		Next    string  `json:"next"`
		Changed []int64 `json:"changed"`
		Reload  bool    `json:"reload"`
	}
	get := func(c *http.Client, since string) (poll, error) {
		var p poll
		resp, err := c.Get(env.URL + "/dashboard/live/inbox?since=" + since)
		if err != nil {
			return p, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return p, fmt.Errorf("live inbox: %d", resp.StatusCode)
		}
		return p, json.NewDecoder(resp.Body).Decode(&p)
	}
	clients := make([]*http.Client, liveDashboards)
	for i := range clients {
		jar, _ := cookiejar.New(nil)
		jar.SetCookies(mustURL(b, env.URL+"/dashboard/"), cookies)
		clients[i] = &http.Client{Jar: jar, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	}

	// Memory: the process before and after each dashboard opened its connection with a poll.
	liveDashboards := liveDashboards
	heapNow := func() (uint64, int) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse, runtime.NumGoroutine()
	}
	heap0, gr0 := heapNow()
	cursors := make([]string, liveDashboards)
	for i, c := range clients {
		p, err := get(c, "")
		if err != nil {
			b.Fatal(err)
		}
		cursors[i] = p.Next
	}
	heap1, gr1 := heapNow()

	// The dashboards poll once a second from a random offset until stop; seen[i] is when
	// dashboard i first saw each conversation.
	seen := make([]map[int64]time.Time, liveDashboards)
	var reloads, errs, lost atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range clients {
		seen[i] = map[int64]time.Time{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(rand.Int63n(int64(time.Second))))
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				p, err := get(clients[i], cursors[i])
				if err != nil {
					errs.Add(1)
					continue
				}
				at := time.Now()
				cursors[i] = p.Next
				if p.Reload {
					reloads.Add(1)
				}
				for _, id := range p.Changed {
					if _, ok := seen[i][id]; !ok {
						seen[i][id] = at
					}
				}
			}
		}()
	}

	// The customers: livePerSecond messages a second for b.N seconds, each from a new number.
	sent := map[string]time.Time{}
	var mu sync.Mutex
	var sends sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(livePerSecond))
	b.ResetTimer()
	for n := 0; n < b.N*livePerSecond; n++ {
		<-tick.C
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
			mu.Lock()
			sent[from] = start
			mu.Unlock()
		}()
	}
	tick.Stop()
	sends.Wait()
	time.Sleep(3 * time.Second) // the last polls
	close(stop)
	wg.Wait()
	b.StopTimer()

	// Each conversation's number, then every (message, dashboard) latency.
	var rows []struct {
		ID     int64  `db:"id"`
		Mobile string `db:"mobile"`
	}
	if err := env.Store.DB().Select(&rows, `SELECT v.id, k.mobile FROM conversations v JOIN contacts k ON k.account_id = v.account_id
		AND k.id = v.contact_id WHERE v.account_id = $1`, acc); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
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
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	if len(lat) > 0 {
		b.ReportMetric(ms(lat[len(lat)/2]), "deliver_p50_ms")
		b.ReportMetric(ms(lat[len(lat)*99/100]), "deliver_p99_ms")
		b.ReportMetric(ms(lat[len(lat)-1]), "deliver_max_ms")
	}
	b.ReportMetric(float64(missed), "missed")
	b.ReportMetric(float64(lost.Load()), "webhook_errors")
	b.ReportMetric(float64(reloads.Load()), "reloads")
	b.ReportMetric(float64(errs.Load()), "poll_errors")
	b.ReportMetric(float64(int64(heap1)-int64(heap0))/float64(liveDashboards)/1024, "heap_per_dashboard_kb")
	b.ReportMetric(float64(gr1-gr0)/float64(liveDashboards), "goroutines_per_dashboard")
}

func mustURL(b *testing.B, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		b.Fatal(err)
	}
	return u
}
