package server_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"gateway/server/servertest"
)

// BenchmarkGetMe measures GET /v1/me through the whole stack over real loopback HTTP: request
// id, logging, recovery, body limit, route lookup on the spec, key lookup (SHA-256 + one
// prepared query), request validation, the strict handler (one prepared account query and one
// connection query) and the envelope. It reports requests per second across 16 concurrent
// clients (GOMAXPROCS × 8). One response is checked against the spec before timing; the timed
// loop checks the status only, so the contract check does not count against the server.
//
//	go test -run '^$' -bench 'GetMe|Healthz' -benchtime 20000x ./server/
func BenchmarkGetMe(b *testing.B) {
	env := servertest.New(b, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	if r := env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/me", Key: a.Live}); r.Status != http.StatusOK {
		b.Fatalf("status %d %s", r.Status, r.Body)
	}
	benchGet(b, env.URL+"/v1/me", a.Live)
}

// BenchmarkHealthz is the reference for BenchmarkGetMe: the same client and loopback HTTP, the
// same outer middleware (request id, logging, recovery, body limit), no key, no database.
func BenchmarkHealthz(b *testing.B) {
	env := servertest.New(b, servertest.Config{})
	if r := env.Do(servertest.Request{Method: http.MethodGet, Path: "/healthz"}); r.Status != http.StatusOK {
		b.Fatalf("status %d %s", r.Status, r.Body)
	}
	benchGet(b, env.URL+"/healthz", "")
}

// benchGet sends GETs from GOMAXPROCS × 8 goroutines and reports requests per second.
func benchGet(b *testing.B, url, key string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
	b.Cleanup(client.CloseIdleConnections)
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			b.Error(err)
			return
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		for pb.Next() {
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
}
