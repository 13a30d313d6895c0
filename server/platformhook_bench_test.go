package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"gateway/platform/eventhook"
	"gateway/server/servertest"
	"gateway/server/worker"
)

// BenchmarkPlatformWebhookToEndpoint measures, in the same run, how long what the platform
// reports takes to reach the customer's endpoint: a status report (one status of a sent
// message, the groupcommit fast path) beside an inbound text message (recorded by
// domain.Inbound: contact, conversation, message and message.received). Each iteration POSTs
// one signed platform webhook to the gateway over loopback and waits until a loopback
// receiver has the event's delivery from the dispatcher, one at a time: ns/op is that end to
// end latency (p50-ms and p95-ms its percentiles; post-p50-ms is the POST's own, until the
// gateway answers). The alternated round posts a status and an inbound text in turn, so that
// both meet the same load of the machine. Run:
//
//	go test -run '^$' -bench BenchmarkPlatformWebhookToEndpoint -benchtime 200x -count 3 ./server/
func BenchmarkPlatformWebhookToEndpoint(b *testing.B) {
	env := servertest.New(b, servertest.Config{})
	tn := pwNewTenant(b, env, "Bench Ltd") // its endpoint (hooks.example.com) is disabled below
	got := make(chan string, 1024)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
		got <- r.Header.Get("X-Service-Event")
	}))
	b.Cleanup(rcv.Close)
	ctx := context.Background()
	eps, err := env.Store.WebhookEndpointsByAccount(ctx, tn.Account.ID)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range eps {
		if _, err := env.Store.SetWebhookEndpointEnabled(ctx, tn.Account.ID, e.ID, false, "operator"); err != nil {
			b.Fatal(err)
		}
	}
	secret, err := eventhook.NewSecret()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := env.Store.CreateWebhookEndpoint(ctx, tn.Account.ID, rcv.URL+"/hook", secret); err != nil {
		b.Fatal(err)
	}
	d := worker.NewDispatcher(env.Store, worker.DispatcherConfig{AllowPrivate: true, PollInterval: time.Second})
	if err := d.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(d.Stop)
	// The first inbound message of the sender creates its contact (contact.created): made here,
	// so every measured message is one more message of a known customer.
	pwPostOK(b, env, pwInbound(b, tn.Conn.PhoneNumberID, "15557770000", "Bench", "wamid.WARM", "text", map[string]any{"body": "hi"}))
	drain(b, got, "contact.created", "message.received")

	// one posts a delivery and waits for its event: the end to end latency, and the POST's own.
	one := func(b *testing.B, event string, payload []byte) (time.Duration, time.Duration) {
		start := time.Now()
		pwPostOK(b, env, payload)
		posted := time.Since(start)
		drain(b, got, event)
		return time.Since(start), posted
	}
	report := func(b *testing.B, name string, lat, post []time.Duration) {
		b.ReportMetric(pctMS(lat, 50), name+"p50-ms")
		b.ReportMetric(pctMS(lat, 95), name+"p95-ms")
		b.ReportMetric(pctMS(post, 50), name+"post-p50-ms")
	}
	round := 0
	statuses := func(b *testing.B, n int) func(i int) []byte {
		round++
		wamids := make([]string, n)
		for i := range wamids {
			wamids[i] = fmt.Sprintf("wamid.BS%d.%d", round, i)
			pwSeedMessage(b, env, tn, wamids[i], "sent")
		}
		return func(i int) []byte { return pwStatuses(b, tn.Conn, pwStatus(wamids[i], "delivered", time.Now().Unix())) }
	}
	inbounds := func() func(i int) []byte {
		round++
		r := round
		return func(i int) []byte {
			return pwInbound(b, tn.Conn.PhoneNumberID, "15557770000", "Bench", fmt.Sprintf("wamid.BI%d.%d", r, i), "text",
				map[string]any{"body": "Is it in blue?"})
		}
	}
	run := func(b *testing.B, event string, body func(i int) []byte) {
		lat, post := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			l, p := one(b, event, body(i))
			lat, post = append(lat, l), append(post, p)
		}
		b.StopTimer()
		report(b, "", lat, post)
	}
	b.Run("status", func(b *testing.B) { run(b, "message.status", statuses(b, b.N)) })
	b.Run("inbound-text", func(b *testing.B) { run(b, "message.received", inbounds()) })
	// Both kinds one after the other, so that both meet the same load of the machine: the
	// comparison the goal asks for (inbound-p50-ms against status-p50-ms, and their ratio).
	b.Run("alternated", func(b *testing.B) {
		status, inbound := statuses(b, b.N), inbounds()
		var sLat, sPost, iLat, iPost []time.Duration
		b.ResetTimer()
		for i := range b.N {
			l, p := one(b, "message.status", status(i))
			sLat, sPost = append(sLat, l), append(sPost, p)
			l, p = one(b, "message.received", inbound(i))
			iLat, iPost = append(iLat, l), append(iPost, p)
		}
		b.StopTimer()
		report(b, "status-", sLat, sPost)
		report(b, "inbound-", iLat, iPost)
		b.ReportMetric(pctMS(iLat, 50)/pctMS(sLat, 50), "inbound/status-p50")
	})
}

// pctMS is the q-th percentile of d, in milliseconds (d is sorted in place).
func pctMS(d []time.Duration, q int) float64 {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return float64(d[len(d)*q/100].Microseconds()) / 1000
}

// drain waits for the receiver to get each of the events, in any order.
func drain(b *testing.B, got <-chan string, events ...string) {
	b.Helper()
	want := strings.Join(events, ",")
	for range events {
		select {
		case e := <-got:
			if !strings.Contains(want, e) {
				b.Fatalf("the receiver got %s, want %s", e, want)
			}
		case <-time.After(30 * time.Second):
			b.Fatalf("no delivery of %s within 30 s", want)
		}
	}
}
