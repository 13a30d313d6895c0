package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"gateway/platform/simulator"
	"gateway/store"
)

const devEmail = "dev@localhost"

// The Embedded Signup app and configuration ids `gateway dev` uses when none are set.
const (
	devAppID      = "100000000000000"
	devESConfigID = "local-es-config"
)

// dev is `make run`: it starts the platform simulator in-process, points the gateway at it,
// seeds (or reuses) a local account connected to the simulator's number, issues a fresh live
// and test key, prints them with a first curl, and serves.
func dev(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	logger := cfg.logger(stderr)
	simCfg := simulator.DefaultConfig()
	// Embedded Signup runs against the simulator's SDK and window, with local ids unless set.
	cfg.PlatformAppID = cmp.Or(cfg.PlatformAppID, devAppID)
	cfg.PlatformESConfigID = cmp.Or(cfg.PlatformESConfigID, devESConfigID)
	simCfg.AppSecret = cfg.PlatformAppSecret
	simCfg.AppID = cfg.PlatformAppID
	simCfg.WebhookURL = "http://" + cfg.Addr + "/platform/webhook"
	sim := simulator.New(simCfg)
	seedSimulator(sim)
	seedSandbox(sim, cfg)
	simURL, err := sim.Start(cfg.SimAddr)
	if err != nil {
		return fmt.Errorf("start the platform simulator on %s: %w", cfg.SimAddr, err)
	}
	defer sim.Close()
	cfg.PlatformBaseURL = simURL + "/v23.0"
	cfg.PlatformSDKURL = simURL + "/sdk.js"

	a, err := openApp(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer a.close()
	acct, err := a.store.AccountByEmail(ctx, devEmail)
	if errors.Is(err, store.ErrNotFound) {
		acct, err = createAccount(ctx, a.store, "Local Dev", devEmail)
	}
	if err != nil {
		return err
	}
	if _, err := a.store.ConnectNumber(ctx, store.Connection{AccountID: acct.ID, WabaID: devNumber.WabaID,
		PhoneNumberID: devNumber.PhoneNumberID, PhoneNumber: devNumber.DisplayPhoneNumber,
		DisplayName: devNumber.VerifiedName, AccessToken: devNumber.AccessToken}); err != nil {
		return err
	}
	if err := restoreSimulatorNumbers(ctx, a.store, sim); err != nil {
		logger.Warn("restoring numbers connected in earlier runs failed", "error", err.Error())
	}
	if err := devSyncTemplates(ctx, a, acct.ID); err != nil {
		logger.Warn("template sync failed", "error", err.Error())
	}
	live, err := createKey(ctx, a.store, acct.ID, "live")
	if err != nil {
		return err
	}
	test, err := createKey(ctx, a.store, acct.ID, "test")
	if err != nil {
		return err
	}
	base := "http://" + cfg.Addr
	fmt.Fprintf(stdout, `
Messaging Gateway (local) — account %d "%s", number %s on the built-in platform simulator (%s)

  live key: %s
  test key: %s

Try it:
  curl -s %s/v1/me -H "Authorization: Bearer %s"
  curl -s %s/v1/templates -H "Authorization: Bearer %s"
  curl -s %s/v1/messages/template -H "Authorization: Bearer %s" \
       -H "Content-Type: application/json" \
       -d '{"destination":"15551234567","template_name":"order_confirmation","body_variables":["Ana","ORD-7781"]}'

The API description: %s/v1/openapi.yaml   (keys are shown once; every run issues new ones)

Play a handset joining the sandbox (number %s); the simulator's sent log shows the reply:
  curl -s %s/_sim/inbound -d '{"phone_number_id":"%s","from":"15557654321","type":"text","payload":{"body":"join %s"}}'
  curl -s %s/_sim/sent

`, acct.ID, acct.Name, devNumber.DisplayPhoneNumber, simURL, live.Key, test.Key,
		base, live.Key, base, live.Key, base, live.Key, base,
		cfg.SandboxPhoneNumber, simURL, cfg.SandboxPhoneID, acct.JoinCode, simURL)
	return a.serve(ctx, nil)
}
