package simulator

import (
	"cmp"
	"strings"
	"time"
)

// The platform's limits on bulk sending (reference §5 and §14), enforced per phone number and
// per business portfolio:
//
//   - throughput: at most the number's messages per second (sends and inbound messages of the
//     same clock second); a send over it fails at once with 130429;
//   - pair rate: a token bucket per (number, recipient) refilled one message per pair
//     interval, holding up to the pair burst; a send with no token fails at once with 131056;
//   - the portfolio's messaging limit: unique recipients reached outside a customer-service
//     window in a moving 24 h. No error code is documented for it, so a template send to a new
//     recipient past the limit is accepted (200 and a wamid) and then never delivered: no
//     status webhook follows and SentMessage.Dropped says why;
//   - the per-user marketing limit: a marketing template to a user who got one in the last
//     24 h is accepted and then fails (async) with 131049; the refused send restarts that 24 h.
//     Marketing templates to US (+1) numbers fail the same way;
//   - a throughput upgrade: for its window the number answers 131057, then sends at 1,000/s.
//
// Counters are fixed-size: one slot per clock second per number, one per minute per portfolio.

// Throughput levels of a phone number, in messages per second (reference §14).
const (
	ThroughputStandard    = 80
	ThroughputHigh        = 1000
	ThroughputCoexistence = 20
)

// DefaultUpgradeWindow is how long a throughput upgrade keeps a number unusable (131057).
const DefaultUpgradeWindow = time.Minute

// Messaging limits of a business portfolio: unique recipients reached outside a window in a
// moving 24 h. TierUnlimited (0) disables the budget.
const (
	Tier250       = 250
	Tier2K        = 2_000
	Tier10K       = 10_000
	Tier100K      = 100_000
	TierUnlimited = 0
)

// DroppedMessagingLimit is SentMessage.Dropped for a send accepted past the portfolio's
// messaging limit and never delivered.
const DroppedMessagingLimit = "messaging_limit"

// tierNames maps the platform's tier names (max_daily_conversations_per_business) to limits.
var tierNames = map[string]int{
	"TIER_250": Tier250, "TIER_2K": Tier2K, "TIER_10K": Tier10K, "TIER_100K": Tier100K, "TIER_UNLIMITED": TierUnlimited,
}

// ParseTier returns the limit of a tier name (TIER_250 ... TIER_UNLIMITED, any case).
func ParseTier(name string) (limit int, ok bool) {
	limit, ok = tierNames[strings.ToUpper(strings.TrimSpace(name))]
	return limit, ok
}

// maxTracked is the size past which the per-recipient maps (pair buckets, last marketing
// sends) forget the entries that no longer matter before growing.
const maxTracked = 100_000

// rateSeconds is how many clock seconds of send counts each number keeps.
const rateSeconds = 3600

// secondRing counts one number's traffic per clock second over the last rateSeconds.
type secondRing struct {
	stamp   [rateSeconds]int64 // the unix second a slot counts; a stale slot is empty
	sends   [rateSeconds]int32 // sends accepted (or reserved while being checked)
	inbound [rateSeconds]int32 // inbound messages
}

// slot returns the index for unix second sec, clearing it when it held an older second.
func (r *secondRing) slot(sec int64) int {
	i := int(sec % rateSeconds)
	if r.stamp[i] != sec {
		r.stamp[i], r.sends[i], r.inbound[i] = sec, 0, 0
	}
	return i
}

// numberLimits are a number's limit overrides and counters.
type numberLimits struct {
	ring         secondRing
	pairInterval time.Duration // 0 = Config's
	pairBurst    int           // 0 = Config's
	upgradeUntil time.Time     // the end of a throughput upgrade: 131057 before it
}

// pairBucket is the token bucket of one (number, recipient) pair.
type pairBucket struct {
	tokens float64
	last   time.Time
}

