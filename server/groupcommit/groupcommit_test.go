package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/store"
)

// The batcher's own rules, here for status reports, with a stand-in for the statement (the
// statements themselves are tested against PostgreSQL in store's TestStatusWritesBatchEqualsOneByOne
// and TestSentWritesBatchEqualsOneByOne): calls that arrive while
// statements are in flight share the next one, every call gets its own result, no statement
// carries two reports of one message, at most batchRuns run at once, and a failed
// statement fails exactly the calls it carried.
func TestGroupCommitGroupsConcurrentCalls(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sizes []int
	inFlight, maxInFlight := 0, 0
	release := make(chan struct{})
	b := New(func(_ context.Context, ws []store.StatusWrite) ([]store.StatusApplied, error) {
		mu.Lock()
		sizes = append(sizes, len(ws))
		inFlight++
		maxInFlight = max(maxInFlight, inFlight)
		seen := map[string]bool{}
		for _, w := range ws {
			k := fmt.Sprint(w.AccountID, w.Report.PlatformMessageID)
			if seen[k] {
				mu.Unlock()
				t.Errorf("two reports of %s in one statement", k)
				return nil, errors.New("duplicate")
			}
			seen[k] = true
		}
		mu.Unlock()
		<-release // statements wait until every call is queued
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		out := make([]store.StatusApplied, len(ws))
		for i, w := range ws {
			if w.Report.PlatformMessageID == "poison" {
				return nil, errors.New("statement failed")
			}
			// The result names its write, so a call that got another's result shows.
			out[i] = store.StatusApplied{Found: true, I: int(w.AccountID)}
		}
		return out, nil
	}, func(w store.StatusWrite) []any {
		return []any{[2]any{w.AccountID, w.Report.PlatformMessageID}}
	}, time.Minute)

	const n = 40
	var wg sync.WaitGroup
	results := make([]store.StatusApplied, n)
	errs := make([]error, n)
	call := func(i int, wamid string) {
		defer wg.Done()
		results[i], errs[i] = b.Do(store.StatusWrite{AccountID: int64(i), Report: store.StatusReport{PlatformMessageID: wamid}})
	}
	for i := 0; i < n; i++ {
		wg.Add(1)
		wamid := fmt.Sprint("wamid.", i%5) // account i: all different messages
		switch {
		case i == 7:
			wamid = "poison"
		}
		go func(i int, wamid string) {
			if i >= 30 { // reports of one message of one account: never in one statement
				defer wg.Done()
				results[i], errs[i] = b.Do(store.StatusWrite{AccountID: 1000, Report: store.StatusReport{PlatformMessageID: "wamid.same"}})
				return
			}
			call(i, wamid)
		}(i, wamid)
	}
	// Every call is either carried by a held statement or queued behind them.
	for {
		b.mu.Lock()
		queued := len(b.queue)
		b.mu.Unlock()
		mu.Lock()
		carried := 0
		for _, s := range sizes {
			carried += s
		}
		mu.Unlock()
		if queued+carried == n {
			break
		}
		runtime.Gosched()
	}
	close(release)
	wg.Wait()

	if maxInFlight > batchRuns {
		t.Fatalf("%d statements in flight, at most %d allowed", maxInFlight, batchRuns)
	}
	total, biggest := 0, 0
	for _, s := range sizes {
		total += s
		biggest = max(biggest, s)
	}
	if total < n || biggest < 2 {
		t.Fatalf("statement sizes %v: want %d calls carried and some statements shared", sizes, n)
	}
	poisoned := 0
	for i := 0; i < n; i++ {
		switch {
		case errs[i] != nil:
			poisoned++
		case i >= 30 && results[i].I != 1000, i < 30 && results[i].I != i:
			t.Fatalf("call %d got %+v", i, results[i])
		}
	}
	if errs[7] == nil || poisoned == n {
		t.Fatalf("the poisoned statement: errors %v", errs)
	}
	// The batcher is idle again: a lone call runs at once, alone.
	sizes = nil
	if _, err := b.Do(store.StatusWrite{AccountID: 1, Report: store.StatusReport{PlatformMessageID: "wamid.alone"}}); err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 1 || sizes[0] != 1 {
		t.Fatalf("a lone call ran in statements of sizes %v", sizes)
	}
}

// A panic in the shared statement's function reaches every call it carried as a panic in the
// caller's goroutine (with the stack where it happened), not a crash of the process, and the
// batcher goes on serving the calls after it.
func TestGroupCommitPanicReachesItsCallers(t *testing.T) {
	t.Parallel()
	b := New(func(_ context.Context, ws [][]byte) ([]int, error) {
		if string(ws[0]) == "boom" {
			var m map[string]int
			m["x"] = 1 // a real runtime panic
		}
		return make([]int, len(ws)), nil
	}, nil, time.Minute)
	call := func(w string) (p any) {
		defer func() { p = recover() }()
		b.Do([]byte(w))
		return nil
	}
	p := call("boom")
	bp, ok := p.(*Panic)
	if !ok || !strings.Contains(bp.Error(), "assignment to entry in nil map") || !strings.Contains(bp.Error(), "groupcommit_test.go") {
		t.Fatalf("caller recovered %v, want the statement's panic with its stack", p)
	}
	if p := call("fine"); p != nil {
		t.Fatalf("the batcher did not recover: %v", p)
	}
}
