package audience_test

import (
	"bufio"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gateway/server/audience"
)

// TestMillionRowsStreamInBoundedMemory imports a 1,000,000-row file generated on the fly
// through a pipe (never held in memory) and checks the peak heap against the import's budget
// (200 MB); it logs the time, whose goal (under 60 s) is a speed figure, not an assertion.
// Under the race detector, which slows the parse about tenfold, the file has 100,000 rows.
// Every 10th row repeats an earlier person under the other form of their number, every 50th
// has an invalid number.
func TestMillionRowsStreamInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a million rows: skipped with -short")
	}
	rows := 1_000_000
	if raceEnabled {
		rows = 100_000
	}
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 64<<10)
		fmt.Fprintln(w, "Phone,First,Last,Order ID,City")
		for i := range rows {
			switch {
			case i%50 == 49:
				fmt.Fprintf(w, "12345,Bad,Row,%d,Nowhere\n", i)
			case i%10 == 9: // the person of row i-9, written without the mobile 9
				j := i - 9
				fmt.Fprintf(w, "+55 %02d %04d-%04d,Again,Person,%d,São Paulo\n", 11+j/10_000_000, (j/10000)%1000+8000, j%10000, i)
			default:
				fmt.Fprintf(w, "(%02d) 9%04d-%04d,Name%d,Surname,%d,São Paulo\n", 11+i/10_000_000, (i/10000)%1000+8000, i%10000, i, i)
			}
		}
		pw.CloseWithError(w.Flush())
	}()

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	start := time.Now()
	var valid int
	sum, err := audience.Parse(pr, audience.Options{DefaultCountry: "BR", Mapping: audience.Mapping{
		Number: "Phone", FirstName: "First", LastName: "Last", Variables: map[string]string{"order": "Order ID"}}},
		audience.Handlers{Row: func(audience.Row) error { valid++; return nil }})
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rows in %v (%.0f rows/s), peak heap in use %.1f MB (%.1f MB before)", sum.Rows, elapsed,
		float64(sum.Rows)/elapsed.Seconds(), float64(peak.Load())/(1<<20), float64(base.HeapInuse)/(1<<20))
	wantBad := rows / 50
	wantDup := rows/10 - rows/50 // rows i%10==9, less those i%50==49 (all of which are i%10==9)
	if sum.Rows != rows || sum.Rejected != wantBad || sum.DuplicatesMerged != wantDup || sum.Valid != rows-wantBad-wantDup || valid != sum.Valid {
		t.Fatalf("summary %+v (handler saw %d valid)", sum, valid)
	}
	if p := peak.Load(); p > 200<<20 {
		t.Fatalf("peak heap %d MB, the budget is 200 MB", p>>20)
	}
}
