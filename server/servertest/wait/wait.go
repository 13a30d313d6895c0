// Package wait is the one polling helper of the tests: wait.For replaces hand-rolled sleep
// loops. It imports nothing of this module, so every test package can use it (the server's
// internal tests, which cannot import servertest, the store's and the end-to-end tests).
package wait

import (
	"testing"
	"time"
)

// interval is how often For polls.
const interval = 5 * time.Millisecond

// For polls cond until it holds, and fails the test (naming what it waited for) when timeout
// passes first. cond runs on the calling goroutine.
func For(t testing.TB, cond func() bool, timeout time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(interval)
	}
}
