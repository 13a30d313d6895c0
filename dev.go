package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"gateway/platform/simulator"
	"gateway/store"
)

const devEmail = "dev@localhost"

// The Embedded Signup app and configuration ids `gateway dev` uses when none are set.
const (
	devAppID      = "100000000000000"
	devESConfigID = "local-es-config"
)

// dev is `make run`: it checks that its two ports are free (before anything is created), starts
// the platform simulator in-process, points the gateway at it, seeds (or reuses) a local account
// connected to the simulator's number, issues a fresh live and test key, prints them with first
// requests (and writes them to GATEWAY_DEV_KEYS_FILE when set), and serves.
func dev(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) error {
	logger := cfg.logger(stderr)
	if err := portsFree(map[string]string{"GATEWAY_ADDR": cfg.Addr, "PLATFORM_SIM_ADDR": cfg.SimAddr}); err != nil {
		return err
	}
	switch {
	case len(args) == 1 && args[0] == "--check-ports":
		// make run checks the ports before it starts PostgreSQL or creates a database.
		return nil
	case len(args) > 0:
		return fmt.Errorf("gateway dev: unknown arguments %q (only --check-ports)", args)
	}
	// The same warnings serve logs under GATEWAY_ENV=development: dev is always development.
	for _, p := range cfg.productionProblems() {
		logger.Warn("development setting in use (gateway dev): " + p)
	}
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
		return fmt.Errorf("start the platform simulator on %s (PLATFORM_SIM_ADDR): %w", cfg.SimAddr, err)
	}
	defer sim.Close()
	cfg.PlatformBaseURL = simURL + "/v23.0"
	cfg.PlatformSDKURL = simURL + "/sdk.js"
	// The dashboard over plain http on this machine, open to sign-ups.
	cfg.Dashboard.Development, cfg.Dashboard.SignupOpen = true, true

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
	if cfg.DevKeysFile != "" {
		b, _ := json.Marshal(map[string]any{"base_url": base, "account_id": acct.ID, "live_key": live.Key, "test_key": test.Key, "simulator_url": simURL})
		if err := os.WriteFile(cfg.DevKeysFile, b, 0o600); err != nil {
			return fmt.Errorf("GATEWAY_DEV_KEYS_FILE: %w", err)
		}
	}
	fmt.Fprint(stdout, devBanner(acct.ID, acct.Name, simURL, base, live.Key, test.Key))
	fmt.Fprintf(stdout, `Play a handset joining the sandbox (number %s); the simulator's sent log shows the reply:
  curl -s %s/_sim/inbound -d '{"phone_number_id":"%s","from":"15557654321","type":"text","payload":{"body":"join %s"}}'
  curl -s %s/_sim/sent

`, cfg.SandboxPhoneNumber, simURL, cfg.SandboxPhoneID, acct.JoinCode, simURL)
	return a.serve(ctx, nil)
}

// devBanner is what `gateway dev` prints: the keys and requests that work with each of them.
func devBanner(accountID int64, accountName, simURL, base, live, test string) string {
	return fmt.Sprintf(`
Messaging Gateway (local) — account %d "%s", number %s on the built-in platform simulator (%s)

  live key: %s
  test key: %s

Try it with the live key (sends go to the simulator, which reports sent, delivered and read):
  curl -s %s/v1/me -H "Authorization: Bearer %s"
  curl -s %s/v1/templates -H "Authorization: Bearer %s"
  curl -s %s/v1/messages/template -H "Authorization: Bearer %s" \
       -H "Content-Type: application/json" \
       -d '{"destination":"15551234567","template_name":"order_confirmation","body_variables":["Ana","ORD-7781"]}'
  curl -s %s/v1/messages/MESSAGE_ID -H "Authorization: Bearer %s"     # poll: MESSAGE_ID is data.message_id above

With the test key (nothing live; it sees the three sandbox templates: 3 sandbox_welcome,
2 order_confirmation_update with 2 body variables, 1 otp_login_code with 1):
  curl -s %s/v1/templates -H "Authorization: Bearer %s"
  curl -s %s/v1/messages/template -H "Authorization: Bearer %s" \
       -H "Content-Type: application/json" \
       -d '{"destination":"15551234567","template_name":"order_confirmation_update","body_variables":["Ana","ORD-7781"]}'
  curl -s %s/v1/messages/MESSAGE_ID -H "Authorization: Bearer %s"     # sent, delivered after 2 s, read after 5 s

The API reference: %s/docs    The description: %s/v1/openapi.yaml
Keys are shown once; every run issues new ones.

`, accountID, accountName, devNumber.DisplayPhoneNumber, simURL, live, test,
		base, live, base, live, base, live, base, live,
		base, test, base, test, base, test, base, base)
}

// portsFree fails, naming the variable that moves it, when one of the addresses cannot be
// listened on (another process holds the port, typically).
func portsFree(addrs map[string]string) error {
	var msgs []string
	for _, name := range []string{"GATEWAY_ADDR", "PLATFORM_SIM_ADDR"} {
		addr, ok := addrs[name]
		if !ok {
			continue
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			msgs = append(msgs, fmt.Sprintf("%s is not free (%v); stop what uses it or pick another port, e.g. %s=127.0.0.1:%s",
				addr, rootCause(err), name, suggestPort(name)))
			continue
		}
		ln.Close()
	}
	if len(msgs) > 0 {
		return fmt.Errorf("ports in use; nothing was started or created:\n  %s\n(with make: %s make run)",
			strings.Join(msgs, "\n  "), "GATEWAY_ADDR=127.0.0.1:8090 PLATFORM_SIM_ADDR=127.0.0.1:8091")
	}
	return nil
}

func suggestPort(name string) string {
	if name == "GATEWAY_ADDR" {
		return "8090"
	}
	return "8091"
}

func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}
