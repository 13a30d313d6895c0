package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"gateway/platform/simulator"
	"gateway/platform/whatsapp"
	"gateway/store"
)

// `gateway bench` is the load tool. It seeds a dedicated database, starts the platform
// simulator, the gateway (`gateway serve`) and the floor server (`gateway bench floor-serve`,
// bench_floor.go) as child processes on loopback ports, then drives each hot path against
// the gateway and against the floor, interleaved, with a closed-loop generator (N clients,
// kept-alive connections, warm-up, then a measured run), and prints requests per second,
// p50/p99 latency, errors and the ratio gateway/floor. Every child is stopped at the end and
// on Ctrl-C; every phase is bounded in time.

const benchUsage = `usage: gateway bench [flags]
       gateway bench floor-serve [--addr A]   (the floor server; bench starts it itself)

Seeds DATABASE_URL's server (database gateway_bench unless --database-url is given), starts
the platform simulator, the gateway and the floor server on loopback ports, then measures
send (POST /v1/messages/template), status (POST /platform/webhook) and poll
(GET /v1/messages/{id}) against the gateway and against the floor, interleaved, and prints
req/s, p50, p99, errors and the ratio gateway/floor.

flags:
`

// benchAccountEmail names the account the bench seeds and the floor serves.
const benchAccountEmail = "bench@localhost"

// benchNumber is the bench account's number on the simulator.
var benchNumber = simulator.Number{
	PhoneNumberID:      "109000000000001",
	WabaID:             "109000000000099",
	DisplayPhoneNumber: "15550100001",
	AccessToken:        "bench-access-token",
	VerifiedName:       "Bench Business",
}

// benchTemplate is the approved template every bench send uses: the simulator's default
// order_confirmation (two body variables).
var benchTemplate = func() store.BenchTemplate {
	t := store.BenchTemplate{PlatformID: "1094411223344001", Name: "order_confirmation", Language: "en_US",
		Category: "UTILITY", BodyParams: 2}
	for _, st := range simulator.DefaultTemplates() {
		if st.Name == t.Name && st.Language == t.Language {
			t.PlatformID, t.Category = st.ID, st.Category
			t.Components, _ = json.Marshal(st.Components)
		}
	}
	return t
}()

// Phases, in the order they run by default.
const (
	phaseSend   = "send"
	phaseStatus = "status"
	phasePoll   = "poll"
)

// Targets.
const (
	targetGateway = "gateway"
	targetFloor   = "floor"
)

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
	only := fs.String("only", "send,status,poll", "phases to run, comma-separated: send, status, poll")
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

