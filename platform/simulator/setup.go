package simulator

import (
	"context"
	"slices"
	"strconv"
	"strings"
)

// AddNumber registers (or replaces) a business phone number and its token.
func (s *Simulator) AddNumber(n Number) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.numbers[n.PhoneNumberID]; ok {
		s.dropToken(old.AccessToken)
	}
	s.numbers[n.PhoneNumberID] = n
	s.tokens[n.AccessToken]++
}

func (s *Simulator) dropToken(tok string) {
	if s.tokens[tok]--; s.tokens[tok] <= 0 {
		delete(s.tokens, tok)
	}
}

// Numbers returns the registered numbers, sorted by phone number id.
func (s *Simulator) Numbers() []Number {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Number, 0, len(s.numbers))
	for _, n := range s.numbers {
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b Number) int { return strings.Compare(a.PhoneNumberID, b.PhoneNumberID) })
	return out
}

// SeedTemplates adds templates to a WABA. A template with the same name and
// language as a stored one replaces it in place; others are appended (the
// listing order). Empty IDs get a fresh numeric id, an empty Status becomes
// APPROVED, an empty ParameterFormat POSITIONAL. Templates whose components
// cannot be encoded as JSON are skipped.
func (s *Simulator) SeedTemplates(wabaID string, ts []Template) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range ts {
		n, err := normalizeTemplate(t)
		if err != nil {
			continue
		}
		if n.ID == "" {
			s.nextTplID++
			n.ID = strconv.FormatInt(s.nextTplID, 10)
		}
		st := &storedTemplate{t: n, spec: parseSpec(n)}
		list := s.templates[wabaID]
		i := slices.IndexFunc(list, func(o *storedTemplate) bool {
			return o.t.Name == n.Name && o.t.Language == n.Language
		})
		if i >= 0 {
			list[i] = st
		} else {
			list = append(list, st)
		}
		s.templates[wabaID] = list
	}
}

// Templates returns copies of a WABA's templates in listing order (nil for
// an unknown WABA).
func (s *Simulator) Templates(wabaID string) []Template {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Template
	for _, st := range s.templates[wabaID] {
		out = append(out, copyTemplate(st.t))
	}
	return out
}

// Script sets the outcome of every later send to recipient. Recipients are
// compared by wa_id, so "+52 55 1234 5678" and "5215512345678" are the same
// recipient; a business-scoped user id scripts sends to that id whose number
// is not known. The zero Outcome removes the script.
func (s *Simulator) Script(recipient string, o Outcome) {
	d := WaIDFor(onlyDigits(recipient))
	if isUserID(recipient) {
		d = recipient
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if o == (Outcome{}) {
		delete(s.scripts, d)
		return
	}
	s.scripts[d] = o
}

// MarkedRead returns the wamids the business marked read, oldest first.
func (s *Simulator) MarkedRead() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.markedRead)
}

// Sent returns a copy of every accepted send, oldest first (bounded by
// Config.MaxSent).
func (s *Simulator) Sent() []SentMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

// Reset clears the traffic state: the sent log, scripts, per-number and
// portfolio limits and their counters, handsets and their customer-service windows, and media.
// With all it also removes every number and template. Configuration and
// queued webhooks are kept.
func (s *Simulator) Reset(all bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = nil
	s.scripts = map[string]Outcome{}
	s.limits = map[string]*numberLimits{}
	s.pairs = map[string]*pairBucket{}
	s.pairSweep = 0
	s.portfolios = map[string]*portfolio{}
	s.byWaID = map[string]*Handset{}
	s.byUserID = map[string]*Handset{}
	s.windows = map[string]window{}
	s.media = map[string]*mediaObject{}
	s.mediaURLs = map[string]mediaURL{}
	s.markedRead = nil
	if all {
		s.numbers = map[string]Number{}
		s.tokens = map[string]int{}
		s.templates = map[string][]*storedTemplate{}
		s.onb = onboarding{}
	}
}

// WebhookStats returns the webhook delivery counters.
func (s *Simulator) WebhookStats() WebhookStats { return s.hooks.snapshot() }

// WaitIdle blocks until no webhook is queued or in flight (including status
// sequences still waiting for their delays). It returns ctx's error if ctx
// ends first, and ErrClosed after Close.
func (s *Simulator) WaitIdle(ctx context.Context) error { return s.hooks.waitIdle(ctx) }
