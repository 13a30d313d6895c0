package server

import (
	"github.com/labstack/echo/v4"

	"gateway/platform/webhook"
	"gateway/server/dashboard"
)

// newDashboard builds the web console over the server's store, with the same key format,
// webhook URL rules and event bodies as the API and the operator commands.
func (s *Server) newDashboard(c dashboard.Connector) (*dashboard.Dashboard, error) {
	return dashboard.New(dashboard.Config{
		Options:            s.opts.Dashboard,
		Store:              s.store,
		Connector:          c,
		SandboxPhoneNumber: s.opts.Sandbox.PhoneNumber,
		NewAPIKey:          GenerateKey,
		ValidateWebhookURL: webhook.ValidateURL,
		EventBody:          EventBody,
		Logger:             s.log,
		Clock:              s.now,
	})
}

// mountDashboard serves /dashboard and everything under it with the console's own handler
// (HTML pages, its own security headers and cross-origin protection).
func (s *Server) mountDashboard(e *echo.Echo) {
	h := echo.WrapHandler(s.dash)
	e.Any(dashboard.Prefix, h)
	e.Any(dashboard.Prefix+"/*", h)
}
