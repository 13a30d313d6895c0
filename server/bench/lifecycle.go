package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gateway/platform/eventhook"
	"gateway/platform/simulator"
	"gateway/store"
	"gateway/store/benchfloor"
)

// storeConnection is the connection of number n for the account.
func storeConnection(accountID int64, n simulator.Number) store.Connection {
	return store.Connection{AccountID: accountID, WabaID: n.WabaID, PhoneNumberID: n.PhoneNumberID,
		PhoneNumber: n.DisplayPhoneNumber, DisplayName: n.VerifiedName, AccessToken: n.AccessToken}
}

// `gateway bench lifecycle`: a message's whole life through the full stack. Sends go to a
// real `gateway serve` child at a fixed rate (open loop: a request is due every 1/rate
// seconds whether or not the previous ones were answered); the simulator, a child, answers
// each send and then posts the signed sent, delivered and read status webhooks back to the
// gateway as Meta does (50/150/300 ms after the send); the gateway's dispatcher delivers
// message.sent, contact.created and the message.status events to one endpoint per account
// on a loopback receiver (a child) that checks every signature. The bench account holds the
// seeded messages (1,000,000 by default). The rate is stepped up; each step runs a warm-up
// then a measured window, then waits for the backlog to drain.
//
// A step is sustained when the sends kept the rate with (almost) no errors, the read
// webhooks arrived at the rate of the sends, and the backlog (parked statuses, due
// deliveries and their age, the simulator's status webhooks in flight) was bounded at the
// middle and at the end of the window.

// lcAccount is one sending account: its id, its live key and its endpoint's secret.
type lcAccount struct {
	id     int64
	auth   string // the Authorization header line
	secret string
}

type lifecycle struct {
	rig      *benchRig
	opts     lifecycleOptions
	accounts []lcAccount
	receiver *benchProc
	sim      *benchProc
	gateway  *benchProc
	out      io.Writer
}

// stepResult is one rate step's figures.
type stepResult struct {
	Rate                       int
	Sends, Errors, Missed      int
	SendsPerSec, LifecyclesSec float64
	SendP50, SendP99           time.Duration
	Recv                       receiverStats
	Mid, End                   lcBacklog
	CPU                        map[string]time.Duration // per lifecycle, by process
	MachineCPU                 time.Duration            // machine busy CPU per lifecycle
	Busy                       float64
	Drained                    time.Duration
	DrainedOK                  bool
	Sustained                  bool
	Why                        string
	Samples                    map[string]int
}

// lcBacklog is the database backlog and the simulator's webhooks in flight.
type lcBacklog struct {
	benchfloor.Backlog
	SimPending int
}

