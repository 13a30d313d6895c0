// Package worker holds the background services every replica runs beside the HTTP server:
// the customer webhook (eventhook) dispatcher, retention, and the parked-status reconciler,
// each with the one Start(ctx)/Stop() shape, and Group, which the process wiring uses to start
// and stop them. It speaks SQL only through the store package and HTTP only to customers'
// endpoints (through platform/eventhook).
package worker

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Service is a background loop run by every replica (the eventhook dispatcher, retention, the
// reconciler, the template sync, the tenant listener). Start returns once the loop runs; Stop stops it and waits; Stop is idempotent.
type Service interface {
	Start(ctx context.Context) error
	Stop()
}

// Group is the process's background services, started in the order they were added and
// stopped in reverse. The process wiring (the root package's serve.go) owns it; the HTTP
// server owns none.
type Group struct {
	mu      sync.Mutex
	list    []Service
	started []Service
}

// Add registers a service to be started by Start.
func (g *Group) Add(svc ...Service) {
	g.mu.Lock()
	g.list = append(g.list, svc...)
	g.mu.Unlock()
}

// Start starts every registered service; on a failure it stops the ones started and returns
// the error.
func (g *Group) Start(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, svc := range g.list {
		if err := svc.Start(ctx); err != nil {
			for i := len(g.started) - 1; i >= 0; i-- {
				g.started[i].Stop()
			}
			g.started = nil
			return err
		}
		g.started = append(g.started, svc)
	}
	return nil
}

// Stop stops the started services in reverse order and waits for them. It is idempotent.
func (g *Group) Stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := len(g.started) - 1; i >= 0; i-- {
		g.started[i].Stop()
	}
	g.started = nil
}

// lifecycle is the start/stop shape every background service embeds (the dispatcher,
// the template syncer, and through periodic retention and the reconciler): a started guard, a loop
// goroutine under a context that stopping cancels, a done channel, and an idempotent stop.
type lifecycle struct {
	lcName    string // for the "already started" error
	lcMu      sync.Mutex
	lcStarted bool
	lcCancel  context.CancelFunc
	lcDone    chan struct{}
	lcOnce    sync.Once
}

// start runs run in its own goroutine under a child of ctx that stop cancels, and returns at
// once. It fails when the service was started before.
func (l *lifecycle) start(ctx context.Context, run func(ctx context.Context)) error {
	l.lcMu.Lock()
	defer l.lcMu.Unlock()
	if l.lcStarted {
		return fmt.Errorf("%s: already started", l.lcName)
	}
	l.lcStarted = true
	ctx, l.lcCancel = context.WithCancel(ctx)
	l.lcDone = make(chan struct{})
	go func() {
		defer close(l.lcDone)
		run(ctx)
	}()
	return nil
}

// started reports whether start was called.
func (l *lifecycle) started() bool {
	l.lcMu.Lock()
	defer l.lcMu.Unlock()
	return l.lcStarted
}

// stop cancels run's context, waits for run to return, then calls after (when not nil). It
// is idempotent, and a no-op before start.
func (l *lifecycle) stop(after func()) {
	if !l.started() {
		return
	}
	l.lcOnce.Do(func() {
		l.lcCancel()
		<-l.lcDone
		if after != nil {
			after()
		}
	})
}

// periodic is the loop retention and the parked-status reconciler share: one pass at Start,
// then one every interval until Stop, each pass under its own timeout. pass receives the
// pass's context and the loop's, so that it can tell a pass that failed from one that Stop
// interrupted (the loop's context is then done).
type periodic struct {
	interval time.Duration
	timeout  time.Duration
	pass     func(pass, loop context.Context)

	lifecycle
}

// Start starts the loop (first pass at once) and returns. It fails when already started.
func (p *periodic) Start(ctx context.Context) error {
	return p.start(ctx, func(loop context.Context) {
		everyTick(loop, p.interval, func(loop context.Context) {
			ctx, cancel := context.WithTimeout(loop, p.timeout)
			defer cancel()
			p.pass(ctx, loop)
		})
	})
}

// Stop stops the loop, interrupting a pass in progress, and waits for it. It is idempotent,
// and a no-op before Start.
func (p *periodic) Stop() { p.stop(nil) }

// everyTick calls once at the start and then every interval until ctx ends. The services'
// loops are built on it; runOnce-style work belongs in once, bounded by its own timeout.
func everyTick(ctx context.Context, interval time.Duration, once func(ctx context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
