package server

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"gateway/gen"
	"gateway/server/clientaddr"
)

// Demo key limits per client (the RateLimited response of openapi/openapi.yaml; clientaddr.Key
// says who a client is): 60 requests a minute with a burst of 20, and 10 sends a minute, for the
// whole deployment.
const (
	demoRatePerMin = 60
	demoBurst      = 20
	demoSendPerMin = 10
	demoSendBurst  = 10
)

// demoLimiter is a token bucket per client, one for all calls and one for sends.
//
// Across replicas: each replica enforces its share of the limit (rate and burst divided by
// GATEWAY_REPLICAS), so a deployment of N replicas allows a client at most the documented rate
// and burst in total, however the load balancer spreads its requests. The buckets are not kept
// in PostgreSQL on purpose: the demo key is public, and a limiter that costs a database write
// per request would turn a flood of demo calls into a flood of writes on the database the
// paying tenants use, which is what the limit is there to prevent. The price is that a client
// pinned to one replica gets 1/N of the limit; for a demo that is acceptable.
//
// Memory is bounded: at most max buckets. When a new client would pass the cap, the buckets
// that have refilled (idle long enough to be full, so dropping them changes nothing) are
// evicted, and if that is not enough, the least recently used ones down to 90% of the cap.
type demoLimiter struct {
	mu      sync.Mutex
	now     func() time.Time
	share   float64 // 1 / replicas
	max     int
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
	burst  float64
	rate   float64 // tokens per second
}

// demoMaxBuckets bounds the limiter's memory (about 100 bytes a bucket: 10 MB).
const demoMaxBuckets = 100_000

func newDemoLimiter(now func() time.Time, replicas int) *demoLimiter {
	if replicas < 1 {
		replicas = 1
	}
	return &demoLimiter{now: now, share: 1 / float64(replicas), max: demoMaxBuckets, buckets: map[string]*bucket{}}
}

// shareOf is this replica's share of a documented burst or rate (at least one call).
func (l *demoLimiter) shareOf(v float64) float64 { return max(1, math.Floor(v*l.share)) }

// take removes a token from key's bucket; when none is left it returns the wait until one is.
// perMin and burst are the deployment's limits; the replica applies its share.
func (l *demoLimiter) take(key string, perMin, burst float64) (ok bool, wait time.Duration, remaining int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	burst, rate := l.shareOf(burst), l.shareOf(perMin)/60
	b, found := l.buckets[key]
	if !found {
		if len(l.buckets) >= l.max {
			l.evict(now)
		}
		b = &bucket{tokens: burst, last: now, burst: burst, rate: rate}
		l.buckets[key] = b
	}
	b.tokens = math.Min(burst, b.tokens+now.Sub(b.last).Seconds()*rate)
	b.last = now
	if b.tokens < 1 {
		return false, time.Duration((1 - b.tokens) / rate * float64(time.Second)), 0
	}
	b.tokens--
	return true, 0, int(b.tokens)
}

// evict makes room: refilled buckets first, then the least recently used down to 90% of max.
func (l *demoLimiter) evict(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*b.rate >= b.burst {
			delete(l.buckets, k)
		}
	}
	target := l.max * 9 / 10
	if len(l.buckets) <= target {
		return
	}
	lasts := make([]time.Time, 0, len(l.buckets))
	for _, b := range l.buckets {
		lasts = append(lasts, b.last)
	}
	slices.SortFunc(lasts, func(a, b time.Time) int { return a.Compare(b) })
	cutoff := lasts[len(lasts)-target] // keep the target most recent
	for k, b := range l.buckets {
		if b.last.Before(cutoff) {
			delete(l.buckets, k)
		}
	}
	for k, b := range l.buckets { // ties at the cutoff
		if len(l.buckets) <= target {
			break
		}
		if b.last.Equal(cutoff) {
			delete(l.buckets, k)
		}
	}
}

// demoLimit applies the demo key's per-IP limits; 429 with Retry-After and RateLimit headers.
func (s *Server) demoLimit(c echo.Context, route *routers.Route) error {
	ip := clientaddr.Key(c.Request(), s.opts.TrustedProxies)
	perMin, burst, key := float64(demoRatePerMin), float64(demoBurst), "all|"+ip
	if route.Operation != nil && (route.Operation.OperationID == "sendTemplateMessage" || route.Operation.OperationID == "sendMessage") {
		perMin, burst, key = demoSendPerMin, demoSendBurst, "send|"+ip
	}
	ok, wait, remaining := s.demo.take(key, perMin, burst)
	burst = s.demo.shareOf(burst)
	h := c.Response().Header()
	h.Set("RateLimit-Policy", strconv.Itoa(int(burst))+";w=60")
	if ok {
		h.Set("RateLimit", "limit="+strconv.Itoa(int(burst))+", remaining="+strconv.Itoa(remaining))
		return nil
	}
	secs := int(math.Ceil(wait.Seconds()))
	h.Set("RateLimit", "limit="+strconv.Itoa(int(burst))+", remaining=0, reset="+strconv.Itoa(secs))
	return &apiError{Status: http.StatusTooManyRequests, Code: gen.ErrorCodeRateLimited,
		Message: "Too many requests on the demo key from this address; retry in " + strconv.Itoa(secs) + " s",
		Header:  http.Header{"Retry-After": {strconv.Itoa(secs)}}}
}
