package server

import (
	"context"

	"gateway/server/onboarding"
)

// wireOnboarding completes the onboarding service with what the server owns: the template sync
// that follows a connect, and dropping the phone number id → tenant cache when a number is
// connected or disconnected, so the next platform webhook is routed to the new tenant at once.
// Fields the caller set are kept.
func (s *Server) wireOnboarding(o *onboarding.Service) {
	if o == nil {
		return
	}
	if o.SyncTemplates == nil {
		o.SyncTemplates = func(ctx context.Context, accountID int64) error {
			_, err := s.SyncTemplates(ctx, accountID)
			return err
		}
	}
	if o.Changed == nil {
		o.Changed = s.ForgetTenants
	}
}

// Onboarding returns the onboarding service the server was built with (nil when none).
func (s *Server) Onboarding() *onboarding.Service { return s.onboarding }

// ForgetTenants drops the cached phone number id → tenant mappings of the given numbers (all of
// them when none is given). Connecting or disconnecting a number calls it.
func (s *Server) ForgetTenants(phoneNumberIDs ...string) {
	s.tenantMu.Lock()
	defer s.tenantMu.Unlock()
	if len(phoneNumberIDs) == 0 {
		s.tenants = nil
		return
	}
	for _, id := range phoneNumberIDs {
		delete(s.tenants, id)
	}
}
