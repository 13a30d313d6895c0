package server

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Service is a background loop run by every replica (the webhook dispatcher, retention, the
// template sync). Start returns once the loop runs; Stop stops it and waits; Stop is idempotent.
type Service interface {
	Start(ctx context.Context) error
	Stop()
}

type services struct {
	mu      sync.Mutex
	list    []Service
	started []Service
}

// AddService registers a background service to be started by StartServices.
func (s *Server) AddService(svc Service) {
	s.bg.mu.Lock()
	s.bg.list = append(s.bg.list, svc)
	s.bg.mu.Unlock()
}

// StartServices starts every registered service; on a failure it stops the ones started and
// returns the error.
func (s *Server) StartServices(ctx context.Context) error {
	s.bg.mu.Lock()
	defer s.bg.mu.Unlock()
	for _, svc := range s.bg.list {
		if err := svc.Start(ctx); err != nil {
			for i := len(s.bg.started) - 1; i >= 0; i-- {
				s.bg.started[i].Stop()
			}
			s.bg.started = nil
			return err
		}
		s.bg.started = append(s.bg.started, svc)
	}
	return nil
}

// StopServices stops the started services in reverse order and waits for them, and the
// background recordings of accepted sends (which give up: the platform's status reports adopt
// those sends).
func (s *Server) StopServices() {
	if s.laterStop != nil {
		s.laterStop()
	}
	s.later.Wait()
	s.bg.mu.Lock()
	defer s.bg.mu.Unlock()
	for i := len(s.bg.started) - 1; i >= 0; i-- {
		s.bg.started[i].Stop()
	}
	s.bg.started = nil
}

// lifecycle is the start/stop shape every background service embeds (the dispatcher,
// retention, the template syncer, the parked-status reconciler): a started guard, a loop
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
