package worker

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"gateway/platform/eventhook"
	"gateway/store"
)

// EventSender makes one delivery attempt; *eventhook.Sender implements it. Send never fails on
// its own: every failure is in the Result.
type EventSender interface {
	Send(ctx context.Context, r eventhook.Request) eventhook.Result
}

// DeliveryObserver is what the dispatcher reports of each attempt: its outcome (succeeded,
// retry, dead), how long the receiver took, and, for a first attempt, how long after the event
// was committed the attempt started. The API's *server.Metrics implements it.
type DeliveryObserver interface {
	ObserveDelivery(outcome string, latency time.Duration, lag time.Duration, first bool)
}

// DispatcherConfig configures NewDispatcher. Zero fields take the documented defaults.
type DispatcherConfig struct {
	// DSN is the database the dispatcher LISTENs on for new deliveries (a dedicated
	// connection). Empty means no LISTEN: the dispatcher then relies on polling alone.
	DSN string
	// Sender makes the attempts. Nil means an eventhook.Sender with the production settings (3 s
	// timeout, private destinations refused unless AllowPrivate) and Concurrency connections
	// per host: the per-endpoint bound is the dispatcher's, so tenants that share a receiving
	// host (a SaaS hook provider) do not share a small connection pool.
	Sender EventSender
	// AllowPrivate lets the default Sender reach private, loopback and link-local addresses
	// (GATEWAY_WEBHOOK_ALLOW_PRIVATE). Ignored when Sender is set.
	AllowPrivate bool
	// SendTimeout is the Sender's timeout, used to decide whether a queued claim can still be
	// attempted within its lease. Default eventhook.DefaultTimeout (3 s).
	SendTimeout time.Duration
	// Concurrency bounds the attempts in flight at once across all endpoints. Default 64.
	Concurrency int
	// PerEndpoint bounds the attempts in flight at once to one endpoint, so a slow receiver
	// holds at most this many of the Concurrency slots. Default 16.
	PerEndpoint int
	// PerAccount bounds the attempts in flight at once for one account, all its endpoints
	// together, so one tenant's slow or failing endpoints hold at most this many of the
	// Concurrency slots. The bound shrinks as more accounts have work (dispatcher_share.go):
	// several slow tenants together never hold every slot. Default Concurrency / 2; at least
	// PerEndpoint.
	PerAccount int
	// AccountBacklog is EndpointBacklog for one account, all its endpoints together: an
	// account a claim could push over it is left out of the claim, so one tenant's backlog
	// never holds every claim. It shrinks as more accounts have work, as PerAccount does.
	// Default EndpointBacklog.
	AccountBacklog int
	// EndpointBacklog is how many claimed deliveries of one endpoint may be held (queued or
	// in flight) locally: an endpoint that a claim could push over it is left out of the claim
	// (and claims over it are given back at once), so a slow endpoint holds at most this many
	// of the MaxClaimed. Default MaxClaimed / 2; at least BatchSize.
	EndpointBacklog int
	// BatchSize is the most deliveries one claim takes. Default 64.
	BatchSize int
	// Claimers is the most claims in flight at once: under a backlog, each full batch lets
	// one more claimer go, which hides the database's commit latency. Default 4.
	Claimers int
	// MaxClaimed bounds the deliveries claimed and not yet attempted or in flight. Default
	// 4 × Concurrency (at least 2 × BatchSize).
	MaxClaimed int
	// Lease is how long a claim lasts; a delivery whose dispatcher died is due again after it.
	// Default 30 s; at least 2 × (SendTimeout + 2 s).
	Lease time.Duration
	// PollInterval is how often the dispatcher looks for due deliveries without a
	// notification (retries coming due, missed notifications, lapsed leases). Default 1 s.
	PollInterval time.Duration
	// DisableFailingAfter disables an endpoint whose every attempt failed for this long.
	// Default 5 days.
	DisableFailingAfter time.Duration
	// Clock, when set, is the time for everything (tests). Nil means time.Now for attempt
	// times and the database's clock for what is due and for leases, so that every replica
	// agrees on one clock.
	Clock func() time.Time
	// Rand returns values in [0, 1) for the retry jitter. Nil means math/rand/v2.
	Rand func() float64
	// Logger receives the dispatcher's logs. Nil means slog.Default().
	Logger *slog.Logger
	// Metrics receives each attempt's outcome, latency and commit-to-attempt lag (the
	// server's Metrics). Nil records nothing.
	Metrics DeliveryObserver
}

