package server

import (
	"context"
	"time"

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

// qualityRefreshTimeout bounds the platform reads a quality update webhook triggers.
const qualityRefreshTimeout = 10 * time.Second

// handleQualityUpdate refreshes the quality rating and messaging limit of every account whose
// number belongs to the WABA (the entry id) after a phone_number_quality_update webhook, by
// reading the number from the platform (the webhook names the number by its display form
// only). Failures are logged: the webhook itself was handled.
func (s *Server) handleQualityUpdate(ctx context.Context, wabaID string) error {
	if s.onboarding == nil {
		s.log.DebugContext(ctx, "platform webhook: quality update ignored (no onboarding service)", "waba_id", wabaID)
		return nil
	}
	ids, err := s.store.AccountIDsByWabaID(ctx, wabaID)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, qualityRefreshTimeout)
	defer cancel()
	for _, accountID := range ids {
		d, err := s.onboarding.Refresh(ctx, accountID)
		if err != nil {
			s.log.WarnContext(ctx, "platform webhook: quality refresh failed", "account_id", accountID, "error", err.Error())
			continue
		}
		s.log.InfoContext(ctx, "platform webhook: number quality refreshed", "account_id", accountID,
			"quality_rating", d.QualityRating, "messaging_limit", d.MessagingLimit)
	}
	return nil
}
