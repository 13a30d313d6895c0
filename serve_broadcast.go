package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"gateway/platform/whatsapp"
	"gateway/server"
	"gateway/server/broadcast"
	"gateway/server/domain"
	"gateway/store"
)

// broadcastConfig is the broadcast engine's settings: GATEWAY_BROADCAST_LEASE (how long a
// claim holds recipients, default 30s), GATEWAY_BROADCAST_UNKNOWN_AFTER (when a recipient
// left sending by a process that died is settled from its message, default 2m; it must exceed
// PLATFORM_TIMEOUT and the send's recording), GATEWAY_BROADCAST_SHARE (the part of a number's
// throughput broadcasts use, leaving the rest to API sends, default 0.85) and
// GATEWAY_BROADCAST_RESEND_UNKNOWN_AFTER (how long an unknown recipient waits for the
// platform's report before it is sent again; unset: never, see broadcast.Config).
type broadcastConfig struct {
	Lease              time.Duration
	UnknownAfter       time.Duration
	Share              float64
	ResendUnknownAfter time.Duration
}

func loadBroadcastConfig(getenv func(string) string) (broadcastConfig, error) {
	c := broadcastConfig{Lease: broadcast.DefaultLease, UnknownAfter: broadcast.DefaultUnknownAfter, Share: broadcast.DefaultShare}
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{{"GATEWAY_BROADCAST_LEASE", &c.Lease}, {"GATEWAY_BROADCAST_UNKNOWN_AFTER", &c.UnknownAfter},
		{"GATEWAY_BROADCAST_RESEND_UNKNOWN_AFTER", &c.ResendUnknownAfter}} {
		if v := getenv(d.name); v != "" {
			p, err := time.ParseDuration(v)
			if err != nil || p <= 0 {
				return c, fmt.Errorf("%s: want a positive duration", d.name)
			}
			*d.dst = p
		}
	}
	if v := getenv("GATEWAY_BROADCAST_SHARE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 1 {
			return c, fmt.Errorf("GATEWAY_BROADCAST_SHARE: want a number above 0 and at most 1")
		}
		c.Share = f
	}
	return c, nil
}

// newBroadcastEngine builds the broadcast engine over the gateway's send path (each
// recipient's key bound to its message: see server.BroadcastSender), paced by what the
// platform reports of each number.
func newBroadcastEngine(st *store.Store, srv *server.Server, limits *numberLimits, cfg broadcastConfig, logger *slog.Logger) (*broadcastService, error) {
	e, err := broadcast.New(st, broadcast.Config{Sender: srv.BroadcastSender(), Throughput: limits.throughput,
		Budget: limits.budget, Share: cfg.Share, Lease: cfg.Lease, UnknownAfter: cfg.UnknownAfter,
		ResendUnknownAfter: cfg.ResendUnknownAfter, Logger: logger})
	if err != nil {
		return nil, err
	}
	return &broadcastService{e: e}, nil
}

// broadcastService is the engine in the worker.Service shape. The engine runs apart from the
// serving context: a shutdown stops it through Stop, which lets the calls in flight finish and
// gives the claimed recipients back (broadcast.Engine.Stop).
type broadcastService struct{ e *broadcast.Engine }

func (b *broadcastService) Start(ctx context.Context) error {
	return b.e.Start(context.WithoutCancel(ctx))
}

// broadcastStopTimeout bounds a graceful stop of the engine.
const broadcastStopTimeout = 30 * time.Second

func (b *broadcastService) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), broadcastStopTimeout)
	defer cancel()
	_ = b.e.Stop(ctx) // past the timeout the claims lapse with their leases
}

// numberLimitsTTL is how long what the platform said of a number's throughput and tier is used.
const numberLimitsTTL = 5 * time.Minute

// numberLimits reads a number's throughput level and its portfolio's messaging limit tier
// from the platform (GET /{phone-number-id}?fields=throughput,messaging_limit_tier), cached.
type numberLimits struct {
	st  *store.Store
	wa  *whatsapp.Client
	ttl time.Duration

	mu sync.Mutex
	m  map[string]numberLimit // by phone number id
}

type numberLimit struct {
	domain.NumberLimits // 0: not known (throughput), unlimited (budget)
	at                  time.Time
}

func newNumberLimits(st *store.Store, wa *whatsapp.Client) *numberLimits {
	return &numberLimits{st: st, wa: wa, ttl: numberLimitsTTL, m: map[string]numberLimit{}}
}

// Throughput levels as the platform reports them, in messages per second.
var throughputLevels = map[string]int{"STANDARD": 80, "HIGH": 1000, "COEXISTENCE": 20}

func (n *numberLimits) throughput(ctx context.Context, phoneNumberID string) int {
	return n.read(ctx, phoneNumberID, func(ctx context.Context) (store.Connection, error) {
		return n.st.ConnectionByPhoneNumberID(ctx, phoneNumberID)
	}).Throughput
}

// of is the account's number's limits (domain.Broadcasts.Limits).
func (n *numberLimits) of(ctx context.Context, accountID int64, phoneNumberID string) domain.NumberLimits {
	return n.read(ctx, phoneNumberID, func(ctx context.Context) (store.Connection, error) {
		return n.st.ConnectionByAccount(ctx, accountID)
	}).NumberLimits
}

func (n *numberLimits) budget(ctx context.Context, accountID int64, portfolio string) int {
	if portfolio == "" {
		return 0 // a test-mode broadcast
	}
	c, err := n.st.ConnectionByAccount(ctx, accountID)
	if err != nil {
		return 0
	}
	return n.read(ctx, c.PhoneNumberID, func(context.Context) (store.Connection, error) { return c, nil }).Budget
}

func (n *numberLimits) read(ctx context.Context, phoneNumberID string, conn func(context.Context) (store.Connection, error)) numberLimit {
	n.mu.Lock()
	l, ok := n.m[phoneNumberID]
	n.mu.Unlock()
	if ok && time.Since(l.at) < n.ttl {
		return l
	}
	l.at = time.Now() // a failed read is not retried before the ttl: the last figures stand
	if c, err := conn(ctx); err == nil {
		if num, err := n.wa.PhoneNumber(ctx, c.AccessToken, phoneNumberID); err == nil {
			l.Throughput = throughputLevels[strings.ToUpper(num.ThroughputLevel)]
			l.Budget = tierLimit(num.MessagingLimitTier)
		}
	}
	n.mu.Lock()
	n.m[phoneNumberID] = l
	n.mu.Unlock()
	return l
}

// tierLimit is a messaging limit tier's unique recipients per 24 h (TIER_250, TIER_2K,
// TIER_10K, TIER_100K); 0 for TIER_UNLIMITED and anything not understood.
func tierLimit(tier string) int {
	t, ok := strings.CutPrefix(strings.ToUpper(tier), "TIER_")
	if !ok {
		return 0
	}
	mult := 1
	if k, found := strings.CutSuffix(t, "K"); found {
		t, mult = k, 1000
	}
	n, err := strconv.Atoi(t)
	if err != nil || n <= 0 {
		return 0
	}
	return n * mult
}
