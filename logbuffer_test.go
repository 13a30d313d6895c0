package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the flush goroutine and the test to share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A warning reaches the output at once, with the INFO lines before it; INFO lines reach it by
// the periodic flush; Close writes out the rest, every line whole and in order.
func TestBufferedLogger(t *testing.T) {
	var out lockedBuffer
	cfg := config{}
	logger, buf := cfg.bufferedLogger(&out)
	logger.Info("first")
	logger.Warn("careful", "n", 1)
	if got := out.String(); !strings.Contains(got, `"msg":"first"`) || !strings.Contains(got, `"msg":"careful"`) {
		t.Fatalf("after a warning the output is %q; want the INFO line and the warning", got)
	}
	logger.Info("later")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), `"msg":"later"`) {
		if time.Now().After(deadline) {
			t.Fatalf("an INFO line was not flushed within 5 s (flush every %s): %q", logFlushEvery, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 3000; i++ { // more than the buffer holds
		logger.With("k", "v").Info("bulk", "i", i)
	}
	logger.Info("last")
	buf.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3+3000+1 {
		t.Fatalf("%d lines after Close; want %d", len(lines), 3+3000+1)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, "{") || !strings.HasSuffix(l, "}") {
			t.Fatalf("line %d is not a whole JSON line: %q", i, l)
		}
	}
	if !strings.Contains(lines[len(lines)-1], `"msg":"last"`) || !strings.Contains(lines[3], `"i":0`) {
		t.Fatalf("lines out of order: first bulk %q, last %q", lines[3], lines[len(lines)-1])
	}
}
