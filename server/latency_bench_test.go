package server_test

import (
	"sort"
	"testing"
	"time"
)

// reportLatencies runs call once to warm up, then b.N times, and reports the median and the
// 99th percentile of the calls' wall times in milliseconds (p50_ms, p99_ms).
func reportLatencies(b *testing.B, call func()) {
	b.Helper()
	call()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		call()
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50_ms")
	b.ReportMetric(ms(lat[(len(lat)-1)*99/100]), "p99_ms")
}
