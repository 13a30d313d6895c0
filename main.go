// Command gateway is the messaging gateway: the API server, its migrations, the operator's
// admin commands and the platform simulator, in one binary.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"gateway/server/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}

const usage = `usage: gateway <command>

  serve          the API, the platform webhook and the background workers
  dev            serve with an in-process platform simulator and a seeded local account
  migrate        up | down N | version | force V
  admin ...      operator commands (gateway admin help)
  platform-sim   the WhatsApp Cloud API simulator as a standalone server
  bench          the load tool (gateway bench -h)
  receive        a webhook receiver for this machine: prints each event (gateway receive -h)
`

// run is the whole program; main only supplies the process's environment.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("no command given")
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	switch args[0] {
	case "serve":
		return serve(ctx, cfg, stdout, stderr, nil)
	case "dev":
		return dev(ctx, cfg, args[1:], stdout, stderr)
	case "migrate":
		return migrateCmd(cfg, args[1:], stdout)
	case "admin":
		return admin(ctx, cfg, args[1:], stdout, stderr)
	case "platform-sim":
		return platformSim(ctx, cfg, args[1:], stdout, stderr)
	case "receive":
		return receive(ctx, args[1:], stdout, stderr)
	case "bench":
		return bench.Run(ctx, cfg.benchConfig(), args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
