package server_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"gateway/server/servertest"
)

// BenchmarkSend measures live sends through the whole stack (HTTP, validation, store, the
// simulator over loopback), each to a new number: the expensive path.
func BenchmarkSend(b *testing.B) {
	env, a := sendEnv(b, servertest.Config{})
	var n atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			r, err := env.DoConcurrent(servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Key: a.Live,
				Body: map[string]any{"destination": fmt.Sprintf("1555%07d", i), "template_name": "order_confirmation",
					"body_variables": []string{"Ana", "ORD-7781"}}})
			if err != nil || r.Status != http.StatusOK {
				b.Fatalf("%v %v", err, r)
			}
		}
	})
}