// take refills one token per interval up to burst and takes one; false when none is left.
func (b *pairBucket) take(now time.Time, interval time.Duration, burst int) bool {
	if b.last.IsZero() {
		b.tokens, b.last = float64(burst), now
	}
	if now.After(b.last) {
		b.tokens = min(float64(burst), b.tokens+float64(now.Sub(b.last))/float64(interval))
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// budgetMinutes is the moving window of a portfolio's messaging limit, in one-minute slots.
const budgetMinutes = 24 * 60

// portfolio is a business portfolio's messaging limit, its marketing limit and their state.
type portfolio struct {
	limit     int  // unique recipients per moving 24 h; 0 = unlimited
	marketing bool // enforce the per-user marketing limit (131049)

	reached map[string]int64 // recipient → unix second it was first counted in the window
	stamp   [budgetMinutes]int64
	count   [budgetMinutes]int32
	used    int   // recipients counted in the last 24 h
	swept   int64 // the minute expire last ran
	dropped int   // sends accepted past the limit and not delivered

	lastMarketing  map[string]time.Time // recipient → last marketing template (or refused resend)
	marketingSweep int                  // the size at which lastMarketing is next swept
}

func newPortfolio() *portfolio {
	return &portfolio{reached: map[string]int64{}, lastMarketing: map[string]time.Time{}}
}

// expire drops the minutes that left the moving 24 h before now from used.
func (p *portfolio) expire(now time.Time) {
	minute := now.Unix() / 60
	if minute == p.swept {
		return
	}
	p.swept = minute
	for i := range p.stamp {
		if p.stamp[i] != 0 && p.stamp[i] <= minute-budgetMinutes {
			p.used -= int(p.count[i])
			p.stamp[i], p.count[i] = 0, 0
		}
	}
}

// reach counts recipient as reached at now unless it already was in the last 24 h. It
// reports false, counting nothing, when the recipient is new and the limit is used up.
func (p *portfolio) reach(recipient string, now time.Time) bool {
	if p.limit <= 0 {
		return true
	}
	sec := now.Unix()
	p.expire(now)
	// Already counted while its minute is still in the window (the same test expire uses).
	if at, ok := p.reached[recipient]; ok && at/60 > sec/60-budgetMinutes {
		return true
	}
	if p.used >= p.limit {
		return false
	}
	if len(p.reached) > 2*p.used+1024 {
		for r, at := range p.reached {
			if at/60 <= sec/60-budgetMinutes {
				delete(p.reached, r)
			}
		}
	}
	p.reached[recipient] = sec
	minute := sec / 60
	i := int(minute % budgetMinutes)
	if p.stamp[i] != minute {
		p.used -= int(p.count[i]) // an expired minute still counted
		p.stamp[i], p.count[i] = minute, 0
	}
	p.count[i]++
	p.used++
	return true
}

// marketingRefused applies the per-user marketing limit to a marketing template to waID at
// now: refused within 24 h of the last one (which restarts the 24 h) and always for US
// numbers.
func (p *portfolio) marketingRefused(waID string, now time.Time) bool {
	if !p.marketing {
		return false
	}
	if strings.HasPrefix(waID, "1") {
		return true
	}
	last, ok := p.lastMarketing[waID]
	if !ok && len(p.lastMarketing) >= max(p.marketingSweep, maxTracked) {
		for r, at := range p.lastMarketing {
			if now.Sub(at) >= 24*time.Hour {
				delete(p.lastMarketing, r)
			}
		}
		p.marketingSweep = 2 * len(p.lastMarketing)
	}
	p.lastMarketing[waID] = now
	return ok && now.Sub(last) < 24*time.Hour
}

// portfolioID is the portfolio a number belongs to: its BusinessID, else its WABA.
func portfolioID(n Number) string { return cmp.Or(n.BusinessID, n.WabaID) }

// limitsOf returns the number's limit state, creating it. Caller holds mu.
func (s *Simulator) limitsOf(phoneID string) *numberLimits {
	l := s.limits[phoneID]
	if l == nil {
		l = &numberLimits{}
		s.limits[phoneID] = l
	}
	return l
}

// portfolioOf returns the portfolio's state, creating it with Config's defaults. Caller holds mu.
func (s *Simulator) portfolioOf(id string) *portfolio {
	p := s.portfolios[id]
	if p == nil {
		p = newPortfolio()
		p.limit, p.marketing = s.set.tier, s.set.marketingLimit
		s.portfolios[id] = p
	}
	return p
}

// throughputOf is the number's messages per second (0 = unlimited). Caller holds mu.
func (s *Simulator) throughputOf(n Number) int {
	if n.Throughput > 0 {
		return n.Throughput
	}
	return s.set.rate
}

// reserveSend checks the number's upgrade window and throughput at now and, when the send may
// go on, counts it in its second. It returns the refusal, or a release func that uncounts the
// send if it is refused later. Caller holds mu.
func (s *Simulator) reserveSend(n Number, now time.Time) (release func(), ge *graphError) {
	l := s.limitsOf(n.PhoneNumberID)
	if now.Before(l.upgradeUntil) {
		return nil, waError(131057, "")
	}
	sec := now.Unix()
	i := l.ring.slot(sec)
	if limit := s.throughputOf(n); limit > 0 && int(l.ring.sends[i]+l.ring.inbound[i]) >= limit {
		return nil, waError(130429, "")
	}
	l.ring.sends[i]++
	return func() {
		if l.ring.stamp[i] == sec {
			l.ring.sends[i]--
		}
	}, nil
}

// countInbound counts an inbound message against the number's throughput. Caller holds mu.
func (s *Simulator) countInbound(phoneID string, now time.Time) {
	l := s.limitsOf(phoneID)
	l.ring.inbound[l.ring.slot(now.Unix())]++
}

// pairAllowed takes a token of the (number, recipient) pair. Caller holds mu.
func (s *Simulator) pairAllowed(phoneID, recipient string, now time.Time) bool {
	l := s.limitsOf(phoneID)
	interval := cmp.Or(l.pairInterval, s.set.pairInterval)
	if interval <= 0 {
		return true
	}
	burst := cmp.Or(l.pairBurst, s.set.pairBurst, 1)
	key := phoneID + "|" + recipient
	b := s.pairs[key]
	if b == nil && len(s.pairs) >= max(s.pairSweep, maxTracked) {
		// Forget pairs whose bucket is full again: they behave as new ones.
		for k, o := range s.pairs {
			if now.Sub(o.last) >= time.Duration(burst)*interval {
				delete(s.pairs, k)
			}
		}
		s.pairSweep = 2 * len(s.pairs) // amortised: the next sweep waits for as many new pairs
	}
	if b == nil {
		b = &pairBucket{}
		s.pairs[key] = b
	}
	return b.take(now, interval, burst)
}
