// Package bench is `gateway bench`, the load tool. It seeds a dedicated database, starts the platform
// simulator, the gateway (`gateway serve`) and the floor server (`gateway bench floor-serve`,
// floor.go) as child processes on loopback ports, then drives each hot path against
// the gateway and against the floor, interleaved, with a closed-loop generator (N clients,
// kept-alive connections, warm-up, then a measured run), and prints requests per second,
// p50/p99 latency, errors and the ratio gateway/floor. Every child is stopped at the end and
// on Ctrl-C; every phase is bounded in time.
//
// Files by job: bench.go (the orchestration of a run), flags.go (its flags), load.go (the
// requests and the closed-loop raw HTTP/1.1 client), report.go (figures and the report),
// sample.go (CPU accounting from /proc), supervisor.go (child processes), database.go (the
// bench database and its seeding), floor.go (the floor server; its SQL is in
// store/benchfloor); lifecycle.go is `gateway bench lifecycle`, with its flags
// (lifecycle_flags.go), its CPU per lifecycle (lifecycle_cpu.go) and its report
// (lifecycle_report.go).
package bench

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"time"

	"gateway/platform/simulator"
	"gateway/store"
	"gateway/store/benchfloor"
)

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
var benchTemplate = func() benchfloor.Template {
	t := benchfloor.Template{PlatformID: "1094411223344001", Name: "order_confirmation", Language: "en_US",
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
	phaseSend     = "send"
	phaseSendRich = "send-rich"
	phaseStatus   = "status"
	phasePoll     = "poll"
)

// richTemplate is what a send-rich request fills: the simulator's spring_sale, an IMAGE header,
// one body variable and a URL button with a {{1}} suffix at index 0.
const richTemplate = "spring_sale"

// Targets.
const (
	targetGateway = "gateway"
	targetFloor   = "floor"
)

// Config is what `gateway bench` takes from the gateway's configuration: the database it
// derives the bench database from, and what the children it starts are given.
type Config struct {
	DatabaseURL       string
	SecretKey         []byte
	PlatformBaseURL   string
	PlatformAppSecret string
	PlatformTimeout   time.Duration
	DBPool            int
	LogLevel          slog.Level
}

// Run is `gateway bench`: the load tool, or with "floor-serve" the floor server. args are the
// arguments after "bench". It returns nil for -h, and an error when a flag is wrong, the
// bench database cannot be prepared or a child cannot be started.
func Run(ctx context.Context, cfg Config, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "floor-serve":
			return serveFloor(ctx, cfg, args[1:], stdout, stderr)
		case "lifecycle":
			return runLifecycle(ctx, cfg, args[1:], stdout, stderr)
		case "receiver":
			return serveReceiver(ctx, args[1:], stdout, stderr)
		}
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
	cfg      Config
	opts     benchOptions
	store    *store.Store
	floor    *benchfloor.Floor
	seed     benchfloor.Seed
	ids      benchfloor.IDs
	key      string
	simURL   string
	targets  map[string]*benchProc // gateway, floor
	procs    []*benchProc          // every child, in start order
	logDir   string
	log      io.Writer
	cleanups []func()
	// simArgs and extraEnv are added to the simulator's arguments and to every child's
	// environment (the lifecycle benchmark sets them).
	simArgs  []string
	extraEnv []string
}

