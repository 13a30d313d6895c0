package server

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"gateway/gen"
)

// Demo key limits per client IP (the RateLimited response of openapi/openapi.yaml): 60 requests a minute with a burst of 20,
// and 10 sends a minute.
const (
	demoRatePerMin = 60
	demoBurst      = 20
	demoSendPerMin = 10
	demoSendBurst  = 10
)

// demoLimiter is a token bucket per client IP, one for all calls and one for sends.
type demoLimiter struct {
	mu      sync.Mutex
	now     func() time.Time
	buckets map[string]*bucket
	sweep   time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newDemoLimiter(now func() time.Time) *demoLimiter {
	return &demoLimiter{now: now, buckets: map[string]*bucket{}}
}

// take removes a token from key's bucket; when none is left it returns the wait until one is.
func (l *demoLimiter) take(key string, perMin, burst float64) (ok bool, wait time.Duration, remaining int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.sweep) > 10*time.Minute {
		for k, b := range l.buckets {
			if now.Sub(b.last) > 10*time.Minute {
				delete(l.buckets, k)
			}
		}
		l.sweep = now
	}
	b, found := l.buckets[key]
	if !found {
		b = &bucket{tokens: burst, last: now}
		l.buckets[key] = b
	}
	rate := perMin / 60
	b.tokens = math.Min(burst, b.tokens+now.Sub(b.last).Seconds()*rate)
	b.last = now
	if b.tokens < 1 {
		return false, time.Duration((1 - b.tokens) / rate * float64(time.Second)), 0
	}
	b.tokens--
	return true, 0, int(b.tokens)
}

// demoLimit applies the demo key's per-IP limits; 429 with Retry-After and RateLimit headers.
func (s *Server) demoLimit(c echo.Context, route *routers.Route) error {
	ip := c.RealIP()
	perMin, burst, key := float64(demoRatePerMin), float64(demoBurst), "all|"+ip
	if route.Operation != nil && route.Operation.OperationID == "sendTemplateMessage" {
		perMin, burst, key = demoSendPerMin, demoSendBurst, "send|"+ip
	}
	ok, wait, remaining := s.demo.take(key, perMin, burst)
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
