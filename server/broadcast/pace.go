package broadcast

import (
	"context"
	"sync"
	"time"
)

// bucket is a token bucket for one phone number's sends: rate tokens per second, holding at
// most burst. In any one-second interval it lets through at most rate+burst sends, so with
// rate+burst at or under the number's throughput no clock second at the platform sees more.
// It runs on the monotonic clock: pacing is real time whatever the engine's Clock says.
type bucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
	until  time.Time // no token before this (the platform said 130429 or 131057)
}

func newBucket(rate, burst float64) *bucket {
	return &bucket{rate: rate, burst: burst, tokens: 1, last: time.Now()}
}

// setRate changes the rate and burst (the number's throughput changed).
func (b *bucket) setRate(rate, burst float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rate, b.burst = rate, burst
	b.tokens = min(b.tokens, burst)
}

// hold stops the bucket for d and empties it (reservations already made stay owed).
func (b *bucket) hold(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if u := time.Now().Add(d); u.After(b.until) {
		b.until = u
	}
	b.tokens = min(b.tokens, 0)
}

// wait takes a token, sleeping until it is due; it fails only when ctx ends (then it takes
// none, or gives the token back). A caller that finds none reserves the next one (the count
// goes below zero) and sleeps exactly until it is due, so waiters wake one at a time, each at
// its own moment, instead of all at every token.
func (b *bucket) wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err // ended already: no token taken
	}
	b.mu.Lock()
	now := time.Now()
	start := now
	if start.Before(b.until) {
		start = b.until
	}
	if start.After(b.last) {
		b.tokens = min(b.burst, b.tokens+start.Sub(b.last).Seconds()*b.rate)
		b.last = start
	}
	b.tokens--
	delay := start.Sub(now)
	if b.tokens < 0 {
		delay += time.Duration(-b.tokens / b.rate * float64(time.Second))
	}
	b.mu.Unlock()
	if delay <= 0 {
		return nil
	}
	t := time.NewTimer(delay)
	select {
	case <-ctx.Done():
		t.Stop()
		b.mu.Lock()
		b.tokens++
		b.mu.Unlock()
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// pairs spaces sends to the same person from one number: the platform allows about one per
// 6 s (131056 past it). It remembers the last send per person, forgetting those older than
// the interval once the map grows.
type pairs struct {
	mu       sync.Mutex
	interval time.Duration
	last     map[string]time.Time
	sweepAt  int
}

func newPairs(interval time.Duration) *pairs {
	return &pairs{interval: interval, last: map[string]time.Time{}, sweepAt: 4096}
}

// ready reports whether a send to person may go at now; when not, the time it may.
func (p *pairs) ready(person string, now time.Time) (ok bool, notBefore time.Time) {
	if p.interval <= 0 {
		return true, time.Time{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if last, seen := p.last[person]; seen && now.Sub(last) < p.interval {
		return false, last.Add(p.interval)
	}
	return true, time.Time{}
}

// note records a send to person at now.
func (p *pairs) note(person string, now time.Time) {
	if p.interval <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.last) >= p.sweepAt {
		for k, t := range p.last {
			if now.Sub(t) >= p.interval {
				delete(p.last, k)
			}
		}
		p.sweepAt = max(4096, 2*len(p.last))
	}
	p.last[person] = now
}