// Defaults of DispatcherConfig.
const (
	DefaultDispatcherConcurrency = 64
	DefaultDispatcherPerEndpoint = 16
	DefaultDispatcherBatch       = 64
	DefaultDispatcherClaimers    = 4
	DefaultDispatcherLease       = 30 * time.Second
	DefaultDispatcherPoll        = time.Second
	DefaultDisableFailingAfter   = 5 * 24 * time.Hour
)

const (
	// claimTimeout bounds one claim (runOnce).
	claimTimeout = 10 * time.Second
	// recordTimeout bounds the writing of one batch of results.
	recordTimeout = 10 * time.Second
	// maxRecordBatch is the most results written by one statement.
	maxRecordBatch = 256
	// recorders is the number of goroutines writing results. One: while it writes a batch the
	// next one gathers, so batches grow with the rate (fewer, larger statements, so less
	// database time per delivery than with two; BenchmarkDispatcher compares).
	recorders = 1
	// skipScanInterval spaces out claims that leave saturated endpoints out once such a claim
	// came back short: each one may scan past every due delivery of those endpoints.
	skipScanInterval = 50 * time.Millisecond
	// maxIdleEndpoints bounds the idle endpoints whose entries are kept.
	maxIdleEndpoints = 10000
	// leaseMargin is the time kept in hand, beyond SendTimeout, before a claim lapses: a
	// queued claim with less left is released instead of attempted.
	leaseMargin = 2 * time.Second
)

// Dispatcher delivers the outbox to customer webhooks: it claims due deliveries in batches
// (FOR UPDATE SKIP LOCKED, with a lease), attempts each one with a per-endpoint bound on the
// attempts in flight, records every attempt and schedules retries. Every replica runs one; it
// wakes when its own process wrote events, on LISTEN/NOTIFY (a redelivery), on a poll tick,
// and when capacity frees up. Create it with NewDispatcher; it is a Service.
type Dispatcher struct {
	cfg    DispatcherConfig
	store  *store.Store
	log    *slog.Logger
	sender EventSender

	mu        sync.Mutex
	endpoints map[int64]*endpointQueue
	accounts  map[int64]*accountShare
	// busyAccounts counts the accounts holding deliveries; the shares depend on it.
	busyAccounts int
	// slotWaiters are the accounts with runners waiting for one of their slots.
	slotWaiters map[*accountShare]struct{}
	claimed     int // deliveries held: queued or in flight
	reserved    int // room taken by claims in flight
	// wantCapacity: a claimer held back or left a saturated endpoint out; the next runner
	// that frees room signals capacity, or, when no delivery is held, the end of a claim
	// (unreserve).
	wantCapacity bool
	// skipScanned is when a claim leaving endpoints out last came back short; skipTimer
	// wakes a claimer when the next such claim may run.
	skipScanned time.Time
	skipTimer   *time.Timer
	stopping    bool // no more attempts start

	sem      chan struct{}       // global bound on attempts in flight
	results  chan dispatchResult // to the recorders
	capacity chan struct{}       // a claim that was held back may now go ahead
	more     chan struct{}       // a claim came back full: another claimer may go

	runners   sync.WaitGroup
	recording sync.WaitGroup
	listener  *store.DeliveryListener // set by the loop goroutine, read after it ended

	lifecycle

	recOnce   sync.Once // starts the recorders, at Start or at the first RunOnce
	recActive bool      // the recorders were started (under mu)
	drainOnce sync.Once
	// overflowed counts the claims given back over an endpoint's backlog.
	overflowed atomic.Int64
}

