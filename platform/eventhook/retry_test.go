package eventhook

import (
	"math"
	"testing"
	"time"
)

func TestRetryDelayBounds(t *testing.T) {
	zero := func() float64 { return 0 }
	half := func() float64 { return 0.5 }
	almostOne := func() float64 { return math.Nextafter(1, 0) }
	for _, tc := range []struct {
		name  string
		delay func(int, func() float64) (time.Duration, bool)
		base  [MaxAttempts - 1]time.Duration
	}{
		{"live", RetryDelay, [...]time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute,
			2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}},
		{"test mode", TestRetryDelay, testRetrySchedule},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev := time.Duration(0)
			for next := 2; next <= MaxAttempts; next++ {
				base := tc.base[next-2]
				lo, ok := tc.delay(next, zero)
				if !ok || lo != base*8/10 {
					t.Errorf("attempt %d, rnd=0: %v %v, want %v", next, lo, ok, base*8/10)
				}
				mid, _ := tc.delay(next, half)
				if mid != base {
					t.Errorf("attempt %d, rnd=0.5: %v, want %v", next, mid, base)
				}
				hi, ok := tc.delay(next, almostOne)
				if !ok || hi > base*12/10 || hi < base*119/100 {
					t.Errorf("attempt %d, rnd→1: %v %v, want within 1%% below %v", next, hi, ok, base*12/10)
				}
				if base <= prev {
					t.Errorf("attempt %d: base %v does not grow from %v", next, base, prev)
				}
				prev = base
				for range 100 {
					d, ok := tc.delay(next, nil)
					if !ok || d < base*8/10 || d > base*12/10 {
						t.Fatalf("attempt %d, default rnd: %v %v, outside ±20%% of %v", next, d, ok, base)
					}
				}
			}
			for _, next := range []int{MaxAttempts + 1, MaxAttempts + 2, math.MaxInt} {
				if d, ok := tc.delay(next, half); ok || d != 0 {
					t.Errorf("attempt %d: %v %v, want 0 false (dead)", next, d, ok)
				}
			}
			for _, next := range []int{1, 0, -1} {
				if d, ok := tc.delay(next, half); !ok || d != 0 {
					t.Errorf("attempt %d: %v %v, want 0 true (due at once)", next, d, ok)
				}
			}
			// Out-of-range random values are clamped.
			for _, r := range []float64{-1, math.NaN(), 2, math.Inf(1)} {
				d, _ := tc.delay(2, func() float64 { return r })
				if d < tc.base[0]*8/10 || d > tc.base[0]*12/10 {
					t.Errorf("rnd=%v: %v outside ±20%%", r, d)
				}
			}
		})
	}
}

func TestRetryScheduleTotal(t *testing.T) {
	var live, test time.Duration
	half := func() float64 { return 0.5 }
	for next := 2; next <= MaxAttempts; next++ {
		d, _ := RetryDelay(next, half)
		live += d
		d, _ = TestRetryDelay(next, half)
		test += d
	}
	if day := 24 * time.Hour; live < 3*day || live > 3*day+6*time.Hour {
		t.Errorf("live schedule totals %v, want about 3 days", live)
	}
	if test > 2*time.Hour {
		t.Errorf("test-mode schedule totals %v, want a short one", test)
	}
	t.Logf("live total %v, test-mode total %v", live, test)
}