// parsePhases parses "send,status,poll" (any subset, in the given order, no repeats).
func parsePhases(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f != phaseSend && f != phaseStatus && f != phasePoll {
			return nil, fmt.Errorf("unknown phase %q (send, status, poll)", f)
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

// bench is `gateway bench`: the load tool, or with "floor-serve" the floor server.
func bench(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "floor-serve" {
		return benchFloorServe(ctx, cfg, args[1:], stdout)
	}
	def, err := benchDSN(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	opts, err := parseBenchFlags(args, def, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	return runBench(ctx, cfg, opts, stdout, stderr)
}

// benchRig is everything a bench run drives: the store over the bench database, the seeded
// ids, the live key, and the child processes.
type benchRig struct {
	cfg      config
	opts     benchOptions
	store    *store.Store
	seed     store.BenchSeed
	ids      store.BenchIDs
	key      string
	simURL   string
	targets  map[string]*benchProc // gateway, floor
	procs    []*benchProc          // every child, in start order
	logDir   string
	log      io.Writer
	cleanups []func()
}

func runBench(ctx context.Context, cfg config, opts benchOptions, stdout, stderr io.Writer) error {
	runs := len(opts.Phases) * len(opts.Concurrency) * opts.Rounds
	if opts.Floor && opts.Gateway {
		runs *= 2
	}
	// Bound the whole command: seeding, starts, and every run with its reset and settling.
	budget := 20*time.Minute + time.Duration(runs)*(opts.Warmup+opts.Duration+90*time.Second)
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()

	started := time.Now()
	fmt.Fprintf(stdout, "$ %s\n", commandLine(os.Args))
	fmt.Fprintf(stdout, "started %s on %d CPUs, load average %s\n", started.Format(time.RFC3339), runtime.NumCPU(), loadAverage())

	rig := &benchRig{cfg: cfg, opts: opts, targets: map[string]*benchProc{}, log: stderr}
	defer rig.close()
	if err := rig.prepareDatabase(ctx); err != nil {
		return err
	}
	if err := rig.startProcesses(ctx); err != nil {
		return err
	}
	size, err := rig.store.BenchDataSize(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "database %s: PostgreSQL %s, messages %s rows, contacts %s rows (bench account %d, %s seeded messages)\n",
		redactDSN(opts.DatabaseURL), size.ServerVersion, thousands(size.Messages), thousands(size.Contacts),
		rig.seed.AccountID, thousands(rig.seed.Seeded))
	rig.preflight(ctx)

	var rows []runStats
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, phase := range opts.Phases {
		for _, c := range opts.Concurrency {
			for round := 1; round <= opts.Rounds; round++ {
				for _, target := range []string{targetGateway, targetFloor} {
					if rig.targets[target] == nil || ctx.Err() != nil {
						continue
					}
					row, err := rig.run(ctx, phase, c, target)
					if err != nil {
						fmt.Fprintf(stderr, "bench: %s c=%d %s: %v\n", phase, c, target, err)
						continue
					}
					row.Round = round
					rows = append(rows, row)
					fmt.Fprintf(stderr, "  %-6s c=%-3d %-7s %8.0f req/s  p50 %-8s p99 %-8s errors %d\n", phase, c, target,
						row.PerSec, fmtDur(row.P50), fmtDur(row.P99), row.Errors)
				}
			}
		}
	}
	fmt.Fprintf(stdout, "\n%s\n", formatReport(rows, opts.Duration, opts.Warmup))
	if samples := errorSamples(rows); samples != "" {
		fmt.Fprintf(stdout, "errors seen (first distinct answers):\n%s\n", samples)
	}
	fmt.Fprintf(stdout, "finished in %s\n", time.Since(started).Round(time.Second))
	if opts.KeepLogs {
		fmt.Fprintf(stdout, "child logs kept in %s\n", rig.logDir)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("bench stopped early: %w", context.Cause(ctx))
	}
	return nil
}

// prepareDatabase creates, migrates and seeds the bench database and issues a live key.
func (r *benchRig) prepareDatabase(ctx context.Context) error {
	created, err := store.EnsureDatabase(ctx, r.opts.DatabaseURL)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(r.log, "bench: created database %s\n", redactDSN(r.opts.DatabaseURL))
	}
	dbCfg := r.cfg
	dbCfg.DatabaseURL = r.opts.DatabaseURL
	if err := migrateUp(dbCfg); err != nil {
		return err
	}
	db, err := store.Open(ctx, r.opts.DatabaseURL, 4)
	if err != nil {
		return err
	}
	st, err := store.New(db, r.cfg.SecretKey)
	if err != nil {
		db.Close()
		return err
	}
	r.store = st
	acct, err := st.AccountByEmail(ctx, benchAccountEmail)
	if errors.Is(err, store.ErrNotFound) {
		acct, err = createAccount(ctx, st, "Bench", benchAccountEmail)
	}
	if err != nil {
		return fmt.Errorf("bench account: %w", err)
	}
	if _, err := st.ConnectNumber(ctx, store.Connection{AccountID: acct.ID, WabaID: benchNumber.WabaID,
		PhoneNumberID: benchNumber.PhoneNumberID, PhoneNumber: benchNumber.DisplayPhoneNumber,
		DisplayName: benchNumber.VerifiedName, AccessToken: benchNumber.AccessToken}); err != nil {
		return fmt.Errorf("bench number: %w", err)
	}
	t0 := time.Now()
	r.seed, err = st.SeedBenchData(ctx, acct.ID, benchTemplate, r.opts.Messages, func(done, total int64) {
		fmt.Fprintf(r.log, "bench: seeded %s of %s messages (%s)\n", thousands(done), thousands(total), time.Since(t0).Round(time.Second))
	})
	if err != nil {
		return err
	}
	if r.ids, err = st.BenchSeededIDs(ctx, acct.ID); err != nil {
		return err
	}
	key, err := createKey(ctx, st, acct.ID, "live")
	if err != nil {
		return err
	}
	r.key = key.Key
	keyID := key.ID
	r.onClose(func() { st.RevokeAPIKey(context.Background(), keyID) })
	return nil
}

// startProcesses starts the simulator, then the gateway and the floor, each on a free
// loopback port, and waits until each answers.
func (r *benchRig) startProcesses(ctx context.Context) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if r.logDir, err = os.MkdirTemp("", "gateway-bench-"); err != nil {
		return err
	}
	simAddr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	env := r.childEnv(simAddr)
	sim, err := r.start("platform-sim", exe, []string{"platform-sim", "--addr", simAddr, "--webhook-url="}, env)
	if err != nil {
		return err
	}
	r.simURL = "http://" + simAddr
	if err := waitReady(ctx, sim, r.simURL+"/_sim/config", 30*time.Second); err != nil {
		return err
	}
	// Status webhooks stay off: the bench itself posts the statuses it measures, so a send
	// run measures sends only.
	for _, c := range []struct {
		path string
		body any
	}{
		{"/_sim/numbers", benchNumber},
		{"/_sim/templates", map[string]any{"waba_id": benchNumber.WabaID, "defaults": true}},
		{"/_sim/config", map[string]any{"webhook_url": ""}},
	} {
		if err := postJSON(ctx, r.simURL+c.path, c.body); err != nil {
			return fmt.Errorf("simulator %s: %w", c.path, err)
		}
	}
	for _, target := range []string{targetGateway, targetFloor} {
		if (target == targetGateway && !r.opts.Gateway) || (target == targetFloor && !r.opts.Floor) {
			continue
		}
		addr, err := freeLoopbackAddr()
		if err != nil {
			return err
		}
		args, health := []string{"serve"}, "/readyz"
		if target == targetFloor {
			args, health = []string{"bench", "floor-serve", "--addr", addr}, "/healthz"
		}
		p, err := r.start(target, exe, args, append(env, "GATEWAY_ADDR="+addr))
		if err != nil {
			return err
		}
		p.url, p.addr = "http://"+addr, addr
		if err := waitReady(ctx, p, p.url+health, 2*time.Minute); err != nil {
			return err
		}
		r.targets[target] = p
	}
	return nil
}

// childEnv is the environment of every child: this process's, pointed at the bench
// database, the simulator and loopback.
func (r *benchRig) childEnv(simAddr string) []string {
	return append(os.Environ(),
		"DATABASE_URL="+r.opts.DatabaseURL,
		"PLATFORM_BASE_URL=http://"+simAddr+"/v23.0",
		"PLATFORM_APP_SECRET="+r.cfg.PlatformAppSecret,
		"GATEWAY_SECRET_KEY="+hex.EncodeToString(r.cfg.SecretKey),
		"GATEWAY_MIGRATE=true",
		"GATEWAY_DB_POOL="+strconv.Itoa(r.cfg.DBPool),
		"PLATFORM_TIMEOUT="+r.cfg.PlatformTimeout.String(),
		"LOG_LEVEL="+r.opts.LogLevel,
		"PLATFORM_SIM_WEBHOOK_URL=",
	)
}

func (r *benchRig) start(name, exe string, args, env []string) (*benchProc, error) {
	p, err := startBenchProc(name, exe, args, env, r.logDir)
	if err != nil {
		return nil, err
	}
	r.procs = append(r.procs, p)
	return p, nil
}

// onClose registers cleanup run by close, last registered first.
func (r *benchRig) onClose(f func()) { r.cleanups = append(r.cleanups, f) }

// close stops every child (the last started first), runs the cleanups and removes the logs
// unless they are to be kept.
func (r *benchRig) close() {
	for i := len(r.procs) - 1; i >= 0; i-- {
		r.procs[i].stop(15 * time.Second)
	}
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	if r.store != nil {
		db := r.store.DB()
		r.store.Close()
		db.Close()
	}
	if r.logDir != "" && !r.opts.KeepLogs {
		os.RemoveAll(r.logDir)
	}
}

// ---- requests ----

// requestMaker appends one complete HTTP/1.1 request of a phase to dst.
type requestMaker func(dst []byte, rng *rand.Rand) []byte

// maker returns the request builder of phase against the target listening on addr.
func (r *benchRig) maker(phase, addr string) requestMaker {
	auth := "Authorization: Bearer " + r.key
	secret := []byte(r.cfg.PlatformAppSecret)
	switch phase {
	case phaseSend:
		return func(dst []byte, rng *rand.Rand) []byte {
			return appendRequest(dst, "POST", addr, "/v1/messages/template", sendBody(rng), auth, "Content-Type: application/json")
		}
	case phaseStatus:
		seeded := r.seed.Seeded
		return func(dst []byte, rng *rand.Rand) []byte {
			n := rng.Int64N(seeded) + 1
			body := statusBody(benchNumber, store.BenchWamidPrefix+strconv.FormatInt(n, 10), "delivered",
				time.Now().Unix(), store.BenchContactMobile(store.BenchMessageContact(n)))
			return appendRequest(dst, "POST", addr, "/platform/webhook", body, "Content-Type: application/json",
				whatsapp.SignatureHeaderName+": "+whatsapp.SignatureHeader(secret, body))
		}
	default:
		ids := r.ids
		return func(dst []byte, rng *rand.Rand) []byte {
			var id int64
			if ids.IDs != nil {
				id = ids.IDs[rng.IntN(len(ids.IDs))]
			} else {
				id = ids.Min + rng.Int64N(ids.Max-ids.Min+1)
			}
			return appendRequest(dst, "GET", addr, "/v1/messages/"+strconv.FormatInt(id, 10), nil, auth)
		}
	}
}

// appendRequest appends an HTTP/1.1 request with the given header lines ("Name: value") and
// body (a Content-Length is added when there is one) to dst.
func appendRequest(dst []byte, method, host, path string, body []byte, headers ...string) []byte {
	dst = append(dst, method...)
	dst = append(dst, ' ')
	dst = append(dst, path...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, host...)
	dst = append(dst, "\r\nUser-Agent: gateway-bench\r\n"...)
	for _, h := range headers {
		dst = append(dst, h...)
		dst = append(dst, "\r\n"...)
	}
	if body != nil {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(body)), 10)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	return append(dst, body...)
}

// sendBody is a send of the bench template to a random eleven-digit destination (almost
// always a new contact, the expensive path) with two body variables.
func sendBody(rng *rand.Rand) []byte {
	dest := 10_000_000_000 + rng.Int64N(10_000_000_000)
	order := rng.IntN(1_000_000)
	return fmt.Appendf(nil, `{"destination":"%d","template_name":%q,"language":%q,"name":"Bench User","body_variables":["Ana","ORD-%06d"]}`,
		dest, benchTemplate.Name, benchTemplate.Language, order)
}

// statusBody is a platform status webhook for one message, shaped as the Cloud API sends it.
func statusBody(n simulator.Number, wamid, status string, unix int64, recipient string) []byte {
	return fmt.Appendf(nil, `{"object":"whatsapp_business_account","entry":[{"id":%q,"changes":[{"value":{"messaging_product":"whatsapp",`+
		`"metadata":{"display_phone_number":%q,"phone_number_id":%q},"statuses":[{"id":%q,"status":%q,"timestamp":"%d","recipient_id":%q}]},"field":"messages"}]}]}`,
		n.WabaID, n.DisplayPhoneNumber, n.PhoneNumberID, wamid, status, unix, recipient)
}

// preflight sends one request of each phase to each target and warns about any that is not
// answered 2xx, so a broken endpoint shows before the timed runs.
func (r *benchRig) preflight(ctx context.Context) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, phase := range r.opts.Phases {
		for _, target := range []string{targetGateway, targetFloor} {
			p := r.targets[target]
			if p == nil || ctx.Err() != nil {
				continue
			}
			c := &httpConn{addr: p.addr, deadline: time.Now().Add(15 * time.Second)}
			code, body, err := c.do(r.maker(phase, p.addr)(nil, rng))
			c.close()
			switch {
			case err != nil:
				fmt.Fprintf(r.log, "bench: preflight %s %s: %v\n", target, phase, err)
			case code/100 != 2:
				fmt.Fprintf(r.log, "bench: preflight %s %s answered %d: %s\n", target, phase, code, oneLine(body, 300))
			}
		}
	}
}

