package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"gateway/platform/eventhook"
	"gateway/store"
)

// The dashboard's webhook operations: endpoints (the signing secret is printed once, at
// creation) and the request log.

// adminWebhookCreate is `gateway admin webhook create`.
func adminWebhookCreate(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account id")
	u := fs.String("url", "", "the endpoint URL (https unless GATEWAY_WEBHOOK_ALLOW_PRIVATE=true)")
	if err := parseFlags(fs, args, "account", "url"); err != nil {
		return nil, err
	}
	w, err := createWebhook(ctx, a.store, *id, *u, a.cfg.WebhookAllowPrivate)
	if err == nil {
		operatorAudit(ctx, a, *id, store.AuditWebhookAdded, w.URL, "by the operator")
	}
	return w, err
}

// adminWebhookList is `gateway admin webhook list`.
func adminWebhookList(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account id")
	if err := parseFlags(fs, args, "account"); err != nil {
		return nil, err
	}
	ws, err := a.store.WebhookEndpointsByAccount(ctx, *id)
	if err != nil {
		return nil, err
	}
	return map[string]any{"account_id": *id, "webhooks": ws}, nil
}

// adminWebhookDelete is `gateway admin webhook delete`.
func adminWebhookDelete(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("webhook", 0, "webhook endpoint id")
	if err := parseFlags(fs, args, "webhook"); err != nil {
		return nil, err
	}
	accountID, err := webhookAccount(ctx, a.store, *id)
	if err != nil {
		return nil, err
	}
	w, err := a.store.DeleteWebhookEndpoint(ctx, accountID, *id)
	if err != nil {
		return nil, webhookNotFound(err, *id)
	}
	operatorAudit(ctx, a, accountID, store.AuditWebhookDeleted, w.URL, "by the operator")
	return map[string]any{"webhook": w, "deleted": true}, nil
}

// adminWebhookSetEnabled is `gateway admin webhook enable` (true) and `disable` (false).
func adminWebhookSetEnabled(enabled bool) func(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	return func(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
		id := fs.Int64("webhook", 0, "webhook endpoint id")
		if err := parseFlags(fs, args, "webhook"); err != nil {
			return nil, err
		}
		accountID, err := webhookAccount(ctx, a.store, *id)
		if err != nil {
			return nil, err
		}
		w, err := a.store.SetWebhookEndpointEnabled(ctx, accountID, *id, enabled, store.DisabledOperator)
		if err != nil {
			return w, webhookNotFound(err, *id)
		}
		action := store.AuditWebhookDisabled
		if enabled {
			action = store.AuditWebhookEnabled
		}
		operatorAudit(ctx, a, accountID, action, w.URL, "by the operator")
		return w, nil
	}
}

// adminDeliveriesList is `gateway admin deliveries list`.
func adminDeliveriesList(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account id")
	status := fs.String("status", "", "failed (dead, or pending after a failed attempt), pending, succeeded or dead")
	limit := fs.Int("limit", 50, "most deliveries listed, newest first (1-1000)")
	if err := parseFlags(fs, args, "account"); err != nil {
		return nil, err
	}
	if *limit < 1 || *limit > 1000 {
		return nil, errors.New("--limit must be between 1 and 1000")
	}
	ds, err := a.store.DeliveriesByAccount(ctx, *id, *status, *limit)
	if err != nil {
		return nil, err
	}
	return map[string]any{"account_id": *id, "deliveries": ds}, nil
}

// adminDeliveriesRedeliver is `gateway admin deliveries redeliver`.
func adminDeliveriesRedeliver(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.String("delivery", "", "delivery id")
	if err := parseFlags(fs, args, "delivery"); err != nil {
		return nil, err
	}
	accountID, err := a.store.DeliveryAccount(ctx, *id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no delivery %q", *id)
	}
	if err != nil {
		return nil, err
	}
	d, err := a.store.Redeliver(ctx, accountID, *id)
	switch {
	case errors.Is(err, store.ErrEndpointDisabled):
		return nil, fmt.Errorf("delivery %s: its endpoint is disabled; enable it first (gateway admin webhook enable --webhook ID)", *id)
	case errors.Is(err, store.ErrInFlight):
		return nil, fmt.Errorf("delivery %s: an attempt is in flight right now; try again in a few seconds", *id)
	case err != nil:
		return nil, err
	}
	operatorAudit(ctx, a, accountID, store.AuditDeliveryRedelivered, *id, "by the operator")
	return d, nil
}

// webhookCreated is printed once: the secret is never shown again.
type webhookCreated struct {
	store.WebhookEndpoint
	Secret string `json:"secret"`
}

// createWebhook validates the URL, makes a signing secret and registers the endpoint.
func createWebhook(ctx context.Context, st *store.Store, accountID int64, rawURL string, allowPrivate bool) (webhookCreated, error) {
	if err := eventhook.ValidateURL(rawURL, allowPrivate); err != nil {
		return webhookCreated{}, fmt.Errorf("--url: %w", err)
	}
	secret, err := eventhook.NewSecret()
	if err != nil {
		return webhookCreated{}, err
	}
	w, err := st.CreateWebhookEndpoint(ctx, accountID, rawURL, secret)
	if errors.Is(err, store.ErrNotFound) {
		return webhookCreated{}, fmt.Errorf("no account %d", accountID)
	}
	if errors.Is(err, store.ErrLimitReached) {
		return webhookCreated{}, fmt.Errorf("account %d already has %d webhook endpoints, the most it may have (GATEWAY_MAX_WEBHOOK_ENDPOINTS): delete one first (gateway admin webhook delete --webhook ID)",
			accountID, st.Limits().WebhookEndpoints)
	}
	if err != nil {
		return webhookCreated{}, err
	}
	return webhookCreated{WebhookEndpoint: w, Secret: secret}, nil
}

// webhookAccount finds the account of an endpoint named by id alone.
func webhookAccount(ctx context.Context, st *store.Store, id int64) (int64, error) {
	accountID, err := st.WebhookEndpointAccount(ctx, id)
	return accountID, webhookNotFound(err, id)
}

func webhookNotFound(err error, id int64) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no webhook endpoint %d", id)
	}
	return err
}
