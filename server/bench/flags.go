package bench

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The flags of `gateway bench`.

const benchUsage = `usage: gateway bench [flags]
       gateway bench lifecycle [flags]        (a message's whole life at stepped rates; -h for its flags)
       gateway bench floor-serve [--addr A]   (the floor server; bench starts it itself)

Seeds DATABASE_URL's server (database gateway_bench unless --database-url is given), starts
the platform simulator, the gateway and the floor server on loopback ports, then measures
send (POST /v1/messages/template), send-rich (the same with an image header and a URL button
value, gateway only: the floor has no such send), status (POST /platform/webhook) and poll
(GET /v1/messages/{id}) against the gateway and against the floor, interleaved, and prints
req/s, p50, p99, errors, CPU per request and the ratio gateway/floor.

flags:
`

// benchOptions are the flags of `gateway bench`.
type benchOptions struct {
	Duration    time.Duration
	Warmup      time.Duration
	Concurrency []int
	Messages    int64
	Phases      []string
	Floor       bool
	Gateway     bool
	DatabaseURL string
	LogLevel    string
	ClientProcs int
	KeepLogs    bool
	Rounds      int
}

// parseBenchFlags parses the flags of `gateway bench`; defaultDSN is the database used when
// --database-url is not given.
func parseBenchFlags(args []string, defaultDSN string, out io.Writer) (benchOptions, error) {
	o := benchOptions{}
	fs := flag.NewFlagSet("gateway bench", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { fmt.Fprint(out, benchUsage); fs.PrintDefaults() }
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "measured time of each run")
	fs.DurationVar(&o.Warmup, "warmup", 2*time.Second, "warm-up before each measured run (not counted)")
	conc := fs.String("concurrency", "16,64", "comma-separated numbers of concurrent clients")
	fs.Int64Var(&o.Messages, "messages", 1_000_000, "seeded messages (the table holds at least this many)")
	only := fs.String("only", "send,send-rich,status,poll", "phases to run, comma-separated: send, send-rich, status, poll")
	fs.BoolVar(&o.Floor, "floor", true, "also measure the floor server")
	fs.BoolVar(&o.Gateway, "gateway", true, "measure the gateway")
	fs.StringVar(&o.DatabaseURL, "database-url", defaultDSN, "database to seed and serve from (created and migrated if missing)")
	fs.StringVar(&o.LogLevel, "gateway-log-level", "info", "LOG_LEVEL of the gateway and floor processes")
	fs.IntVar(&o.ClientProcs, "client-procs", 1, "GOMAXPROCS of the load generator while it runs (1 is like wrk -t1)")
	fs.BoolVar(&o.KeepLogs, "keep-logs", false, "keep the child processes' logs (their directory is printed)")
	fs.IntVar(&o.Rounds, "rounds", 1, "repeat each gateway/floor pair this many times back to back; the verdict takes the median ratio")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("bench: unexpected argument %q", fs.Arg(0))
	}
	var err error
	if o.Concurrency, err = parseIntList(*conc); err != nil {
		return o, fmt.Errorf("--concurrency: %w", err)
	}
	if o.Phases, err = parsePhases(*only); err != nil {
		return o, fmt.Errorf("--only: %w", err)
	}
	switch {
	case o.Duration <= 0 || o.Duration > 10*time.Minute:
		return o, fmt.Errorf("--duration must be between 0 and 10m")
	case o.Warmup < 0 || o.Warmup > time.Minute:
		return o, fmt.Errorf("--warmup must be between 0 and 1m")
	case o.Messages < 1 || o.Messages > 50_000_000:
		return o, fmt.Errorf("--messages must be between 1 and 50,000,000")
	case !o.Floor && !o.Gateway:
		return o, fmt.Errorf("nothing to measure: --floor=false and --gateway=false")
	case o.ClientProcs < 1:
		return o, fmt.Errorf("--client-procs must be positive")
	case o.Rounds < 1 || o.Rounds > 20:
		return o, fmt.Errorf("--rounds must be between 1 and 20")
	}
	return o, nil
}

// parseIntList parses "16,64" into positive integers (each at most 1024).
func parseIntList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return nil, fmt.Errorf("want positive integers up to 1024, got %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// parsePhases parses "send,send-rich,status,poll" (any subset, in the given order, no repeats).
func parsePhases(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f != phaseSend && f != phaseSendRich && f != phaseStatus && f != phasePoll {
			return nil, fmt.Errorf("unknown phase %q (send, send-rich, status, poll)", f)
		}
		if slices.Contains(out, f) {
			return nil, fmt.Errorf("phase %q given twice", f)
		}
		out = append(out, f)
	}
	return out, nil
}

// benchDSN returns dsn pointing at the database gateway_bench on the same server.
func benchDSN(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("DATABASE_URL: %w", err)
	}
	u.Path = "/gateway_bench"
	return u.String(), nil
}