// run resets what the phase needs, waits for the database to settle, and measures one
// phase at one concurrency against one target.
func (r *benchRig) run(ctx context.Context, phase string, c int, target string) (runStats, error) {
	p := r.targets[target]
	if phase == phaseStatus {
		if err := r.store.BenchResetStatuses(ctx, r.seed.AccountID); err != nil {
			return runStats{}, err
		}
	}
	if err := r.store.BenchCheckpoint(ctx); err != nil {
		fmt.Fprintf(r.log, "bench: checkpoint: %v (going on)\n", err)
	}
	settle := r.settle(ctx, 30*time.Second)

	var before, after cpuSample
	prev := runtime.GOMAXPROCS(r.opts.ClientProcs)
	res := runLoad(ctx, p.addr, loadSpec{
		Concurrency: c, Warmup: r.opts.Warmup, Duration: r.opts.Duration,
		NewRequest:     r.maker(phase, p.addr),
		OnMeasureStart: func() { before = sampleCPU(p.pid()) },
		OnMeasureEnd:   func() { after = sampleCPU(p.pid()) },
	})
	runtime.GOMAXPROCS(prev)
	if ctx.Err() != nil {
		return runStats{}, ctx.Err()
	}
	s := summarize(res)
	s.Phase, s.Concurrency, s.Target, s.Settle = phase, c, target, settle
	s.ServerCPU, s.ClientCPU, s.Busy, s.Steal = cpuPerRequest(before, after, s.OK)
	return s, nil
}

