// Package web is the process's HTTP side as one handler, the way the process wiring (the root
// package's serve.go) and the tests (server/servertest) build it: the REST API (package
// server) and the dashboard (server/dashboard) side by side, each over the domain
// (server/domain) and the store. Neither UI imports the other; this package is where they
// meet.
package web

import (
	"context"
	"net/http"
	"net/netip"
	"time"

	"gateway/platform/eventhook"
	"gateway/server"
	"gateway/server/clientaddr"
	"gateway/server/dashboard"
	"gateway/server/domain"
	"gateway/server/onboarding"
	"gateway/store"
)

// Config is what the dashboard needs beside the API.
type Config struct {
	// Dashboard configures the web console under /dashboard.
	Dashboard dashboard.Options
	Store     *store.Store
	// Onboarding connects numbers (Embedded Signup, system-user tokens); its settings fill
	// the dashboard options left empty. Optional.
	Onboarding *onboarding.Service
	// Connector connects a workspace's number from the dashboard; nil means Onboarding (when
	// set), else the dashboard shows "not configured". Tests set a stand-in.
	Connector dashboard.Connector
	// SandboxPhoneNumber is the shared test-mode number handsets join through.
	SandboxPhoneNumber string
	// TrustedProxies name the client for the sign-in throttle as for the API's demo limit.
	TrustedProxies []netip.Prefix
	// Clock is the dashboard's time; nil means time.Now. Its logger is the API's.
	Clock func() time.Time
}

// Mount builds the dashboard over cfg, with the same key format, webhook URL rules and event
// bodies as the API and the operator commands and the API's send path for its form, and
// mounts it on api under dashboard.Prefix. api.Handler() then serves both.
func Mount(api *server.Server, cfg Config) (*dashboard.Dashboard, error) {
	opts, c, o := cfg.Dashboard, cfg.Connector, cfg.Onboarding
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
	// The webhooks page says how this process's dispatchers learn of new deliveries.
	opts.PollsForDeliveries = opts.PollsForDeliveries || api.PollsForDeliveries()
	dash, err := dashboard.New(dashboard.Config{
		Options:            opts,
		Store:              cfg.Store,
		Connector:          c,
		SandboxPhoneNumber: cfg.SandboxPhoneNumber,
		NewAPIKey:          domain.GenerateKey,
		ValidateWebhookURL: eventhook.ValidateURL,
		EventBody:          domain.EventBody,
		Sender:             api.FormSends(),
		Answerer:           api.PanelAnswers(),
		Media:              api.PanelMedia(),
		MarkRead:           api.PanelMarkRead,
		Broadcasts:         api.BroadcastPanel(),
		Syncer: func(ctx context.Context, accountID int64) error {
			_, err := api.SyncTemplates(ctx, accountID)
			return err
		},
		// The sign-in throttle counts clients as the demo limit does, behind the same proxies.
		ClientAddr: func(r *http.Request) string { return clientaddr.Key(r, cfg.TrustedProxies) },
		Logger:     api.Logger(),
		Clock:      cfg.Clock,
	})
	if err != nil {
		return nil, err
	}
	api.Mount(dashboard.Prefix, dash)
	return dash, nil
}