// endpointQueue is one endpoint's claimed deliveries waiting for an attempt, and the number
// of attempts running for it.
type endpointQueue struct {
	id      int64
	queue   []job
	running int
	held    int // queued + running
}

// job is one claimed delivery and when this dispatcher claimed it (by its own clock).
type job struct {
	store.ClaimedDelivery
	claimedAt time.Time
	done      *sync.WaitGroup // RunOnce's batch, or nil
}

// dispatchResult is what a runner hands to the recorders: an attempt to record, or a claim to
// give back unattempted.
type dispatchResult struct {
	attempt    store.AttemptResult
	endpointID int64
	failing    bool // the endpoint had a failure streak when claimed
	release    bool
	done       *sync.WaitGroup // RunOnce's batch, or nil: Done once the result is written
}

// NewDispatcher returns a dispatcher over st configured by cfg. It starts nothing (Start
// does) and cannot fail.
func NewDispatcher(st *store.Store, cfg DispatcherConfig) *Dispatcher {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultDispatcherConcurrency
	}
	if cfg.PerEndpoint <= 0 {
		cfg.PerEndpoint = DefaultDispatcherPerEndpoint
	}
	cfg.PerEndpoint = min(cfg.PerEndpoint, cfg.Concurrency)
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultDispatcherBatch
	}
	if cfg.Claimers <= 0 {
		cfg.Claimers = DefaultDispatcherClaimers
	}
	if cfg.MaxClaimed <= 0 {
		cfg.MaxClaimed = 4 * cfg.Concurrency
	}
	cfg.MaxClaimed = max(cfg.MaxClaimed, 2*cfg.BatchSize)
	if cfg.EndpointBacklog <= 0 {
		cfg.EndpointBacklog = max(cfg.PerEndpoint, cfg.MaxClaimed/2)
	}
	cfg.EndpointBacklog = max(cfg.EndpointBacklog, cfg.BatchSize)
	if cfg.PerAccount <= 0 {
		cfg.PerAccount = cfg.Concurrency / 2
	}
	cfg.PerAccount = min(max(cfg.PerAccount, cfg.PerEndpoint), cfg.Concurrency)
	if cfg.AccountBacklog <= 0 {
		cfg.AccountBacklog = cfg.EndpointBacklog
	}
	cfg.AccountBacklog = max(cfg.AccountBacklog, cfg.BatchSize)
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultDispatcherLease
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultDispatcherPoll
	}
	if cfg.DisableFailingAfter <= 0 {
		cfg.DisableFailingAfter = DefaultDisableFailingAfter
	}
	if cfg.SendTimeout <= 0 {
		cfg.SendTimeout = eventhook.DefaultTimeout
	}
	// A claim must outlast an attempt with time to spare, or every claim would be given back.
	cfg.Lease = max(cfg.Lease, 2*(cfg.SendTimeout+leaseMargin))
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	sender := cfg.Sender
	if sender == nil {
		sender = eventhook.NewSender(eventhook.SenderConfig{
			Timeout: cfg.SendTimeout, AllowPrivate: cfg.AllowPrivate, MaxConnsPerHost: cfg.Concurrency,
		})
	}
	return &Dispatcher{
		cfg: cfg, store: st, log: cfg.Logger.With("service", "webhook_dispatcher"), sender: sender,
		lifecycle:   lifecycle{lcName: "webhook dispatcher"},
		endpoints:   map[int64]*endpointQueue{},
		accounts:    map[int64]*accountShare{},
		slotWaiters: map[*accountShare]struct{}{},
		sem:         make(chan struct{}, cfg.Concurrency),
		results:     make(chan dispatchResult, 4*cfg.Concurrency),
		capacity:    make(chan struct{}, 1),
		more:        make(chan struct{}, 1),
	}
}

