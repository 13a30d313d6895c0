package simulator

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
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

// SecondCount is one clock second of a number's traffic.
type SecondCount struct {
	Second  time.Time `json:"second"`
	Sends   int       `json:"sends"`   // sends accepted
	Inbound int       `json:"inbound"` // inbound messages (they count against throughput too)
}

// SendsPerSecond returns the seconds of the last hour (by Config.Clock) in which the number
// accepted sends or received messages, oldest first.
func (s *Simulator) SendsPerSecond(phoneNumberID string) []SecondCount {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.limits[phoneNumberID]
	if l == nil {
		return nil
	}
	now := s.clock().Unix()
	var out []SecondCount
	for sec := now - rateSeconds + 1; sec <= now; sec++ {
		i := int(sec % rateSeconds)
		if l.ring.stamp[i] == sec && (l.ring.sends[i] > 0 || l.ring.inbound[i] > 0) {
			out = append(out, SecondCount{Second: time.Unix(sec, 0).UTC(), Sends: int(l.ring.sends[i]), Inbound: int(l.ring.inbound[i])})
		}
	}
	return out
}

// MaxSendsPerSecond returns the most sends the number accepted in one clock second of the last
// hour.
func (s *Simulator) MaxSendsPerSecond(phoneNumberID string) int {
	most := 0
	for _, c := range s.SendsPerSecond(phoneNumberID) {
		most = max(most, c.Sends)
	}
	return most
}

// NumberLimits are a number's effective sending limits.
type NumberLimits struct {
	PhoneNumberID string `json:"phone_number_id"`
	// Throughput in messages per second (0 = unlimited).
	Throughput int `json:"throughput"`
	// PairIntervalMS and PairBurst: one message per interval to the same recipient, bursts up
	// to PairBurst (interval 0 = no pair limit).
	PairIntervalMS int64 `json:"pair_interval_ms"`
	PairBurst      int   `json:"pair_burst"`
	// UpgradingUntil is the end of a throughput upgrade in progress (131057 until then).
	UpgradingUntil *time.Time `json:"upgrading_until,omitempty"`
	// Portfolio is the business portfolio whose messaging limit the number shares.
	Portfolio string `json:"portfolio"`
}

// Limits returns the number's effective limits at the simulator's clock.
func (s *Simulator) Limits(phoneNumberID string) (NumberLimits, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.numbers[phoneNumberID]
	if !ok {
		return NumberLimits{}, fmt.Errorf("%w: %q", ErrUnknownNumber, phoneNumberID)
	}
	l := s.limitsOf(phoneNumberID)
	now := s.clock()
	out := NumberLimits{
		PhoneNumberID:  phoneNumberID,
		Throughput:     s.throughputOf(n),
		PairIntervalMS: cmp.Or(l.pairInterval, s.set.pairInterval).Milliseconds(),
		PairBurst:      cmp.Or(l.pairBurst, s.set.pairBurst, 1),
		Portfolio:      portfolioID(n),
	}
	if now.Before(l.upgradeUntil) {
		u := l.upgradeUntil
		out.UpgradingUntil = &u
	}
	return out, nil
}

// SetThroughput sets the number's messages per second (ThroughputStandard, ThroughputHigh,
// ThroughputCoexistence or any other; 0 = Config.RatePerSecond). It ends an upgrade window.
func (s *Simulator) SetThroughput(phoneNumberID string, perSecond int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.numbers[phoneNumberID]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownNumber, phoneNumberID)
	}
	n.Throughput = max(perSecond, 0)
	s.numbers[phoneNumberID] = n
	s.limitsOf(phoneNumberID).upgradeUntil = time.Time{}
	return nil
}

// SetPairLimit sets the number's pair rate: one message per interval to the same recipient,
// bursts up to burst (0 values = Config's PairInterval and PairBurst).
func (s *Simulator) SetPairLimit(phoneNumberID string, interval time.Duration, burst int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.numbers[phoneNumberID]; !ok {
		return fmt.Errorf("%w: %q", ErrUnknownNumber, phoneNumberID)
	}
	l := s.limitsOf(phoneNumberID)
	l.pairInterval, l.pairBurst = max(interval, 0), max(burst, 0)
	return nil
}

