// Package broadcast is the broadcast engine: it sends a broadcast's template to each of its
// recipients exactly once, paced to the sending number's throughput, the per-person rate and
// the portfolio's 24 h budget of unique recipients, and handles each platform error kind.
//
// The queue is the broadcast_recipients table (store): the engine claims due recipients in
// small batches with a lease, and marks each one 'sending' in its own statement before the
// platform call, making the recipient's idempotency key (store.BroadcastKey). A recipient whose
// call may have happened is never called again. The Sender (the gateway's send path,
// server.BroadcastSender) binds that key to the recipient's message before the call, so after a
// crash the sweep settles rows left 'sending' from their messages
// (store.SettleBroadcastRecipients): sent, failed, due again when no message was recorded,
// unknown otherwise.
package broadcast

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"gateway/server/groupcommit"
	"gateway/store"
)

// Message is one platform call the engine asks of a Sender.
type Message struct {
	Broadcast store.Broadcast
	Recipient store.ClaimedRecipient
	// BodyParams are the template's body parameters for this recipient, in order.
	BodyParams []string
	// BeforeCall waits for the number's pace right before the platform call; a Sender calls
	// it last before the request, so that the time its own writes take (the message row) cannot
	// bunch the sends of two seconds into one at the platform. An error (ctx ended before the
	// pace let the call go) means the Sender must not call: its error then, whatever it is,
	// makes the recipient due again.
	BeforeCall func(ctx context.Context) error
}

// Sender makes the platform call of one recipient and returns the platform's message id. Before
// a platform call it records the recipient's message with the recipient's key (store.BroadcastKey,
// which the mark made) bound to it in the same statement (store.SendInput.IdempotencyKey), as
// the gateway's send path does: a recipient left sending is settled from that message. Its
// error decides what happens to the recipient:
//   - a *whatsapp.Error: the platform answered; the engine acts on its code (Classify);
//   - an error wrapping ErrNotSent or whatsapp.ErrInvalidArgument: nothing was sent and
//     sending again would not help (recorded as a failure);
//   - anything else: the call may have happened (recorded as unknown, never called again).
type Sender interface {
	SendBroadcast(ctx context.Context, m Message) (messageID string, err error)
}

// ErrNotSent is wrapped by a Sender's error for a recipient it refused without calling the
// platform (opted out, blocked...).
var ErrNotSent = errors.New("broadcast: not sent")

