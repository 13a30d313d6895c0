package simulator

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"time"
)

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