// UpgradeThroughput starts the automatic throughput upgrade of a number: for window (0 =
// DefaultUpgradeWindow, by Config.Clock) every send answers 131057, then the number sends at
// ThroughputHigh. It POSTs phone_number_quality_update with event THROUGHPUT_UPGRADE when a
// webhook URL is set, and fails with ErrUnknownNumber or the delivery's last error.
func (s *Simulator) UpgradeThroughput(phoneNumberID string, window time.Duration) error {
	s.mu.Lock()
	n, ok := s.numbers[phoneNumberID]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrUnknownNumber, phoneNumberID)
	}
	s.limitsOf(phoneNumberID).upgradeUntil = s.clock().Add(cmpOr(window, DefaultUpgradeWindow))
	n.Throughput = ThroughputHigh
	s.numbers[phoneNumberID] = n
	s.mu.Unlock()
	return s.qualityWebhook(n, "THROUGHPUT_UPGRADE")
}

// PortfolioState is a business portfolio's messaging limit and its use.
type PortfolioState struct {
	Portfolio string `json:"portfolio"`
	// Limit is the unique recipients per moving 24 h (0 = unlimited).
	Limit int `json:"limit"`
	// Used is the unique recipients reached outside a window in the last 24 h.
	Used int `json:"used"`
	// Dropped counts sends accepted past the limit and never delivered.
	Dropped int `json:"dropped"`
	// MarketingLimit: the per-user marketing limit (131049) is enforced.
	MarketingLimit bool `json:"marketing_limit"`
}

// SetPortfolio sets a business portfolio's messaging limit (Tier250 ... TierUnlimited, or any
// count) and whether the per-user marketing limit applies. portfolio is a Number's BusinessID,
// or its WABA id when it has none. Counts already made are kept.
func (s *Simulator) SetPortfolio(portfolio string, limit int, marketingLimit bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.portfolioOf(portfolio)
	p.limit, p.marketing = max(limit, 0), marketingLimit
}

// Portfolio returns a business portfolio's messaging limit and use at the simulator's clock.
func (s *Simulator) Portfolio(portfolio string) PortfolioState {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.portfolioOf(portfolio)
	p.expire(s.clock())
	return PortfolioState{Portfolio: portfolio, Limit: p.limit, Used: p.used, Dropped: p.dropped, MarketingLimit: p.marketing}
}

// qualityWebhook POSTs phone_number_quality_update for the number (nothing without a webhook
// URL or subscription).
func (s *Simulator) qualityWebhook(n Number, event string) error {
	s.mu.Lock()
	hookURL := s.set.webhookURL
	now := s.clock()
	s.mu.Unlock()
	if hookURL == "" || !s.subscribed(n.WabaID) {
		return nil
	}
	env := envelope{Object: "whatsapp_business_account", Entry: []entry{{ID: n.WabaID, Time: now.Unix(), Changes: []change{{
		Field: "phone_number_quality_update",
		Value: map[string]any{"display_phone_number": displayDigits(n.DisplayPhoneNumber), "event": cmp.Or(event, "FLAGGED"),
			"current_limit": cmp.Or(n.MessagingLimitTier, "TIER_1K")},
	}}}}}
	body, err := metaJSON(env)
	if err != nil {
		return fmt.Errorf("simulator: quality update payload: %w", err)
	}
	return s.hooks.deliverNow(context.Background(), body)
}