// settle waits (at most max) until no other session is running a statement in the bench
// database, and returns how long that took.
func (r *benchRig) settle(ctx context.Context, max time.Duration) time.Duration {
	start := time.Now()
	quiet := 0
	for time.Since(start) < max && ctx.Err() == nil {
		n, err := r.store.BenchBusyBackends(ctx)
		if err != nil {
			break
		}
		if n == 0 {
			quiet++
			if quiet >= 3 {
				break
			}
		} else {
			quiet = 0
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

// ---- the load generator ----

// loadSpec is one closed-loop run: Concurrency clients each send a request, wait for the
// answer and send the next, for Warmup (not counted) then Duration (measured).
type loadSpec struct {
	Concurrency      int
	Warmup, Duration time.Duration
	NewRequest       requestMaker
	// OnMeasureStart and OnMeasureEnd, when set, are called at the edges of the measured
	// window (for CPU samples).
	OnMeasureStart, OnMeasureEnd func()
}

// loadResult is what the measured window saw. A request counts when it started and ended
// inside the window; Latencies are those of the 2xx answers.
type loadResult struct {
	OK        int
	Failed    int // non-2xx answers and transport errors
	Latencies []time.Duration
	Window    time.Duration
	Samples   map[string]int // first distinct failures → count
}

// runLoad runs spec against the server at addr and returns the measured window's results.
// Each client owns one kept-alive connection (reopened after an error). It returns early
// (with what it has) when ctx ends; no request outlives the window by more than 30 s.
func runLoad(ctx context.Context, addr string, spec loadSpec) loadResult {
	start := time.Now().Add(spec.Warmup)
	end := start.Add(spec.Duration)
	rctx, cancel := context.WithDeadline(ctx, end.Add(30*time.Second))
	defer cancel()

	var edges sync.WaitGroup
	edges.Add(1)
	go func() {
		defer edges.Done()
		for _, e := range []struct {
			at time.Time
			f  func()
		}{{start, spec.OnMeasureStart}, {end, spec.OnMeasureEnd}} {
			t := time.NewTimer(time.Until(e.at))
			select {
			case <-t.C:
			case <-rctx.Done():
				t.Stop()
				return
			}
			if e.f != nil {
				e.f()
			}
		}
	}()

	results := make([]loadResult, spec.Concurrency)
	var wg sync.WaitGroup
	seed := uint64(time.Now().UnixNano())
	for i := range spec.Concurrency {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res := &results[i]
			res.Samples = map[string]int{}
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			conn := &httpConn{addr: addr, deadline: end.Add(30 * time.Second)}
			defer conn.close()
			var buf []byte
			for {
				t0 := time.Now()
				if !t0.Before(end) || rctx.Err() != nil {
					return
				}
				buf = spec.NewRequest(buf[:0], rng)
				code, body, err := conn.do(buf)
				t1 := time.Now()
				if t0.Before(start) || t1.After(end) {
					continue
				}
				if err == nil && code/100 == 2 {
					res.OK++
					res.Latencies = append(res.Latencies, t1.Sub(t0))
					continue
				}
				res.Failed++
				failure := "transport: " + fmt.Sprint(err)
				if err == nil {
					failure = strconv.Itoa(code) + " " + oneLine(body, 160)
				}
				if _, seen := res.Samples[failure]; seen || len(res.Samples) < 5 {
					res.Samples[failure]++
				}
			}
		}(i)
	}
	wg.Wait()
	cancel()
	edges.Wait()
	out := mergeResults(results)
	out.Window = spec.Duration
	return out
}

// httpConn is one load client's kept-alive HTTP/1.1 connection. It has no pool and starts
// no goroutines (unlike http.Transport, which costs several times wrk's CPU per request), so
// the generator takes as little of the shared CPU as it can.
type httpConn struct {
	addr     string
	deadline time.Time // for every read and write
	conn     net.Conn
	br       *bufio.Reader
	used     bool // a request went through this connection
}

// do writes one complete request and reads the answer. It returns the status code and, for
// a non-2xx answer, the first 4 KiB of the body. A request that fails on a reused
// connection before any answer is retried once on a new one (the server may have closed it).
func (c *httpConn) do(req []byte) (int, []byte, error) {
	for attempt := 0; ; attempt++ {
		if c.conn == nil {
			conn, err := net.DialTimeout("tcp", c.addr, 5*time.Second)
			if err != nil {
				return 0, nil, err
			}
			conn.SetDeadline(c.deadline)
			c.conn, c.used = conn, false
			if c.br == nil {
				c.br = bufio.NewReaderSize(conn, 16<<10)
			} else {
				c.br.Reset(conn)
			}
		}
		reused := c.used
		c.used = true
		if _, err := c.conn.Write(req); err != nil {
			c.close()
			if reused && attempt == 0 {
				continue
			}
			return 0, nil, err
		}
		resp, err := http.ReadResponse(c.br, nil)
		if err != nil {
			c.close()
			if reused && attempt == 0 && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)) {
				continue
			}
			return 0, nil, err
		}
		var snippet []byte
		if resp.StatusCode/100 != 2 {
			snippet, _ = io.ReadAll(io.LimitReader(resp.Body, 4096))
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.Close {
			c.close()
		}
		return resp.StatusCode, snippet, err
	}
}

func (c *httpConn) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// mergeResults adds up the clients' results.
func mergeResults(parts []loadResult) loadResult {
	var out loadResult
	out.Samples = map[string]int{}
	n := 0
	for _, p := range parts {
		n += len(p.Latencies)
	}
	out.Latencies = make([]time.Duration, 0, n)
	for _, p := range parts {
		out.OK += p.OK
		out.Failed += p.Failed
		out.Latencies = append(out.Latencies, p.Latencies...)
		for k, v := range p.Samples {
			out.Samples[k] += v
		}
	}
	return out
}

// ---- figures and the report ----

// runStats is one row of the report.
type runStats struct {
	Phase       string
	Concurrency int
	Target      string
	PerSec      float64 // 2xx answers per second of the measured window
	P50, P99    time.Duration
	OK, Errors  int
	ServerCPU   time.Duration // the target process's CPU per 2xx answer (0 = unknown)
	ClientCPU   time.Duration // the load generator's CPU per 2xx answer (0 = unknown)
	Busy        float64       // the machine's busy share during the window, steal included (0..1; -1 = unknown)
	Steal       float64       // the share the hypervisor took (0..1; -1 = unknown)
	Round       int           // 1-based; rows of one round pair up for the ratio
	Settle      time.Duration // waiting for the database to be quiet before the run
	Samples     map[string]int
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of sorted durations, 0
// for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// summarize turns a run's results into a report row (Phase, Concurrency and Target are left
// to the caller). It sorts res.Latencies.
func summarize(res loadResult) runStats {
	slices.Sort(res.Latencies)
	s := runStats{OK: res.OK, Errors: res.Failed, Samples: res.Samples, Busy: -1, Steal: -1,
		P50: percentile(res.Latencies, 50), P99: percentile(res.Latencies, 99)}
	if res.Window > 0 {
		s.PerSec = float64(res.OK) / res.Window.Seconds()
	}
	return s
}

// ratio returns gateway/floor req/s for the phase at concurrency c in one round, and false
// when either row is missing or the floor did nothing.
func ratio(rows []runStats, phase string, c, round int) (float64, bool) {
	var ours, floor *runStats
	for i := range rows {
		if rows[i].Phase != phase || rows[i].Concurrency != c || rows[i].Round != round {
			continue
		}
		switch rows[i].Target {
		case targetGateway:
			ours = &rows[i]
		case targetFloor:
			floor = &rows[i]
		}
	}
	if ours == nil || floor == nil || floor.PerSec <= 0 {
		return 0, false
	}
	return ours.PerSec / floor.PerSec, true
}

// medianRatio returns the median over the rounds of ratio(phase, c), and false when no round
// has one.
func medianRatio(rows []runStats, phase string, c int) (float64, bool) {
	var rs []float64
	seen := map[int]bool{}
	for _, r := range rows {
		if r.Phase == phase && r.Concurrency == c && !seen[r.Round] {
			seen[r.Round] = true
			if v, ok := ratio(rows, phase, c, r.Round); ok {
				rs = append(rs, v)
			}
		}
	}
	if len(rs) == 0 {
		return 0, false
	}
	slices.Sort(rs)
	if len(rs)%2 == 1 {
		return rs[len(rs)/2], true
	}
	return (rs[len(rs)/2-1] + rs[len(rs)/2]) / 2, true
}

// benchGoal is the ratio the messaging issue asks of each path.
const benchGoal = 0.6

// formatReport renders the rows as a table, with the ratio gateway/floor on each gateway row,
// and a verdict per phase against benchGoal (the median over rounds when there are several).
func formatReport(rows []runStats, duration, warmup time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "closed loop, %s warm-up + %s measured per row; req/s counts 2xx answers; latency of 2xx answers;\n", warmup, duration)
	b.WriteString("CPU/req = CPU time of the target process (srv) and of this load generator (gen) per 2xx answer;\n")
	b.WriteString("busy = machine CPU busy during the row, steal = share taken by the hypervisor (both include other users' work)\n")
	rounds := 1
	for _, r := range rows {
		rounds = max(rounds, r.Round)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "phase\tclients\ttarget\treq/s\tp50\tp99\terrors\tsrv CPU/req\tgen CPU/req\tbusy\tsteal\tours/floor\t"
	if rounds > 1 {
		head = "round\t" + head
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		rat := ""
		if r.Target == targetGateway {
			if v, ok := ratio(rows, r.Phase, r.Concurrency, r.Round); ok {
				rat = fmt.Sprintf("%.2fx", v)
			}
		}
		if rounds > 1 {
			fmt.Fprintf(tw, "%d\t", r.Round)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", r.Phase, r.Concurrency, r.Target,
			thousands(int64(math.Round(r.PerSec))), fmtDur(r.P50), fmtDur(r.P99), r.Errors,
			fmtMicros(r.ServerCPU), fmtMicros(r.ClientCPU), fmtShare(r.Busy), fmtShare(r.Steal), rat)
	}
	tw.Flush()
	var verdicts []string
	for _, phase := range []string{phaseSend, phaseStatus, phasePoll} {
		var parts []string
		worst, any := math.Inf(1), false
		var concs []int
		for _, r := range rows {
			if r.Phase == phase && !slices.Contains(concs, r.Concurrency) {
				concs = append(concs, r.Concurrency)
			}
		}
		for _, c := range concs {
			if v, ok := medianRatio(rows, phase, c); ok {
				parts = append(parts, fmt.Sprintf("c=%d %.2fx", c, v))
				worst, any = min(worst, v), true
			}
		}
		if !any {
			continue
		}
		verdict := "meets"
		if worst < benchGoal {
			verdict = "BELOW"
		}
		verdicts = append(verdicts, fmt.Sprintf("  %-6s %s: %s the %.1fx goal", phase, strings.Join(parts, ", "), verdict, benchGoal))
	}
	if len(verdicts) > 0 {
		label := "ours/floor:"
		if rounds > 1 {
			label = fmt.Sprintf("ours/floor (median of %d rounds):", rounds)
		}
		b.WriteString("\n" + label + "\n" + strings.Join(verdicts, "\n") + "\n")
	}
	return b.String()
}

func fmtShare(v float64) string {
	if v < 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", v*100)
}

// errorSamples lists the first distinct failures of every row that had any.
func errorSamples(rows []runStats) string {
	var b strings.Builder
	for _, r := range rows {
		if r.Errors == 0 {
			continue
		}
		keys := make([]string, 0, len(r.Samples))
		for k := range r.Samples {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s c=%d %s: %d× %s\n", r.Phase, r.Concurrency, r.Target, r.Samples[k], k)
		}
	}
	return b.String()
}

// fmtDur renders a latency with two or three significant digits: 850µs, 4.2ms, 17ms, 1.25s.
func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

func fmtMicros(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%dµs", d.Microseconds())
}

// thousands renders n with comma separators: 1234567 → "1,234,567".
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// oneLine squeezes b to one line of at most n bytes.
func oneLine(b []byte, n int) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// commandLine renders argv as a shell command line.
func commandLine(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	if len(out) > 0 {
		out[0] = filepath.Base(out[0])
		if out[0] != "gateway" {
			out[0] = argv[0]
		}
	}
	return strings.Join(out, " ")
}

// redactDSN drops the password from a database URL.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// ---- CPU accounting (Linux /proc; unknown elsewhere) ----

// cpuSample is a point-in-time reading of CPU counters, in clock ticks.
type cpuSample struct {
	target, self       uint64 // user+system ticks of the target process and of this process
	busy, steal, total uint64 // machine-wide ticks (busy includes steal)
	ok                 bool
}

// clockTick is USER_HZ, 100 on every Linux platform Go supports.
const clockTick = 10 * time.Millisecond

func sampleCPU(pid int) cpuSample {
	var s cpuSample
	var ok1, ok2, ok3 bool
	s.target, ok1 = procTicks(strconv.Itoa(pid))
	s.self, ok2 = procTicks("self")
	s.busy, s.steal, s.total, ok3 = machineTicks()
	s.ok = ok1 && ok2 && ok3
	return s
}

// procTicks reads utime+stime of /proc/<pid>/stat.
func procTicks(pid string) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	return u + st, err1 == nil && err2 == nil
}

// machineTicks reads the "cpu" line of /proc/stat: busy (everything but idle and iowait,
// steal included), steal, and total ticks.
func machineTicks() (busy, steal, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return parseCPULine(line)
}

// parseCPULine parses "cpu user nice system idle iowait irq softirq steal [guest guest_nice]".
func parseCPULine(line string) (busy, steal, total uint64, ok bool) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, 0, false
	}
	var idle uint64
	for i, v := range f[1:9] { // guest time is already counted in user
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, 0, false
		}
		total += n
		switch i {
		case 3, 4: // idle, iowait
			idle += n
		case 7:
			steal = n
		}
	}
	return total - idle, steal, total, true
}

