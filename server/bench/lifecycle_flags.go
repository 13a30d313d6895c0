package bench

import (
	"flag"
	"fmt"
	"io"
	"time"
)

// The flags of `gateway bench lifecycle`.

const lifecycleUsage = `usage: gateway bench lifecycle [flags]

Runs a message's whole life (send, sent/delivered/read status webhooks from the simulator,
customer webhooks to a loopback receiver) at stepped send rates against a gateway child
process, and prints per step: lifecycles/s, send p50/p99, status-to-webhook lag p50/p99,
the backlog, and CPU per lifecycle split by process.

flags:
`

type lifecycleOptions struct {
	Rates       []int
	Step        time.Duration
	Warmup      time.Duration
	Drain       time.Duration
	Accounts    int
	Clients     int
	SimWorkers  int
	Messages    int64
	DatabaseURL string
	PoolerURL   string
	PoolerPID   int
	LogLevel    string
	KeepLogs    bool
	KeepGoing   bool
}

func parseLifecycleFlags(args []string, defaultDSN string, out io.Writer) (lifecycleOptions, error) {
	o := lifecycleOptions{}
	fs := flag.NewFlagSet("gateway bench lifecycle", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { fmt.Fprint(out, lifecycleUsage); fs.PrintDefaults() }
	rates := fs.String("rates", "100,200,300,400,500", "send rates to step through, lifecycles per second, comma-separated")
	fs.DurationVar(&o.Step, "step", 60*time.Second, "measured time of each rate step")
	fs.DurationVar(&o.Warmup, "warmup", 5*time.Second, "warm-up of each step at its rate (not counted)")
	fs.DurationVar(&o.Drain, "drain", 30*time.Second, "the longest wait for the backlog to drain after a step")
	fs.IntVar(&o.Accounts, "accounts", 4, "accounts sending (the seeded bench account and accounts-1 others), one webhook endpoint each")
	fs.IntVar(&o.Clients, "clients", 64, "connections the load generator sends on (at most this many sends in flight)")
	fs.IntVar(&o.SimWorkers, "sim-webhook-workers", 32, "concurrent status webhook POSTs of the simulator")
	fs.Int64Var(&o.Messages, "messages", 1_000_000, "seeded messages in the bench account")
	fs.StringVar(&o.DatabaseURL, "database-url", defaultDSN, "database to seed and serve from (created and migrated if missing)")
	fs.StringVar(&o.PoolerURL, "pooler-url", "", "a transaction pooler (PgBouncer) in front of --database-url's database: the gateway's DATABASE_URL, with --database-url as DATABASE_DIRECT_URL")
	fs.IntVar(&o.PoolerPID, "pooler-pid", 0, "the process id of the pooler of --pooler-url, whose CPU per lifecycle is then reported (pgbouncer)")
	fs.StringVar(&o.LogLevel, "gateway-log-level", "warn", "LOG_LEVEL of the child processes")
	fs.BoolVar(&o.KeepLogs, "keep-logs", false, "keep the child processes' logs (their directory is printed)")
	fs.BoolVar(&o.KeepGoing, "keep-going", false, "run every rate step even after one is not sustained")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("bench lifecycle: unexpected argument %q", fs.Arg(0))
	}
	var err error
	if o.Rates, err = parseIntList(*rates); err != nil {
		return o, fmt.Errorf("--rates: %w", err)
	}
	switch {
	case o.Step < time.Second || o.Step > 10*time.Minute:
		return o, fmt.Errorf("--step must be between 1s and 10m")
	case o.Warmup < 0 || o.Warmup > time.Minute:
		return o, fmt.Errorf("--warmup must be between 0 and 1m")
	case o.Drain < time.Second || o.Drain > 5*time.Minute:
		return o, fmt.Errorf("--drain must be between 1s and 5m")
	case o.Accounts < 1 || o.Accounts > 50:
		return o, fmt.Errorf("--accounts must be between 1 and 50")
	case o.Clients < 1 || o.Clients > 1024:
		return o, fmt.Errorf("--clients must be between 1 and 1024")
	case o.SimWorkers < 1 || o.SimWorkers > 512:
		return o, fmt.Errorf("--sim-webhook-workers must be between 1 and 512")
	case o.PoolerPID < 0:
		return o, fmt.Errorf("--pooler-pid must be a process id")
	case o.PoolerPID > 0 && o.PoolerURL == "":
		return o, fmt.Errorf("--pooler-pid needs --pooler-url")
	case o.Messages < 1 || o.Messages > 50_000_000:
		return o, fmt.Errorf("--messages must be between 1 and 50,000,000")
	}
	return o, nil
}
