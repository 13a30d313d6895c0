package server

import "gateway/server/domain"

// BroadcastPanel is the dashboard's broadcasts over the API's own: the same domain operations
// (checks, pre-flight, engine limits) on the workspace's live number.
func (s *Server) BroadcastPanel() *domain.BroadcastPanel {
	return &domain.BroadcastPanel{Broadcasts: s.broadcasts, Sends: s.sends}
}