// cpuPerRequest turns two samples into per-request CPU of the target and of the load
// generator, and the machine's busy and steal shares; zeros and -1 when unknown.
func cpuPerRequest(a, b cpuSample, requests int) (server, client time.Duration, busy, steal float64) {
	busy, steal = -1, -1
	if !a.ok || !b.ok || requests <= 0 {
		return 0, 0, busy, steal
	}
	server = time.Duration(b.target-a.target) * clockTick / time.Duration(requests)
	client = time.Duration(b.self-a.self) * clockTick / time.Duration(requests)
	if b.total > a.total {
		busy = float64(b.busy-a.busy) / float64(b.total-a.total)
		steal = float64(b.steal-a.steal) / float64(b.total-a.total)
	}
	return server, client, busy, steal
}

// loadAverage returns /proc/loadavg's three averages, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// ---- child processes ----

// benchProc is a child process of the bench, its output going to a log file.
type benchProc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	url     string // base URL, for targets
	addr    string // host:port, for targets
	exited  chan struct{}
	waitErr error
}

func startBenchProc(name, exe string, args, env []string, logDir string) (*benchProc, error) {
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	setParentDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &benchProc{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		f.Close()
		close(p.exited)
	}()
	return p, nil
}

func (p *benchProc) pid() int { return p.cmd.Process.Pid }

// stop asks the process to end (SIGTERM), and kills it after grace.
func (p *benchProc) stop(grace time.Duration) {
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// tail returns the last n lines of the process's log.
func (p *benchProc) tail(n int) string {
	b, _ := os.ReadFile(p.logPath)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitReady polls u until it answers 200, the process exits, or timeout passes.
func waitReady(ctx context.Context, p *benchProc, u string, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited before it was ready (%v); its log ends:\n%s", p.name, p.waitErr, p.tail(20))
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if resp, err := client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready at %s after %s; its log ends:\n%s", p.name, u, timeout, p.tail(20))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// postJSON posts v and fails unless the answer is 2xx.
func postJSON(ctx context.Context, u string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("answered %d: %s", resp.StatusCode, oneLine(body, 200))
	}
	return nil
}

// freeLoopbackAddr returns a loopback address with a port that was free a moment ago.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