func runBench(ctx context.Context, cfg Config, opts benchOptions, stdout, stderr io.Writer) error {
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
	size, err := rig.floor.DataSize(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "database %s: PostgreSQL %s (%s), messages %s rows, contacts %s rows (bench account %d, %s seeded messages)\n",
		redactDSN(opts.DatabaseURL), size.ServerVersion, size.Settings, thousands(size.Messages), thousands(size.Contacts),
		rig.seed.AccountID, thousands(rig.seed.Seeded))
	rig.preflight(ctx)

	var rows []runStats
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, phase := range opts.Phases {
		for _, c := range opts.Concurrency {
			for round := 1; round <= opts.Rounds; round++ {
				for _, target := range []string{targetGateway, targetFloor} {
					if rig.targets[target] == nil || ctx.Err() != nil || (phase == phaseSendRich && target == targetFloor) {
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
	sim, err := r.start("platform-sim", exe, append([]string{"platform-sim", "--addr", simAddr, "--webhook-url="}, r.simArgs...), env)
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
		{"/_sim/templates", map[string]any{"waba_id": benchNumber.WabaID, "defaults": true, "rich": true}},
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
	return append(append(os.Environ(),
		"DATABASE_URL="+r.opts.DatabaseURL,
		"PLATFORM_BASE_URL=http://"+simAddr+"/v23.0",
		"PLATFORM_APP_SECRET="+r.cfg.PlatformAppSecret,
		"GATEWAY_SECRET_KEY="+hex.EncodeToString(r.cfg.SecretKey),
		"GATEWAY_MIGRATE=true",
		"GATEWAY_DB_POOL="+strconv.Itoa(r.cfg.DBPool),
		"PLATFORM_TIMEOUT="+r.cfg.PlatformTimeout.String(),
		"LOG_LEVEL="+r.opts.LogLevel,
		"PLATFORM_SIM_WEBHOOK_URL=",
		// The children serve loopback only, with whatever secrets the bench was given: the
		// built-in development ones included (serve refuses them otherwise).
		"GATEWAY_ENV=development",
	), r.extraEnv...)
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
		r.floor.Close()
		r.store.Close()
		db.Close()
	}
	if r.logDir != "" && !r.opts.KeepLogs {
		os.RemoveAll(r.logDir)
	}
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
	if phase == phaseSendRich {
		if err := r.waitRichTemplate(ctx, 30*time.Second); err != nil {
			return runStats{}, err
		}
	}
	if phase == phaseStatus {
		if err := r.floor.ResetStatuses(ctx, r.seed.AccountID); err != nil {
			return runStats{}, err
		}
	}
	if err := r.floor.Checkpoint(ctx); err != nil {
		fmt.Fprintf(r.log, "bench: checkpoint: %v (going on)\n", err)
	}
	settle := r.settle(ctx, 30*time.Second)

	var before, after cpuSample
	var dbBefore, dbAfter uint64
	var dbPIDs []int
	dbOK := true
	prev := runtime.GOMAXPROCS(r.opts.ClientProcs)
	res := runLoad(ctx, p.addr, loadSpec{
		Concurrency: c, Warmup: r.opts.Warmup, Duration: r.opts.Duration,
		NewRequest: r.maker(phase, p.addr),
		OnMeasureStart: func() {
			backends, aux, err := r.floor.ServerPIDs(ctx)
			dbPIDs, dbOK = append(backends, aux...), err == nil
			dbBefore = sumTicks(dbPIDs)
			before = sampleCPU(p.pid())
		},
		OnMeasureEnd: func() {
			after = sampleCPU(p.pid())
			dbAfter = sumTicks(dbPIDs)
		},
	})
	runtime.GOMAXPROCS(prev)
	if ctx.Err() != nil {
		return runStats{}, ctx.Err()
	}
	s := summarize(res)
	s.Phase, s.Concurrency, s.Target, s.Settle = phase, c, target, settle
	s.ServerCPU, s.ClientCPU, s.Busy, s.Steal = cpuPerRequest(before, after, s.OK)
	if dbOK && s.OK > 0 && dbAfter >= dbBefore {
		s.DBCPU = time.Duration(dbAfter-dbBefore) * clockTick / time.Duration(s.OK)
	}
	return s, nil
}

// waitRichTemplate waits (at most max) until the gateway's template sync, which runs when it
// starts, has stored the simulator's rich template as approved for the bench account.
func (r *benchRig) waitRichTemplate(ctx context.Context, max time.Duration) error {
	deadline := time.Now().Add(max)
	for {
		ts, err := r.store.ApprovedTemplates(ctx, r.seed.AccountID, 200)
		if err != nil {
			return err
		}
		for _, t := range ts {
			if t.Name == richTemplate {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the gateway did not sync the template %s within %s", richTemplate, max)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// settle waits (at most max) until no other session is running a statement in the bench
// database, and returns how long that took.
func (r *benchRig) settle(ctx context.Context, max time.Duration) time.Duration {
	start := time.Now()
	quiet := 0
	for time.Since(start) < max && ctx.Err() == nil {
		n, err := r.floor.BusyBackends(ctx)
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
