package eventhook

import (
	"math/rand/v2"
	"time"
)

// MaxAttempts is the number of attempts of one delivery; after the last one
// fails the delivery is dead (it stays in the log and can be redelivered by
// hand).
const MaxAttempts = 10

// jitter is the relative spread of every delay: ±20 %.
const jitter = 0.2

// retrySchedule[i] is the base wait before attempt i+2 (about 3 days in all).
var retrySchedule = [MaxAttempts - 1]time.Duration{
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	14 * time.Hour,
	20 * time.Hour,
	24 * time.Hour,
}

// testRetrySchedule is the shortened schedule of test mode (about 1.4 hours
// in all), with the same number of attempts.
var testRetrySchedule = [MaxAttempts - 1]time.Duration{
	1 * time.Second,
	5 * time.Second,
	30 * time.Second,
	2 * time.Minute,
	5 * time.Minute,
	10 * time.Minute,
	15 * time.Minute,
	20 * time.Minute,
	30 * time.Minute,
}

// RetryDelay returns the wait before attempt number next (2..MaxAttempts)
// after a failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h,
// 24 h, each scaled by a factor 0.8 + 0.4·rnd() (±20 % jitter). rnd returns a
// value in [0, 1); values outside are clamped, and nil means math/rand/v2. It
// returns ok=false when next is above MaxAttempts (the delivery is dead), and
// (0, true) when next is 1 or less (the first attempt is due at once).
func RetryDelay(next int, rnd func() float64) (d time.Duration, ok bool) {
	return delay(&retrySchedule, next, rnd)
}

// TestRetryDelay is RetryDelay with the shortened test-mode schedule: 1 s,
// 5 s, 30 s, 2 min, 5 min, 10 min, 15 min, 20 min, 30 min, with the same
// jitter and the same MaxAttempts. It returns ok=false when next is above
// MaxAttempts.
func TestRetryDelay(next int, rnd func() float64) (d time.Duration, ok bool) {
	return delay(&testRetrySchedule, next, rnd)
}

func delay(schedule *[MaxAttempts - 1]time.Duration, next int, rnd func() float64) (time.Duration, bool) {
	if next > MaxAttempts {
		return 0, false
	}
	if next <= 1 {
		return 0, true
	}
	if rnd == nil {
		rnd = rand.Float64
	}
	r := rnd()
	switch {
	case !(r >= 0): // negative or NaN
		r = 0
	case r > 1:
		r = 1
	}
	base := schedule[next-2]
	return time.Duration(float64(base) * (1 - jitter + 2*jitter*r)), true
}
