package server

import "context"

// SyncAccountTemplates is SyncTemplates for the TemplateSyncer: it logs what the sync did and
// returns only the error.
func (s *Server) SyncAccountTemplates(ctx context.Context, accountID int64) error {
	res, err := s.SyncTemplates(ctx, accountID)
	if err == nil {
		s.log.InfoContext(ctx, "templates synced", "account_id", accountID, "fetched", res.Fetched,
			"approved", res.Approved, "created", res.Created, "updated", res.Updated, "removed", res.Removed)
	}
	return err
}
