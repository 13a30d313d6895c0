package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"gateway/platform/simulator"
	"gateway/store"
)

// platformSim runs the Cloud API simulator standalone until ctx ends. It starts empty; seed it
// through its control API under /_sim/ (numbers, templates, scripts), or pass --seed to load
// the default local number and templates.
func platformSim(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gateway platform-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", cfg.SimAddr, "listen address (PLATFORM_SIM_ADDR)")
	webhook := fs.String("webhook-url", cfg.SimWebhookURL, "where signed webhooks go (PLATFORM_SIM_WEBHOOK_URL)")
	seed := fs.Bool("seed", false, "register the local development number and default templates")
	workers := fs.Int("webhook-workers", 0, "concurrent webhook POSTs (0 = the simulator's default, 8)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	simCfg := simulator.DefaultConfig()
	simCfg.AppSecret = cfg.PlatformAppSecret
	simCfg.AppID = cfg.PlatformAppID
	simCfg.WebhookURL = *webhook
	simCfg.WebhookWorkers = max(*workers, 0)
	sim := simulator.New(simCfg)
	if *seed {
		seedSimulator(sim)
		seedSandbox(sim, cfg)
	}
	url, err := sim.Start(*addr)
	if err != nil {
		return err
	}
	defer sim.Close()
	cfg.logger(stderr).Info("platform simulator serving", "url", url, "webhook_url", *webhook)
	fmt.Fprintf(stdout, "platform simulator on %s (Graph API under %s/v23.0, control API under %s/_sim/)\n", url, url, url)
	<-ctx.Done()
	return nil
}

// The local development number every fresh `make run` wires to the simulator.
var devNumber = simulator.Number{
	PhoneNumberID:      "106540352242922",
	WabaID:             "102290129340398",
	DisplayPhoneNumber: "15550783881",
	AccessToken:        "local-dev-access-token",
	VerifiedName:       "Local Dev Business",
}

func seedSimulator(sim *simulator.Simulator) {
	sim.AddNumber(devNumber)
	sim.SeedTemplates(devNumber.WabaID, simulator.DefaultTemplates())
	sim.SeedTemplates(devNumber.WabaID, simulator.RichTemplates())
}

// restoreSimulatorNumbers gives a fresh simulator the numbers connected in earlier runs of
// `gateway dev` (through Embedded Signup, say), registered and with the default templates, so
// they keep working after a restart. A number the simulator has already is left alone.
func restoreSimulatorNumbers(ctx context.Context, st *store.Store, sim *simulator.Simulator) error {
	conns, err := st.Connections(ctx, 1000)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, n := range sim.Numbers() {
		known[n.PhoneNumberID] = true
	}
	for _, c := range conns {
		if known[c.PhoneNumberID] {
			continue
		}
		sim.AddNumber(simulator.Number{PhoneNumberID: c.PhoneNumberID, WabaID: c.WabaID, DisplayPhoneNumber: c.PhoneNumber,
			AccessToken: c.AccessToken, VerifiedName: c.DisplayName})
		if len(sim.Templates(c.WabaID)) == 0 {
			sim.SeedTemplates(c.WabaID, simulator.DefaultTemplates())
		}
	}
	return nil
}

// seedSandbox registers the shared sandbox number (SANDBOX_*) on the simulator, so test sends
// to joined handsets and the sandbox's replies go through it. Play a handset with
// POST /_sim/inbound {"phone_number_id": SANDBOX_PHONE_NUMBER_ID, "from": "<digits>",
// "type": "text", "payload": {"body": "join <code>"}}.
func seedSandbox(sim *simulator.Simulator, cfg config) {
	sim.AddNumber(simulator.Number{PhoneNumberID: cfg.SandboxPhoneID, WabaID: "100000000000002",
		DisplayPhoneNumber: cfg.SandboxPhoneNumber, AccessToken: cfg.SandboxAccessToken, VerifiedName: "Gateway Sandbox"})
}