// Config configures New. Zero fields take the documented defaults.
type Config struct {
	Sender Sender
	// Clock is the time for schedules, leases, budgets and the recorded times; nil means
	// time.Now. Pacing runs on real (monotonic) time.
	Clock func() time.Time
	// Throughput returns the number's messages per second as the platform reports it (80,
	// 1,000 or 20); nil or 0 means 80.
	Throughput func(ctx context.Context, phoneNumberID string) int
	// Budget returns the portfolio's unique recipients per moving 24 h (250, 2,000 ...); nil
	// or 0 means unlimited.
	Budget func(ctx context.Context, accountID int64, portfolio string) int
	// Share is the part of the number's throughput broadcasts use, leaving the rest to API
	// sends of the same number. Default 0.85; at most 1.
	Share float64
	// PairInterval is the spacing of two sends to the same person. Default 6 s.
	PairInterval time.Duration
	// ResendUnknownAfter, when set, is how long an unknown recipient waits for the
	// platform's report of its message before it is taken as never sent and is due again
	// (store.SettleBroadcastRecipients): no recipient is skipped when a process dies between
	// recording a message and the platform having the request, at the cost of a second send
	// when the platform's report comes later than this. Zero: never sent again.
	ResendUnknownAfter time.Duration
	// Lease is how long a claim holds recipients before another engine may take them.
	// Default 30 s.
	Lease time.Duration
	// SendTimeout bounds one platform call. Default 15 s.
	SendTimeout time.Duration
	// UnknownAfter is the age after which a recipient still marked sending (its process died)
	// is settled from its message (store.SettleBroadcastRecipients). Default 2 minutes; it must
	// exceed the longest a Sender's call takes (SendTimeout and what the Sender adds).
	UnknownAfter time.Duration
	// Poll is the time between claim rounds; pause, resume and cancel take effect within it.
	// Default 200 ms.
	Poll time.Duration
	// Batch is the most recipients one claim takes. Default 200.
	Batch int
	// Workers is the number of concurrent platform calls per number. Default 32.
	Workers int
	// MaxAttempts bounds the calls of one recipient refused for a passing reason. Default 20.
	MaxAttempts int
	// Logger receives the engine's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Defaults of Config.
const (
	DefaultThroughput   = 80
	DefaultShare        = 0.85
	DefaultPairInterval = 6 * time.Second
	DefaultLease        = 30 * time.Second
	DefaultSendTimeout  = 15 * time.Second
	DefaultUnknownAfter = 2 * time.Minute
	DefaultPoll         = 200 * time.Millisecond
	DefaultBatch        = 200
	DefaultWorkers      = 32
	DefaultMaxAttempts  = 20
)

// markTimeout bounds one statement of marks.
const markTimeout = 10 * time.Second

// sweepEvery is the time between sweeps (start due schedules, resume budget pauses, reconcile
// lost answers, complete finished broadcasts).
const sweepEvery = time.Second

// Engine is the broadcast service. Start it once; Stop ends it.
type Engine struct {
	cfg   Config
	store *store.Store
	log   *slog.Logger
	clock func() time.Time

	mu      sync.Mutex
	lanes   map[string]*lane   // by phone number id
	stop    context.CancelFunc // ends stopCtx: a graceful stop
	done    chan struct{}      // closed when run returns
	results chan store.RecipientResult
	wg      sync.WaitGroup // lanes' workers and the recorder
	// marks shares the statement of concurrent marks before the platform calls.
	marks *groupcommit.Batcher[store.RecipientMark, bool]
}

// New returns an engine over st. It starts nothing; it fails when cfg.Sender is nil.
func New(st *store.Store, cfg Config) (*Engine, error) {
	if cfg.Sender == nil {
		return nil, errors.New("broadcast: Config.Sender is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Share <= 0 || cfg.Share > 1 {
		cfg.Share = DefaultShare
	}
	if cfg.PairInterval == 0 {
		cfg.PairInterval = DefaultPairInterval
	}
	cfg.Lease = cmpOr(cfg.Lease, DefaultLease)
	cfg.SendTimeout = cmpOr(cfg.SendTimeout, DefaultSendTimeout)
	cfg.UnknownAfter = cmpOr(cfg.UnknownAfter, DefaultUnknownAfter)
	cfg.Poll = cmpOr(cfg.Poll, DefaultPoll)
	cfg.Batch = cmpOr(cfg.Batch, DefaultBatch)
	cfg.Workers = cmpOr(cfg.Workers, DefaultWorkers)
	cfg.MaxAttempts = cmpOr(cfg.MaxAttempts, DefaultMaxAttempts)
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	e := &Engine{cfg: cfg, store: st, log: log.With("service", "broadcast"), clock: cfg.Clock, lanes: map[string]*lane{}}
	e.marks = groupcommit.New(st.MarkBroadcastsSending, func(m store.RecipientMark) []any { return []any{m.ID} }, markTimeout)
	return e, nil
}

func cmpOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Start runs the engine until Stop, or until ctx ends: an ended ctx stops it abruptly, as a
// crash would (claims are left to their leases, answers not recorded yet are lost and
// reconciled by the next engine). Start fails when the engine already runs.
func (e *Engine) Start(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done != nil {
		return errors.New("broadcast: engine already started")
	}
	e.done = make(chan struct{})
	e.results = make(chan store.RecipientResult, 4*e.cfg.Batch)
	stopCtx, stop := context.WithCancel(ctx)
	e.stop = stop
	e.wg.Add(1)
	go e.record(ctx)
	go e.run(ctx, stopCtx)
	return nil
}

// Stop ends the engine gracefully: no new call starts, calls in flight finish and are
// recorded, and claimed recipients not called are given back. It returns when done or when
// ctx ends.
func (e *Engine) Stop(ctx context.Context) error {
	e.mu.Lock()
	stop, done := e.stop, e.done
	e.mu.Unlock()
	if stop == nil {
		return nil
	}
	stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run is the engine's loop: sweeps once a second and claim rounds every Poll. stopCtx ends at
// Stop (then run drains) or with ctx (then run just returns).
func (e *Engine) run(ctx, stopCtx context.Context) {
	defer close(e.done)
	tick := time.NewTicker(e.cfg.Poll)
	defer tick.Stop()
	var lastSweep time.Time
	for {
		if time.Since(lastSweep) >= sweepEvery {
			lastSweep = time.Now()
			e.sweep(stopCtx)
		}
		e.claimRound(ctx, stopCtx)
		select {
		case <-ctx.Done():
			return
		case <-stopCtx.Done():
			e.drain(ctx)
			return
		case <-tick.C:
		}
	}
}

// drain finishes a graceful stop: the lanes' workers end after their calls, the claims left
// in their queues are given back, and the recorder writes what it holds.
func (e *Engine) drain(ctx context.Context) {
	e.mu.Lock()
	lanes := make([]*lane, 0, len(e.lanes))
	for _, l := range e.lanes {
		lanes = append(lanes, l)
	}
	e.mu.Unlock()
	var back []store.RecipientRelease
	for _, l := range lanes {
		l.workers.Wait()
		back = append(back, l.leftovers(e.clock())...)
	}
	if err := e.store.ReleaseBroadcastRecipients(ctx, back); err != nil {
		e.log.Warn("give back claims", "err", err)
	}
	close(e.results)
	e.wg.Wait()
}

// sweep starts and resumes broadcasts whose time has come, settles lost answers, completes
// finished broadcasts and refreshes the numbers' throughput.
func (e *Engine) sweep(ctx context.Context) {
	now := e.clock()
	if _, err := e.store.ActivateBroadcasts(ctx, now); err != nil && ctx.Err() == nil {
		e.log.Warn("activate broadcasts", "err", err)
	}
	var resendBefore time.Time
	if e.cfg.ResendUnknownAfter > 0 {
		resendBefore = now.Add(-e.cfg.ResendUnknownAfter)
	}
	if c, err := e.store.SettleBroadcastRecipients(ctx, now.Add(-e.cfg.UnknownAfter), now, resendBefore); err != nil && ctx.Err() == nil {
		e.log.Warn("settle recipients", "err", err)
	} else if c != (store.SettleCounts{}) {
		e.log.Info("recipients settled from their messages", "due_again", c.Due, "sent", c.Sent, "failed", c.Failed, "unknown", c.Unknown)
	}
	if _, err := e.store.CompleteBroadcasts(ctx, now, e.cfg.ResendUnknownAfter > 0); err != nil && ctx.Err() == nil {
		e.log.Warn("complete broadcasts", "err", err)
	}
	e.mu.Lock()
	lanes := make([]*lane, 0, len(e.lanes))
	for _, l := range e.lanes {
		lanes = append(lanes, l)
	}
	e.mu.Unlock()
	for _, l := range lanes {
		l.setThroughput(e.throughput(ctx, l.number), e.cfg.Share)
	}
}

func (e *Engine) throughput(ctx context.Context, number string) int {
	if e.cfg.Throughput != nil {
		if t := e.cfg.Throughput(ctx, number); t > 0 {
			return t
		}
	}
	return DefaultThroughput
}

// claimRound tops up each running broadcast's lane with claimed recipients. Workers run
// under ctx for their calls and stopCtx for taking new work.
func (e *Engine) claimRound(ctx, stopCtx context.Context) {
	bs, err := e.store.RunningBroadcasts(stopCtx)
	if err != nil {
		if stopCtx.Err() == nil {
			e.log.Warn("list running broadcasts", "err", err)
		}
		return
	}
	// Passes over the broadcasts, one claim of at most Batch each, while a claim came back
	// full and its lane has room: a lane is topped up within a round, whatever the number's
	// throughput against Batch a Poll, and broadcasts sharing a number take turns.
	for range maxClaimPasses {
		next := bs[:0:0]
		for _, b := range bs {
			if e.claim(ctx, stopCtx, b) {
				next = append(next, b)
			}
		}
		if len(next) == 0 || stopCtx.Err() != nil {
			return
		}
		bs = next
	}
}

// maxClaimPasses bounds the claims of one broadcast in a round.
const maxClaimPasses = 8

// claim claims due recipients of b into its number's lane, as many as the lane has room for
// (at most Batch), and reports whether it got all it asked for (there may be more due).
func (e *Engine) claim(ctx, stopCtx context.Context, b store.Broadcast) (full bool) {
	l := e.lane(ctx, stopCtx, b.PhoneNumberID)
	room := min(l.room(e.cfg.Lease), e.cfg.Batch)
	if room <= 0 {
		return false
	}
	budget := 0
	if e.cfg.Budget != nil {
		budget = e.cfg.Budget(ctx, b.AccountID, b.Portfolio)
	}
	c, err := e.store.ClaimBroadcastRecipients(stopCtx, b.AccountID, b.ID, b.Portfolio, e.clock(), room, e.cfg.Lease, budget)
	if err != nil {
		if stopCtx.Err() == nil {
			e.log.Warn("claim recipients", "broadcast", b.ID, "err", err)
		}
		return false
	}
	if c.BudgetSpent {
		e.log.Info("portfolio budget spent: broadcast paused", "broadcast", b.ID, "resume_at", c.ResumeAt)
	}
	claimed := time.Now()
	for _, r := range c.Recipients {
		l.push(item{b: b, r: r, claimed: claimed})
	}
	return len(c.Recipients) == room && !c.BudgetSpent
}

// lane returns the number's lane, starting it.
func (e *Engine) lane(ctx, stopCtx context.Context, number string) *lane {
	e.mu.Lock()
	defer e.mu.Unlock()
	if l := e.lanes[number]; l != nil {
		return l
	}
	l := newLane(number, e.throughput(ctx, number), e.cfg)
	e.lanes[number] = l
	for range e.cfg.Workers {
		l.workers.Add(1)
		go e.work(ctx, stopCtx, l)
	}
	return l
}

// Params returns the body parameters of b for a recipient with vars: each fixed value, or the
// recipient's variable ("" when it has none of that name).
func Params(b store.Broadcast, vars map[string]string) []string {
	out := make([]string, len(b.Params))
	for i, p := range b.Params {
		if p.Variable != "" {
			out[i] = vars[p.Variable]
		} else {
			out[i] = p.Value
		}
	}
	return out
}

// recordEvery is the longest an outcome waits for its batch to be written: a statement for
// every few outcomes cost the counter trigger's fixed work each time (at 1,000 sends a second,
// 20 ms gave batches of a handful).
const recordEvery = 100 * time.Millisecond

// record writes the platform calls' outcomes in batches: when most are held, or every
// recordEvery.
func (e *Engine) record(ctx context.Context) {
	defer e.wg.Done()
	const most = 256
	batch := make([]store.RecipientResult, 0, most)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if err := e.store.RecordBroadcastResults(context.WithoutCancel(ctx), batch); err != nil {
			// The recipients stay 'sending' and are settled from their messages: never sent twice.
			e.log.Warn("record broadcast results", "count", len(batch), "err", err)
		}
		batch = batch[:0]
	}
	tick := time.NewTicker(recordEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return // abrupt: what is not written is lost, as in a crash
		case r, ok := <-e.results:
			if !ok {
				flush()
				return
			}
			batch = append(batch, r)
			if len(batch) == most {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}
