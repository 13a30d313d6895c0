package broadcast

import (
	"context"
	"testing"
	"time"
)

// The bucket lets through at most rate+burst tokens in a second, and does let tokens through
// (the lower bound is loose: the machine is shared).
func TestBucketPaces(t *testing.T) {
	rate, burst := pace(400, 1)
	b := newBucket(rate, burst)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	n := 0
	for time.Since(start) < time.Second {
		if err := b.wait(ctx); err != nil {
			t.Fatalf("after %d tokens: %v (bucket %+v)", n, err, b)
		}
		n++
	}
	if n < 50 || n > 401 {
		t.Fatalf("%d tokens in a second at rate %v burst %v", n, rate, burst)
	}
}