// Start starts the claim loop, the LISTEN connection (when a DSN is configured) and the
// recorders, and returns. It fails when the dispatcher was already started.
func (d *Dispatcher) Start(ctx context.Context) error {
	return d.start(ctx, func(ctx context.Context) {
		var wake <-chan struct{}
		if d.cfg.DSN != "" {
			d.listener = store.ListenDeliveries(d.cfg.DSN, func(err error) {
				d.log.Warn("webhook listener", "error", err.Error())
			})
			wake = d.listener.C()
		}
		// This process's writers of events wake a claimer directly (the fan-out trigger does
		// not NOTIFY: store.WakeOnEvents).
		written := make(chan struct{}, 1)
		defer d.store.WakeOnEvents(written)()
		d.startRecorders()
		var claimers sync.WaitGroup
		for range d.cfg.Claimers {
			claimers.Add(1)
			go func() { defer claimers.Done(); d.loop(ctx, wake, written) }()
		}
		claimers.Wait()
	})
}

// Stop stops claiming, gives back the claims not yet attempted, waits for the attempts in
// flight (each bounded by the send timeout) and for their results to be written, and closes
// the LISTEN connection. It is idempotent, and a no-op before Start.
func (d *Dispatcher) Stop() {
	d.mu.Lock()
	active := d.recActive
	d.mu.Unlock()
	if !d.started() {
		if active { // driven by RunOnce only
			d.drainOnce.Do(d.drain)
		}
		return
	}
	d.stop(func() { d.drainOnce.Do(d.drain) })
}

// drain is the end of Stop once no claim runs: give back the claims not yet attempted, wait
// for the attempts in flight and for their results to be written, and close the listener.
func (d *Dispatcher) drain() {
	d.mu.Lock()
	d.stopping = true
	var unattempted []store.ClaimRef
	for _, q := range d.endpoints {
		for _, j := range q.queue {
			unattempted = append(unattempted, j.Ref())
			defer doneIfSet(j.done) // once given back, below
		}
		d.claimed -= len(q.queue)
		q.held -= len(q.queue)
		for _, j := range q.queue {
			d.unhold(d.account(j.AccountID))
		}
		q.queue = nil
	}
	d.mu.Unlock()
	d.runners.Wait()
	close(d.results)
	d.recording.Wait()
	if len(unattempted) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
		if err := d.store.ReleaseDeliveries(ctx, d.dbNow(), unattempted); err != nil {
			d.log.Error("release claims on stop", "error", err.Error(), "count", len(unattempted))
		}
		cancel()
	}
	if d.listener != nil {
		d.listener.Close()
	}
}

// RunOnce claims one batch of due deliveries now, as the claim loop does, and returns once
// every delivery it claimed has been attempted (or given back) and its result written; it
// returns how many it claimed. It is the "deliver now" of an operator and of tests; a
// dispatcher that is not started delivers only when RunOnce is called (Stop still gives back
// what it holds). It fails when the claim fails.
func (d *Dispatcher) RunOnce(ctx context.Context) (int, error) {
	var batch sync.WaitGroup
	n, _, _, err := d.runOnce(ctx, &batch)
	batch.Wait()
	return n, err
}

// startRecorders starts the goroutines that write results, once.
func (d *Dispatcher) startRecorders() {
	d.recOnce.Do(func() {
		for range recorders {
			d.recording.Add(1)
			go d.record()
		}
		d.mu.Lock()
		d.recActive = true
		d.mu.Unlock()
	})
}

// doneIfSet marks one delivery of a RunOnce batch finished.
func doneIfSet(wg *sync.WaitGroup) {
	if wg != nil {
		wg.Done()
	}
}

// now is the dispatcher's clock.
func (d *Dispatcher) now() time.Time {
	if d.cfg.Clock != nil {
		return d.cfg.Clock()
	}
	return time.Now()
}

// dbNow is the time given to the store: the injected clock, or zero for the database's.
func (d *Dispatcher) dbNow() time.Time {
	if d.cfg.Clock != nil {
		return d.cfg.Clock()
	}
	return time.Time{}
}