// controlLimits serves /_sim/limits, /_sim/upgrade, /_sim/portfolio and /_sim/rate.
func (s *Simulator) controlLimits(w http.ResponseWriter, r *http.Request, route string) {
	q := r.URL.Query()
	if r.Method == http.MethodGet {
		switch route {
		case "limits":
			s.writeLimits(w, q.Get("phone_number_id"), nil)
		case "portfolio":
			writeControl(w, http.StatusOK, s.Portfolio(q.Get("id")))
		case "rate":
			id := q.Get("phone_number_id")
			lim, err := s.Limits(id)
			if err != nil {
				controlFail(w, http.StatusNotFound, "%v", err)
				return
			}
			data := s.SendsPerSecond(id)
			most := 0
			for _, c := range data {
				most = max(most, c.Sends)
			}
			if data == nil {
				data = []SecondCount{}
			}
			writeControl(w, http.StatusOK, map[string]any{"data": data, "max_sends": most, "throughput": lim.Throughput})
		default:
			w.Header().Set("Allow", http.MethodPost)
			controlFail(w, http.StatusMethodNotAllowed, "GET /_sim/%s: method not allowed", route)
		}
		return
	}
	if r.Method != http.MethodPost || route == "rate" {
		allow := http.MethodPost
		if route == "rate" {
			allow = http.MethodGet
		}
		w.Header().Set("Allow", allow)
		controlFail(w, http.StatusMethodNotAllowed, "%s /_sim/%s: method not allowed", r.Method, route)
		return
	}
	var b struct {
		PhoneNumberID  string `json:"phone_number_id"`
		Throughput     *int   `json:"throughput"`
		PairIntervalMS *int64 `json:"pair_interval_ms"`
		PairBurst      *int   `json:"pair_burst"`
		WindowMS       int64  `json:"window_ms"`
		ID             string `json:"id"`
		Tier           string `json:"tier"`
		Limit          *int   `json:"limit"`
		MarketingLimit *bool  `json:"marketing_limit"`
	}
	if err := decodeControl(r, &b); err != nil {
		controlFail(w, http.StatusBadRequest, "%s: %v", route, err)
		return
	}
	switch route {
	case "limits":
		s.writeLimits(w, b.PhoneNumberID, func() error {
			if b.Throughput != nil {
				if err := s.SetThroughput(b.PhoneNumberID, *b.Throughput); err != nil {
					return err
				}
			}
			if b.PairIntervalMS != nil || b.PairBurst != nil {
				s.mu.Lock()
				l := s.limitsOf(b.PhoneNumberID)
				interval, burst := l.pairInterval, l.pairBurst
				s.mu.Unlock()
				if b.PairIntervalMS != nil {
					interval = time.Duration(*b.PairIntervalMS) * time.Millisecond
				}
				if b.PairBurst != nil {
					burst = *b.PairBurst
				}
				return s.SetPairLimit(b.PhoneNumberID, interval, burst)
			}
			return nil
		})
	case "upgrade":
		s.writeLimits(w, b.PhoneNumberID, func() error {
			return s.UpgradeThroughput(b.PhoneNumberID, time.Duration(b.WindowMS)*time.Millisecond)
		})
	case "portfolio":
		if b.ID == "" {
			controlFail(w, http.StatusBadRequest, "portfolio: id is required")
			return
		}
		cur := s.Portfolio(b.ID)
		limit, marketing := cur.Limit, cur.MarketingLimit
		switch {
		case b.Tier != "":
			l, ok := ParseTier(b.Tier)
			if !ok {
				controlFail(w, http.StatusBadRequest, "portfolio: unknown tier %q (TIER_250, TIER_2K, TIER_10K, TIER_100K, TIER_UNLIMITED)", b.Tier)
				return
			}
			limit = l
		case b.Limit != nil:
			limit = *b.Limit
		}
		if b.MarketingLimit != nil {
			marketing = *b.MarketingLimit
		}
		s.SetPortfolio(b.ID, limit, marketing)
		writeControl(w, http.StatusOK, s.Portfolio(b.ID))
	}
}

// writeLimits applies change (when not nil) and answers the number's limits: 404 for an
// unknown number, 502 when a webhook could not be delivered.
func (s *Simulator) writeLimits(w http.ResponseWriter, phoneID string, change func() error) {
	if _, err := s.Limits(phoneID); err != nil {
		controlFail(w, http.StatusNotFound, "%v", err)
		return
	}
	if change != nil {
		if err := change(); err != nil {
			controlFail(w, http.StatusBadGateway, "%v", err)
			return
		}
	}
	lim, err := s.Limits(phoneID)
	if err != nil {
		controlFail(w, http.StatusNotFound, "%v", err)
		return
	}
	writeControl(w, http.StatusOK, lim)
}
