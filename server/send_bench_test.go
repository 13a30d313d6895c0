package server_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gateway/server/servertest"
)

// BenchmarkSend measures live sends through the whole stack (HTTP, validation, store, the
// simulator over loopback), each to a new number: the expensive path.
func BenchmarkSend(b *testing.B) {
	env, a := sendEnv(b, servertest.Config{})
	benchSend(b, env, a, map[string]any{"template_name": "order_confirmation", "body_variables": []string{"Ana", "ORD-7781"}})
}

// BenchmarkSendRich is BenchmarkSend with an IMAGE header and a URL button (spring_sale): the
// rich-template rules and components on top of the same path.
func BenchmarkSendRich(b *testing.B) {
	env, a := richEnv(b)
	benchSend(b, env, a, map[string]any{"template_name": "spring_sale", "body_variables": []string{"Ana"},
		"header_media":     map[string]any{"type": "image", "link": "https://cdn.example.com/spring.jpg"},
		"button_variables": []map[string]any{{"index": 0, "value": "SPRING24"}}})
}

// benchSend sends body to a new number per iteration, 8 goroutines per CPU, and reports the
// process's user+sys CPU per send (the gateway, the simulator and the client all run in it).
func benchSend(b *testing.B, env *servertest.Env, a servertest.Tenant, body map[string]any) {
	var n atomic.Int64
	b.SetParallelism(8)
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			req := map[string]any{"destination": fmt.Sprintf("1555%07d", i)}
			for k, v := range body {
				req[k] = v
			}
			r, err := env.DoConcurrent(servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Key: a.Live, Body: req})
			if err != nil || r.Status != http.StatusOK {
				b.Fatalf("%v %v", err, r)
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is the user+sys CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAnswerVsTemplate puts a non-template answer (POST /v1/messages, a text) next to a
// template send (POST /v1/messages/template) in the same run, alternated for three rounds
// (template#01, answer#01, template#02, ...: a load that drifts during the run touches both),
// each to contacts who wrote in the last hour (so both find their contact, and the answer its
// open window), one contact per iteration: the answer reads the window in the send's own
// statement, so it should cost no more than the template send.
func BenchmarkAnswerVsTemplate(b *testing.B) {
	env, a := sendEnv(b, servertest.Config{})
	for range 3 {
		benchAnswerVsTemplateRound(b, env, a)
	}
}

func benchAnswerVsTemplateRound(b *testing.B, env *servertest.Env, a servertest.Tenant) {
	for _, kind := range []struct {
		name, path string
		body       map[string]any
	}{
		{"template", "/v1/messages/template", map[string]any{"template_name": "order_confirmation", "body_variables": []string{"Ana", "ORD-7781"}}},
		{"answer", "/v1/messages", map[string]any{"type": "text", "text": map[string]any{"body": "Hi Ana, your order ORD-7781 is confirmed."}}},
	} {
		b.Run(kind.name, func(b *testing.B) {
			// b.N contacts who wrote, and a few more for the warm-up sends (connections and
			// prepared statements of this kind's path) before the timer starts.
			const warm = 16
			prefix := fmt.Sprintf("17%02d", benchRound.Add(1)%100)
			for i := range b.N + warm {
				wrote(b, env, a, fmt.Sprintf("%s%07d", prefix, i), "", time.Now().Add(-time.Hour))
			}
			var n atomic.Int64
			sendOne := func() {
				req := map[string]any{"destination": fmt.Sprintf("%s%07d", prefix, n.Add(1)-1)}
				for k, v := range kind.body {
					req[k] = v
				}
				r, err := env.DoConcurrent(servertest.Request{Method: http.MethodPost, Path: kind.path, Key: a.Live, Body: req})
				if err != nil || r.Status != http.StatusOK {
					b.Fatalf("%v %v", err, r)
				}
			}
			for range warm {
				sendOne()
			}
			b.SetParallelism(8)
			cpu0 := processCPU()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					sendOne()
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// benchRound numbers the sub-benchmark runs, so each seeds contacts of its own.
var benchRound atomic.Int64
