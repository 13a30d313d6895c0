package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

func (s *Simulator) controlNumbers(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		controlFail(w, http.StatusBadRequest, "numbers: %v", err)
		return
	}
	var list []Number
	if trimmed := bytes.TrimSpace(b); len(trimmed) > 0 && trimmed[0] == '[' {
		err = json.Unmarshal(trimmed, &list)
	} else {
		var n Number
		err = json.Unmarshal(b, &n)
		list = []Number{n}
	}
	if err != nil {
		controlFail(w, http.StatusBadRequest, "numbers: %v", err)
		return
	}
	for _, n := range list {
		if n.PhoneNumberID == "" || n.WabaID == "" || n.AccessToken == "" {
			controlFail(w, http.StatusBadRequest, "numbers: phone_number_id, waba_id and access_token are required")
			return
		}
	}
	for _, n := range list {
		s.AddNumber(n)
	}
	writeControl(w, http.StatusOK, map[string]any{"numbers": s.Numbers()})
}

func (s *Simulator) controlTemplates(w http.ResponseWriter, r *http.Request) {
	var b struct {
		WabaID    string     `json:"waba_id"`
		Templates []Template `json:"templates"`
		Defaults  bool       `json:"defaults"`
		Rich      bool       `json:"rich"`
	}
	if err := decodeControl(r, &b); err != nil {
		controlFail(w, http.StatusBadRequest, "templates: %v", err)
		return
	}
	if b.WabaID == "" {
		controlFail(w, http.StatusBadRequest, "templates: waba_id is required")
		return
	}
	for _, t := range b.Templates {
		if t.Name == "" || t.Language == "" {
			controlFail(w, http.StatusBadRequest, "templates: every template needs name and language")
			return
		}
	}
	if b.Defaults {
		s.SeedTemplates(b.WabaID, DefaultTemplates())
	}
	if b.Rich {
		s.SeedTemplates(b.WabaID, RichTemplates())
	}
	s.SeedTemplates(b.WabaID, b.Templates)
	writeControl(w, http.StatusOK, map[string]any{"data": s.Templates(b.WabaID)})
}

func (s *Simulator) configSnapshot() configBody {
	s.mu.Lock()
	set := s.set
	s.mu.Unlock()
	ms := func(d time.Duration) *int64 { v := d.Milliseconds(); return &v }
	return configBody{
		WebhookURL:         &set.webhookURL,
		SentDelayMS:        ms(set.sentDelay),
		DeliveredDelayMS:   ms(set.deliveredDelay),
		ReadDelayMS:        ms(set.readDelay),
		RatePerSecond:      &set.rate,
		PairIntervalMS:     ms(set.pairInterval),
		PairBurst:          &set.pairBurst,
		MessagingLimit:     &set.tier,
		MarketingUserLimit: &set.marketingLimit,
		EnforceWindow:      &set.enforceWindow,
		WindowSync:         &set.windowSync,
	}
}

func (s *Simulator) applyConfig(b configBody) {
	ms := func(v int64) time.Duration { return max(time.Duration(v)*time.Millisecond, 0) }
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.WebhookURL != nil {
		s.set.webhookURL = *b.WebhookURL
	}
	if b.SentDelayMS != nil {
		s.set.sentDelay = ms(*b.SentDelayMS)
	}
	if b.DeliveredDelayMS != nil {
		s.set.deliveredDelay = ms(*b.DeliveredDelayMS)
	}
	if b.ReadDelayMS != nil {
		s.set.readDelay = ms(*b.ReadDelayMS)
	}
	if b.RatePerSecond != nil {
		s.set.rate = max(*b.RatePerSecond, 0)
	}
	if b.PairBurst != nil {
		s.set.pairBurst = max(*b.PairBurst, 0)
	}
	if b.MessagingLimit != nil {
		s.set.tier = max(*b.MessagingLimit, 0)
	}
	if b.MarketingUserLimit != nil {
		s.set.marketingLimit = *b.MarketingUserLimit
	}
	if b.PairIntervalMS != nil {
		s.set.pairInterval = ms(*b.PairIntervalMS)
	}
	if b.EnforceWindow != nil {
		s.set.enforceWindow = *b.EnforceWindow
	}
	if b.WindowSync != nil {
		s.set.windowSync = *b.WindowSync
	}
}

// VerifyWebhook performs Meta's subscription handshake against the webhook
// URL: GET <url>?hub.mode=subscribe&hub.verify_token=<token>&hub.challenge=<random>.
// It returns the challenge when the receiver answered 200 with exactly that
// challenge as the body; otherwise it fails with ErrNoWebhookURL, the
// transport error, or an error describing the status and body received.
func (s *Simulator) VerifyWebhook(ctx context.Context, verifyToken string) (challenge string, err error) {
	raw := s.webhookURL()
	if raw == "" {
		return "", ErrNoWebhookURL
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("simulator: webhook URL: %w", err)
	}
	challenge = strconv.FormatUint(rand.Uint64N(10_000_000_000), 10)
	q := u.Query()
	q.Set("hub.mode", "subscribe")
	q.Set("hub.verify_token", verifyToken)
	q.Set("hub.challenge", challenge)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("simulator: verification request: %w", err)
	}
	req.Header.Set("User-Agent", "facebookplatform/1.0 (+http://developers.facebook.com)")
	resp, err := s.hooks.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("simulator: verification GET: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || string(body) != challenge {
		return "", fmt.Errorf("simulator: verification answered %d with %q, want 200 with %q", resp.StatusCode, body, challenge)
	}
	return challenge, nil
}