func runLifecycle(ctx context.Context, cfg Config, args []string, stdout, stderr io.Writer) error {
	def, err := benchDSN(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	o, err := parseLifecycleFlags(args, def, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	budget := 20*time.Minute + time.Duration(len(o.Rates))*(o.Warmup+o.Step+o.Drain+30*time.Second)
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()

	started := time.Now()
	fmt.Fprintf(stdout, "$ %s\n", commandLine(os.Args))
	fmt.Fprintf(stdout, "started %s on %d CPUs, load average %s\n", started.Format(time.RFC3339), runtime.NumCPU(), loadAverage())
	rig := &benchRig{cfg: cfg, targets: map[string]*benchProc{}, log: stderr,
		opts: benchOptions{Messages: o.Messages, DatabaseURL: o.DatabaseURL, LogLevel: o.LogLevel, KeepLogs: o.KeepLogs,
			Gateway: true, Floor: false},
		simArgs:  []string{"--webhook-workers", strconv.Itoa(o.SimWorkers)},
		extraEnv: []string{"GATEWAY_WEBHOOK_ALLOW_PRIVATE=true"},
	}
	if o.PoolerURL != "" {
		// The children's later DATABASE_URL wins; seeding and migrations stay direct.
		rig.extraEnv = append(rig.extraEnv, "DATABASE_URL="+o.PoolerURL, "DATABASE_DIRECT_URL="+o.DatabaseURL)
		fmt.Fprintf(stdout, "gateway through the pooler %s (direct: %s)\n", redactDSN(o.PoolerURL), redactDSN(o.DatabaseURL))
	}
	defer rig.close()
	lc := &lifecycle{rig: rig, opts: o, out: stdout}
	if err := rig.prepareDatabase(ctx); err != nil {
		return err
	}
	if err := lc.prepareAccounts(ctx); err != nil {
		return err
	}
	if err := rig.startProcesses(ctx); err != nil {
		return err
	}
	lc.gateway = rig.targets[targetGateway]
	lc.sim = rig.procs[0]
	if err := lc.startReceiver(ctx); err != nil {
		return err
	}
	if err := lc.wire(ctx); err != nil {
		return err
	}
	size, err := rig.floor.DataSize(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "database %s: PostgreSQL %s (%s), messages %s rows, contacts %s rows; %d accounts, one webhook endpoint each\n",
		redactDSN(o.DatabaseURL), size.ServerVersion, size.Settings, thousands(size.Messages), thousands(size.Contacts), len(lc.accounts))

	var results []stepResult
	for _, rate := range o.Rates {
		if ctx.Err() != nil {
			break
		}
		// Each step starts from vacuumed tables, as a server with autovacuum on would keep them
		// (benchfloor.Vacuum), not from the dead rows of the steps and runs before it.
		if err := rig.floor.Vacuum(ctx); err != nil {
			return fmt.Errorf("vacuum: %w", err)
		}
		r := lc.step(ctx, rate)
		results = append(results, r)
		fmt.Fprintf(stderr, "  rate %4d/s: %6.1f lifecycles/s, sends %6.1f/s p50 %s p99 %s, lag p50 %s p99 %s, %s\n", rate,
			r.LifecyclesSec, r.SendsPerSec, fmtDur(r.SendP50), fmtDur(r.SendP99), fmtDur(r.Recv.StatusLagP50),
			fmtDur(r.Recv.StatusLagP99), verdictWord(r))
		if !r.Sustained && !o.KeepGoing {
			break
		}
	}
	fmt.Fprintf(stdout, "\n%s", formatLifecycle(results, o))
	fmt.Fprintf(stdout, "finished in %s, load average %s\n", time.Since(started).Round(time.Second), loadAverage())
	if o.KeepLogs {
		fmt.Fprintf(stdout, "child logs kept in %s\n", rig.logDir)
	}
	return context.Cause(ctx)
}

// lcNumber is the simulator number of the i-th extra account.
func lcNumber(i int) simulator.Number {
	return simulator.Number{
		PhoneNumberID:      fmt.Sprintf("10900000001%04d", i),
		WabaID:             fmt.Sprintf("10900000009%04d", i),
		DisplayPhoneNumber: fmt.Sprintf("1555020%04d", i),
		AccessToken:        fmt.Sprintf("bench-lifecycle-token-%d", i),
		VerifiedName:       fmt.Sprintf("Bench Lifecycle %d", i),
	}
}

// prepareAccounts readies the extra accounts (number, template, campaign, live key) and a
// fresh endpoint secret for every account; endpoints left by an earlier run are removed.
func (lc *lifecycle) prepareAccounts(ctx context.Context) error {
	r := lc.rig
	st := r.store
	secret, err := eventhook.NewSecret()
	if err != nil {
		return err
	}
	lc.accounts = []lcAccount{{id: r.seed.AccountID, auth: "Authorization: Bearer " + r.key, secret: secret}}
	for i := 1; i < lc.opts.Accounts; i++ {
		email := fmt.Sprintf("bench-lc-%d@localhost", i)
		acct, err := st.AccountByEmail(ctx, email)
		if err != nil {
			if acct, err = createAccount(ctx, st, fmt.Sprintf("Bench lifecycle %d", i), email); err != nil {
				return fmt.Errorf("account %s: %w", email, err)
			}
		}
		n := lcNumber(i)
		if _, err := st.ConnectNumber(ctx, storeConnection(acct.ID, n)); err != nil {
			return fmt.Errorf("number of %s: %w", email, err)
		}
		if _, err := r.floor.SeedData(ctx, acct.ID, benchTemplate, 1, nil); err != nil {
			return err
		}
		key, err := createKey(ctx, st, acct.ID, "live")
		if err != nil {
			return err
		}
		keyID := key.ID
		r.onClose(func() { st.RevokeAPIKey(context.Background(), keyID) })
		secret, err := eventhook.NewSecret()
		if err != nil {
			return err
		}
		lc.accounts = append(lc.accounts, lcAccount{id: acct.ID, auth: "Authorization: Bearer " + key.Key, secret: secret})
	}
	for _, a := range lc.accounts {
		if err := r.floor.DeleteEndpoints(ctx, a.id); err != nil {
			return fmt.Errorf("old endpoints of account %d: %w", a.id, err)
		}
	}
	return nil
}

// startReceiver starts `gateway bench receiver` with the accounts' secrets.
func (lc *lifecycle) startReceiver(ctx context.Context) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	var pairs []string
	for _, a := range lc.accounts {
		pairs = append(pairs, fmt.Sprintf("%d=%s", a.id, a.secret))
	}
	env := append(os.Environ(), receiverSecretsEnv+"="+strings.Join(pairs, ";"))
	p, err := lc.rig.start("receiver", exe, []string{"bench", "receiver", "--addr", addr}, env)
	if err != nil {
		return err
	}
	p.url, p.addr = "http://"+addr, addr
	lc.receiver = p
	return waitReady(ctx, p, p.url+"/stats", 30*time.Second)
}

// wire registers the extra numbers and templates on the simulator, creates one endpoint per
// account on the receiver (removed again at the end), and points the simulator's status
// webhooks at the gateway.
func (lc *lifecycle) wire(ctx context.Context) error {
	r := lc.rig
	for i := 1; i < len(lc.accounts); i++ {
		n := lcNumber(i)
		if err := postJSON(ctx, r.simURL+"/_sim/numbers", n); err != nil {
			return fmt.Errorf("simulator number: %w", err)
		}
		if err := postJSON(ctx, r.simURL+"/_sim/templates", map[string]any{"waba_id": n.WabaID, "defaults": true}); err != nil {
			return fmt.Errorf("simulator templates: %w", err)
		}
	}
	for _, a := range lc.accounts {
		if _, err := r.store.CreateWebhookEndpoint(ctx, a.id, fmt.Sprintf("%s/hook/%d", lc.receiver.url, a.id), a.secret); err != nil {
			return fmt.Errorf("endpoint of account %d: %w", a.id, err)
		}
		id := a.id
		r.onClose(func() { r.floor.DeleteEndpoints(context.Background(), id) })
	}
	return postJSON(ctx, r.simURL+"/_sim/config", map[string]any{"webhook_url": lc.gateway.url + "/platform/webhook"})
}

func (lc *lifecycle) accountIDs() []int64 {
	ids := make([]int64, len(lc.accounts))
	for i, a := range lc.accounts {
		ids[i] = a.id
	}
	return ids
}

// backlog reads the database backlog and the simulator's webhooks in flight.
func (lc *lifecycle) backlog(ctx context.Context) lcBacklog {
	var b lcBacklog
	var err error
	if b.Backlog, err = lc.rig.floor.Backlog(ctx, lc.accountIDs()); err != nil {
		fmt.Fprintf(lc.rig.log, "bench: backlog: %v\n", err)
	}
	var ws simulator.WebhookStats
	if err := getJSON(ctx, lc.rig.simURL+"/_sim/webhooks", &ws); err != nil {
		fmt.Fprintf(lc.rig.log, "bench: simulator webhooks: %v\n", err)
	}
	b.SimPending = ws.Pending
	return b
}

func (lc *lifecycle) receiverStats(ctx context.Context, reset bool) receiverStats {
	var st receiverStats
	u := lc.receiver.url + "/stats"
	if reset {
		u += "?reset=1"
	}
	if err := getJSON(ctx, u, &st); err != nil {
		fmt.Fprintf(lc.rig.log, "bench: receiver stats: %v\n", err)
	}
	return st
}

// step runs one rate: warm-up, the measured window, then the drain.
func (lc *lifecycle) step(ctx context.Context, rate int) stepResult {
	res := stepResult{Rate: rate, Samples: map[string]int{}}
	o := lc.opts
	start := time.Now().Add(200 * time.Millisecond)
	measure := start.Add(o.Warmup)
	end := measure.Add(o.Step)

	// The schedule: one due time every 1/rate seconds; a due time that finds the queue full
	// (every client busy and rate×2 s of sends waiting) is missed.
	due := make(chan time.Time, rate*2+16)
	var missed atomic.Int64
	go func() {
		defer close(due)
		interval := time.Second / time.Duration(rate)
		for t := start; t.Before(end); t = t.Add(interval) {
			if d := time.Until(t); d > 0 {
				time.Sleep(d)
			}
			if ctx.Err() != nil {
				return
			}
			select {
			case due <- t:
			default:
				if !t.Before(measure) {
					missed.Add(1)
				}
			}
		}
	}()

	// Half-way through the warm-up the tables hold the step's rows: analyze them then, as
	// autovacuum would (benchfloor.Vacuum says why the bench does it itself).
	go func() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(start.Add(o.Warmup / 2))):
		}
		if err := lc.rig.floor.Analyze(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintf(lc.out, "bench: analyze: %v\n", err)
		}
	}()

	var (
		mu      sync.Mutex
		lat     []time.Duration
		sends   int
		errs    int
		next    atomic.Uint64
		wg      sync.WaitGroup
		samples = map[string]int{}
	)
	for i := range o.Clients {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i)))
			conn := &httpConn{addr: lc.gateway.addr, deadline: end.Add(60 * time.Second)}
			defer conn.close()
			var buf []byte
			for t := range due {
				a := lc.accounts[next.Add(1)%uint64(len(lc.accounts))]
				buf = appendRequest(buf[:0], "POST", lc.gateway.addr, "/v1/messages/template", sendBody(rng), a.auth,
					"Content-Type: application/json")
				code, body, err := conn.do(buf)
				done := time.Now()
				if t.Before(measure) {
					continue
				}
				mu.Lock()
				if err == nil && code/100 == 2 {
					sends++
					lat = append(lat, done.Sub(t))
				} else {
					errs++
					failure := "transport: " + fmt.Sprint(err)
					if err == nil {
						failure = strconv.Itoa(code) + " " + oneLine(body, 160)
					}
					if _, seen := samples[failure]; seen || len(samples) < 5 {
						samples[failure]++
					}
				}
				mu.Unlock()
			}
		}(i)
	}

	// The measured window's edges and middle.
	wait := func(t time.Time) {
		select {
		case <-time.After(time.Until(t)):
		case <-ctx.Done():
		}
	}
	wait(measure)
	pgPIDs, auxPIDs, err := lc.rig.floor.ServerPIDs(ctx)
	if err != nil {
		fmt.Fprintf(lc.rig.log, "bench: postgres pids: %v\n", err)
	}
	lc.receiverStats(ctx, true)
	before := lc.sampleCPU(pgPIDs, auxPIDs)
	wait(measure.Add(o.Step / 2))
	res.Mid = lc.backlog(ctx)
	wait(end)
	after := lc.sampleCPU(pgPIDs, auxPIDs)
	res.Recv = lc.receiverStats(ctx, false)
	res.End = lc.backlog(ctx)
	wg.Wait()

	res.Sends, res.Errors, res.Missed, res.Samples = sends, errs, int(missed.Load()), samples
	slices.Sort(lat)
	res.SendP50, res.SendP99 = percentile(lat, 50), percentile(lat, 99)
	res.SendsPerSec = float64(sends) / o.Step.Seconds()
	res.LifecyclesSec = float64(res.Recv.Reads) / o.Step.Seconds()
	res.CPU, res.MachineCPU, res.Busy = cpuPer(before, after, res.Recv.Reads)

	// Drain: wait for the simulator's webhooks and the due deliveries to reach zero.
	t0 := time.Now()
	for time.Since(t0) < o.Drain && ctx.Err() == nil {
		b := lc.backlog(ctx)
		if b.SimPending == 0 && b.Due == 0 && b.Parked == 0 {
			res.DrainedOK = true
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	res.Drained = time.Since(t0)
	res.Sustained, res.Why = judge(res)
	return res
}
