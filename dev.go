package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"gateway/platform/simulator"
	"gateway/server/dashboard"
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
	if !cfg.LogLevelSet {
		// One line per request would scroll the banner's keys away: warnings only, unless
		// LOG_LEVEL says otherwise.
		cfg.LogLevel = slog.LevelWarn
	}
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
	// A live send's statuses arrive as a handset's would, a few seconds apart, so that polling
	// until read shows each step (PLATFORM_SIM_DELAYS).
	simCfg.SentDelay, simCfg.DeliveredDelay, simCfg.ReadDelay = cfg.SimDelays[0], cfg.SimDelays[1], cfg.SimDelays[2]
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
	// The dashboard over plain http on this machine, open to sign-ups; webhook receivers on
	// this machine (loopback, plain http) are allowed, for a local receiver.
	cfg.Dashboard.Development, cfg.Dashboard.SignupOpen = true, true
	cfg.WebhookAllowPrivate, cfg.Dashboard.WebhookAllowPrivate = true, true

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
	password, err := devSignIn(ctx, a.store, acct.ID)
	if err != nil {
		return err
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
	fmt.Fprint(stdout, devBanner(acct.ID, acct.Name, simURL, base, live.Key, test.Key, password, cfg.SimDelays))
	fmt.Fprintf(stdout, `Play a handset joining the sandbox (number %s); the simulator's sent log shows the reply:
  curl -s %s/_sim/inbound -d '{"phone_number_id":"%s","from":"15557654321","type":"text","payload":{"body":"join %s"}}'
  curl -s %s/_sim/sent

`, cfg.SandboxPhoneNumber, simURL, cfg.SandboxPhoneID, acct.JoinCode, simURL)
	return a.serve(ctx, nil)
}

// devSignIn makes the seeded account's owner a dashboard user, dev@localhost, with a new
// generated password each run (printed once, like the keys; the user's other sessions end),
// and returns that password.
func devSignIn(ctx context.Context, st *store.Store, accountID int64) (string, error) {
	password, err := dashboard.NewPassword()
	if err != nil {
		return "", err
	}
	hash, err := dashboard.HashPassword(password)
	if err != nil {
		return "", err
	}
	u, err := st.UserByEmail(ctx, devEmail)
	if errors.Is(err, store.ErrNotFound) {
		_, err = st.CreateUser(ctx, accountID, devEmail, hash, store.RoleOwner)
		return password, err
	}
	if err != nil {
		return "", err
	}
	ms, err := st.MembershipsByUser(ctx, u.ID)
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(ms, func(m store.Membership) bool { return m.AccountID == accountID }) {
		return "", fmt.Errorf("the dashboard user %s exists but is not a member of the local account %d: drop the database (make run makes it anew) or choose another DATABASE_URL", devEmail, accountID)
	}
	return password, st.SetUserPassword(ctx, u.ID, hash, nil)
}

// devBanner is what `gateway dev` prints: the dashboard's address with a sign-in for the
// account, its keys as shell lines to paste, and requests that work as pasted with each key.
func devBanner(accountID int64, accountName, simURL, base, live, test, password string, delays [3]time.Duration) string {
	return fmt.Sprintf(`
Messaging Gateway (local) — account %d "%s", number %s on the built-in platform simulator (%s)

Dashboard: %s/dashboard
  sign in as %s with the password %s

Keys and password are shown once; every run issues new ones. Paste these lines into your shell:
  export LIVE=%s
  export TEST=%s

With the live key, sends go to the simulator, which reports sent after %s, delivered after %s
and read after %s:
  curl -s %s/v1/me -H "Authorization: Bearer $LIVE"
  curl -s %s/v1/templates -H "Authorization: Bearer $LIVE"
  MESSAGE_ID=$(curl -s %s/v1/messages/template -H "Authorization: Bearer $LIVE" \
       -H "Content-Type: application/json" \
       -d '{"destination":"15551234567","template_name":"order_confirmation","body_variables":["Ana","ORD-7781"]}' \
       | grep -o '"message_id":[0-9]*' | cut -d: -f2); echo "message $MESSAGE_ID"
  curl -s %s/v1/messages/$MESSAGE_ID -H "Authorization: Bearer $LIVE"     # again: its status moves to read

With the test key nothing goes live; it sees the three sandbox templates (sandbox_welcome,
order_confirmation_update with 2 body variables, otp_login_code with 1):
  curl -s %s/v1/messages/template -H "Authorization: Bearer $TEST" \
       -H "Content-Type: application/json" \
       -d '{"destination":"15551234567","template_name":"order_confirmation_update","body_variables":["Ana","ORD-7781"]}'

Webhooks to this machine are allowed. Start a receiver, then add its address on the
dashboard's Webhooks page and press "Send test event":
  bin/gateway receive --addr 127.0.0.1:9000      # prints every event it receives

The API reference: %s/docs    The description: %s/v1/openapi.yaml
Request logs: LOG_LEVEL=info make run

`, accountID, accountName, devNumber.DisplayPhoneNumber, simURL,
		base, devEmail, password, live, test,
		delays[0], delays[1], delays[2],
		base, base, base, base, base, base, base)
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
