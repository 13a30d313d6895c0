package server

import (
	"context"
	"sync"
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

// StopServices stops the started services in reverse order and waits for them.
func (s *Server) StopServices() {
	s.bg.mu.Lock()
	defer s.bg.mu.Unlock()
	for i := len(s.bg.started) - 1; i >= 0; i-- {
		s.bg.started[i].Stop()
	}
	s.bg.started = nil
}
