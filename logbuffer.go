package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logBuffer batches serve's log lines: one access-log line per request, each written by
// itself, was one write system call per request (in the poll benchmark the largest single
// syscall cost after the sockets). Lines collect in a buffer that is written out when it
// fills, every logFlushEvery, at once after a record at WARN or above (bufferedLogger), and
// at Close. A crash loses at most the last logFlushEvery of INFO lines.
type logBuffer struct {
	mu   sync.Mutex
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

const (
	logFlushEvery = 100 * time.Millisecond
	logBufferSize = 64 << 10
)

// newLogBuffer starts the periodic flush of a buffer in front of w; Close stops it.
func newLogBuffer(w io.Writer) *logBuffer {
	b := &logBuffer{w: bufio.NewWriterSize(w, logBufferSize), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		t := time.NewTicker(logFlushEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				b.Flush()
			case <-b.stop:
				return
			}
		}
	}()
	return b
}

// Write buffers p (one whole log line: the handler writes each record in one call).
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Write(p)
}

// Flush writes out what is buffered; an error of the underlying writer is dropped, as the
// logger drops it.
func (b *logBuffer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.w.Flush()
}

// Close stops the periodic flush and writes out the rest. Call it once.
func (b *logBuffer) Close() {
	close(b.stop)
	<-b.done
	b.Flush()
}

// flushingHandler flushes the buffer after every record at WARN or above, so a warning or an
// error is never held back.
type flushingHandler struct {
	slog.Handler
	buf *logBuffer
}

func (h flushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		h.buf.Flush()
	}
	return err
}

func (h flushingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return flushingHandler{h.Handler.WithAttrs(as), h.buf}
}

func (h flushingHandler) WithGroup(name string) slog.Handler {
	return flushingHandler{h.Handler.WithGroup(name), h.buf}
}

// bufferedLogger is cfg.logger over a logBuffer in front of w; close the buffer when done.
func (c config) bufferedLogger(w io.Writer) (*slog.Logger, *logBuffer) {
	buf := newLogBuffer(w)
	return slog.New(flushingHandler{c.logger(buf).Handler(), buf}), buf
}
