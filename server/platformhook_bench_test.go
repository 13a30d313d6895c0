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
// end latency (p50-ms and p95-ms its percentiles). Run:
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

	run := func(b *testing.B, event string, body func(i int) []byte) {
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			payload := body(i)
			start := time.Now()
			pwPostOK(b, env, payload)
			drain(b, got, event)
			lat = append(lat, time.Since(start))
		}
		b.StopTimer()
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
	}
	round := 0
	b.Run("status", func(b *testing.B) {
		round++
		wamids := make([]string, b.N)
		for i := range wamids {
			wamids[i] = fmt.Sprintf("wamid.BS%d.%d", round, i)
			pwSeedMessage(b, env, tn, wamids[i], "sent")
		}
		run(b, "message.status", func(i int) []byte {
			return pwStatuses(b, tn.Conn, pwStatus(wamids[i], "delivered", time.Now().Unix()))
		})
	})
	b.Run("inbound-text", func(b *testing.B) {
		round++
		run(b, "message.received", func(i int) []byte {
			return pwInbound(b, tn.Conn.PhoneNumberID, "15557770000", "Bench", fmt.Sprintf("wamid.BI%d.%d", round, i), "text",
				map[string]any{"body": "Is it in blue?"})
		})
	})
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
