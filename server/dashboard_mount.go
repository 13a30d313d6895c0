package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"gateway/platform/eventhook"
	"gateway/server/clientaddr"
	"gateway/server/dashboard"
	"gateway/server/onboarding"
)

// newDashboard builds the web console over the server's store, with the same key format,
// webhook URL rules and event bodies as the API and the operator commands. Without a
// Connector the onboarding service connects numbers, and its Embedded Signup settings fill
// the options left empty.
func (s *Server) newDashboard(c dashboard.Connector, o *onboarding.Service) (*dashboard.Dashboard, error) {
	opts := s.opts.Dashboard
	if c == nil && o != nil {
		c = o
	}
	if o != nil {
		if opts.PlatformAppID == "" {
			opts.PlatformAppID = o.AppID
		}
		if opts.PlatformESConfigID == "" {
			opts.PlatformESConfigID = o.ConfigID
		}
		if opts.PlatformSDKURL == "" {
			opts.PlatformSDKURL = o.SDKURL
		}
	}
	return dashboard.New(dashboard.Config{
		Options:            opts,
		Store:              s.store,
		Connector:          c,
		SandboxPhoneNumber: s.opts.Sandbox.PhoneNumber,
		NewAPIKey:          GenerateKey,
		ValidateWebhookURL: eventhook.ValidateURL,
		EventBody:          EventBody,
		Sender:             s,
		Syncer: func(ctx context.Context, accountID int64) error {
			_, err := s.SyncTemplates(ctx, accountID)
			return err
		},
		// The sign-in throttle counts clients as the demo limit does, behind the same proxies.
		ClientAddr: func(r *http.Request) string { return clientaddr.Key(r, s.opts.TrustedProxies) },
		Logger:     s.log,
		Clock:      s.now,
	})
}

// mountDashboard serves /dashboard and everything under it with the console's own handler
// (HTML pages, its own security headers and cross-origin protection).
func (s *Server) mountDashboard(e *echo.Echo) {
	h := echo.WrapHandler(s.dash)
	e.Any(dashboard.Prefix, h)
	e.Any(dashboard.Prefix+"/*", h)
	// A person who opens the service's address in a browser lands on the console.
	e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, dashboard.Prefix) })
}
