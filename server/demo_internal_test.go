package server

import (
	"fmt"
	"testing"
	"time"
)

// The limiter's memory is bounded: past its cap, idle buckets are evicted first, then the
// least recently used; a million distinct clients never hold more than the cap.
func TestDemoLimiterBoundedMemory(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	l := newDemoLimiter(func() time.Time { return now }, 1)
	l.max = 1000
	for i := 0; i < 100000; i++ {
		if ok, _, _ := l.take(fmt.Sprintf("all|c%d", i), demoRatePerMin, demoBurst); !ok {
			t.Fatalf("a new client was refused at %d", i)
		}
		if i%1000 == 0 {
			now = now.Add(time.Millisecond)
		}
	}
	if n := len(l.buckets); n > 1000 {
		t.Fatalf("%d buckets, cap 1000", n)
	}
	// A client that is busy right now keeps its bucket through evictions of others.
	hot := "all|hot"
	for i := 0; i < demoBurst; i++ {
		l.take(hot, demoRatePerMin, demoBurst)
	}
	for i := 0; i < 5000; i++ {
		now = now.Add(time.Microsecond)
		l.take(fmt.Sprintf("all|d%d", i), demoRatePerMin, demoBurst)
		if i%100 == 0 {
			if ok, _, _ := l.take(hot, demoRatePerMin, demoBurst); ok {
				t.Fatalf("the busy client's bucket was evicted (call %d allowed)", i)
			}
		}
	}
}

// Across replicas, each replica enforces its share of the limit, so the whole deployment
// allows at most the documented rate and burst per client.
func TestDemoLimiterReplicaShare(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	const replicas = 3
	var allowed int
	for r := 0; r < replicas; r++ {
		l := newDemoLimiter(func() time.Time { return now }, replicas)
		for i := 0; i < 100; i++ {
			if ok, _, _ := l.take("all|c", demoRatePerMin, demoBurst); ok {
				allowed++
			}
		}
	}
	if allowed > demoBurst || allowed < demoBurst-replicas {
		t.Fatalf("%d calls allowed in one instant across %d replicas, burst %d", allowed, replicas, demoBurst)
	}
}
