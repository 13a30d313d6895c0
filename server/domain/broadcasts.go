package domain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"gateway/server/refusal"
	"gateway/store"
)

// Broadcasts: one approved template to many recipients, sent by the broadcast engine
// (server/broadcast), which the process wiring starts. These are the operations the API (and
// later the dashboard) call: check a broadcast before it is made (the pre-flight), create it,
// read its progress, pause, resume and cancel it, and page through its recipients. A key's
// mode decides, once, what a broadcast's template resolves to (BroadcastTarget): the
// account's number and approved templates for a live key, the sandbox fixtures for a test key
// (then every send is simulated).

// MaxInlineRecipients is the most recipients one create lists inline.
const MaxInlineRecipients = 10_000

// BroadcastTarget is what a broadcast's template resolved to for the key's mode.
type BroadcastTarget struct {
	PhoneNumberID string
	Portfolio     string // the portfolio whose 24 h budget the sends use ("" for none)
	Template      store.Template
	Test          bool
}

// BroadcastRequest is a broadcast to check or create, as the caller gave it.
type BroadcastRequest struct {
	Name       string
	Params     []store.BroadcastParam
	Recipients []store.RecipientInput // inline; or AudienceID
	AudienceID int64
	SendAt     string // local wall-clock time in TimeZone, "" for at once
	TimeZone   string // IANA, "" for UTC
}

// NumberLimits are how fast a number sends and its portfolio's budget of unique recipients
// per 24 h (0: unlimited).
type NumberLimits struct {
	Throughput int
	Budget     int
}

// Preflight is what a broadcast would do.
type Preflight struct {
	Recipients       int     `json:"recipients"`
	Duplicates       int     `json:"duplicates"`
	OptedOut         int     `json:"opted_out"`
	Blocked          int     `json:"blocked"`
	USMarketing      int     `json:"us_marketing"`
	Throughput       int     `json:"throughput"` // messages per second the broadcast uses
	EstimatedSeconds int     `json:"estimated_seconds"`
	BudgetLimit      int     `json:"budget_limit"` // 0: unlimited
	BudgetUsed       int     `json:"budget_used"`
	BudgetNeeded     int     `json:"budget_needed"`
	BudgetShare      float64 `json:"budget_share"` // BudgetNeeded / BudgetLimit; 0 when unlimited
}

// Broadcasts is the broadcast operations over the store.
type Broadcasts struct {
	Store *store.Store
	// Limits returns the number's throughput and its portfolio's budget as the platform
	// reports them; nil, or zero figures, mean 80 messages per second and no budget.
	Limits func(ctx context.Context, accountID int64, phoneNumberID string) NumberLimits
	// Share is the part of the number's throughput broadcasts use (the engine's).
	Share float64
	Now   func() time.Time
}

// BroadcastRefused is a broadcast the rules refused, by the API's field paths (a 422).
type BroadcastRefused struct{ Fields refusal.Fields }

func (e *BroadcastRefused) Error() string {
	return "invalid broadcast: " + strings.Join(e.Fields.Paths(), ", ")
}

// ErrAudienceNotFound is returned for an audience_id the account has no audience of.
var ErrAudienceNotFound = errors.New("no such audience")

func (d *Broadcasts) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// Check validates the request against its target and computes its pre-flight: the recipients
// that would be stored (each once; not those opted out or blocked, nor US numbers for a
// MARKETING template) and the broadcast to store. A rule the request breaks comes back as
// a *BroadcastRefused (the API's 422); an unknown audience as ErrAudienceNotFound.
func (d *Broadcasts) Check(ctx context.Context, accountID int64, t BroadcastTarget, req BroadcastRequest) (store.BroadcastInput, []store.RecipientInput, Preflight, error) {
	var fe refusal.Fields
	checkTemplate(t.Template, req.Params, &fe)
	if (len(req.Recipients) == 0) == (req.AudienceID == 0) {
		fe.Add("recipients", "give one of recipients or audience_id")
	}
	if len(req.Recipients) > MaxInlineRecipients {
		fe.Add("recipients", fmt.Sprintf("at most %d recipients per call", MaxInlineRecipients))
	} else {
		checkRecipients(req.Recipients, &fe)
	}
	scheduled, zone := schedule(req.SendAt, req.TimeZone, &fe)
	if len(fe) > 0 {
		return store.BroadcastInput{}, nil, Preflight{}, &BroadcastRefused{fe}
	}
	rs := req.Recipients
	if req.AudienceID != 0 {
		var err error
		if rs, err = d.audience(ctx, accountID, req.AudienceID); err != nil {
			return store.BroadcastInput{}, nil, Preflight{}, err
		}
	}
	checkVariables(req.Params, rs, req.AudienceID != 0, &fe)
	if len(fe) > 0 {
		return store.BroadcastInput{}, nil, Preflight{}, &BroadcastRefused{fe}
	}
	kept, pf, err := d.preflight(ctx, accountID, t, rs)
	if err != nil {
		return store.BroadcastInput{}, nil, Preflight{}, err
	}
	raw, err := json.Marshal(pf)
	if err != nil {
		return store.BroadcastInput{}, nil, Preflight{}, err
	}
	in := store.BroadcastInput{Name: req.Name, PhoneNumberID: t.PhoneNumberID, Portfolio: t.Portfolio,
		TemplateName: t.Template.Name, TemplateLanguage: t.Template.Language, Marketing: isMarketing(t.Template),
		Params: req.Params, ScheduledAt: scheduled, TimeZone: zone, Test: t.Test, Preflight: raw}
	return in, kept, pf, nil
}

// Create checks the request (Check) and stores the broadcast with its recipients; the engine
// starts it at once, or at its schedule.
func (d *Broadcasts) Create(ctx context.Context, accountID int64, t BroadcastTarget, req BroadcastRequest) (store.Broadcast, error) {
	in, rs, _, err := d.Check(ctx, accountID, t, req)
	if err != nil {
		return store.Broadcast{}, err
	}
	return d.Store.CreateBroadcast(ctx, accountID, in, rs)
}

func isMarketing(t store.Template) bool { return strings.EqualFold(t.CategoryName, "MARKETING") }

// checkTemplate refuses templates a broadcast cannot fill (variables outside the body, kinds
// the API cannot send) and parameters that do not match the body's.
func checkTemplate(t store.Template, params []store.BroadcastParam, fe *refusal.Fields) {
	switch {
	case len(t.Unsupported) > 0:
		fe.Add("template_name", fmt.Sprintf("the template %q has %s, which the API cannot send yet", t.Name, strings.Join(t.Unsupported, " and ")))
	case t.HeaderParams > 0 || (t.HeaderFormat != "" && t.HeaderFormat != "TEXT") || needsButtonValue(t.Buttons):
		fe.Add("template_name", fmt.Sprintf("the template %q has variables outside its body (header or buttons); a broadcast fills body variables only", t.Name))
	}
	if len(params) != t.BodyParams {
		fe.Add("parameters", fmt.Sprintf("the template's body takes %d parameters, got %d", t.BodyParams, len(params)))
	}
	for i, p := range params {
		if (p.Value == "") == (p.Variable == "") {
			fe.Add(fmt.Sprintf("parameters.%d", i), "give one of value or variable")
		}
	}
}

// needsButtonValue reports whether a button must be given a value at send time (a URL with a
// variable, a coupon code, a one-time password); a quick reply's payload is optional.
func needsButtonValue(bs store.TemplateButtons) bool {
	for _, b := range bs {
		if b.TakesValue && b.Type != "QUICK_REPLY" {
			return true
		}
	}
	return false
}

// schedule reads send_at in the time zone; nil for at once.
func schedule(sendAt, zone string, fe *refusal.Fields) (*time.Time, string) {
	if zone == "" {
		zone = "UTC"
	}
	loc, err := time.LoadLocation(zone)
	if err != nil || zone == "Local" {
		fe.Add("time_zone", "an IANA time zone such as Europe/London or America/New_York")
		return nil, zone
	}
	if sendAt == "" {
		return nil, zone
	}
	layout := "2006-01-02T15:04:05"
	if len(sendAt) == len("2006-01-02T15:04") {
		layout = "2006-01-02T15:04"
	}
	at, err := time.ParseInLocation(layout, sendAt, loc)
	if err != nil {
		fe.Add("send_at", "a local date and time, YYYY-MM-DDTHH:MM[:SS]")
		return nil, zone
	}
	at = at.UTC()
	return &at, zone
}

// checkRecipients is the rule of an inline recipient, as of a template send's recipient
// (checkRecipient): exactly one of mobile and user_id. At most 20 are named.
func checkRecipients(rs []store.RecipientInput, fe *refusal.Fields) {
	for i, r := range rs {
		switch {
		case r.Mobile != "" && r.UserID != "":
			fe.Add(fmt.Sprintf("recipients.%d.user_id", i), "give mobile or user_id, not both")
		case r.Mobile == "" && r.UserID == "":
			fe.Add(fmt.Sprintf("recipients.%d.mobile", i), "required unless user_id is given")
		default:
			continue
		}
		if len(*fe) >= 20 {
			return
		}
	}
}

// checkVariables refuses an inline recipient that lacks a variable a parameter names (the
// platform refuses an empty parameter). Audience recipients have first_name, last_name and
// name; a missing name is refused once, on the parameter.
func checkVariables(params []store.BroadcastParam, rs []store.RecipientInput, audience bool, fe *refusal.Fields) {
	for i, p := range params {
		if p.Variable == "" {
			continue
		}
		if audience {
			switch p.Variable {
			case "first_name", "last_name", "name":
			default:
				fe.Add(fmt.Sprintf("parameters.%d.variable", i), "an audience's recipients have the variables first_name, last_name and name")
			}
			continue
		}
		for j, r := range rs {
			if r.Variables[p.Variable] == "" {
				fe.Add(fmt.Sprintf("recipients.%d.variables.%s", j, p.Variable), "missing: parameter "+fmt.Sprint(i)+" takes it")
				if len(*fe) >= 20 {
					return
				}
			}
		}
	}
}

// audienceBatch is the page size of reading an audience's members.
const audienceBatch = 5000

// audience returns the recipients of the account's saved audience (blocked contacts are left
// out by the audience's filter unless it includes them): each contact by its number, or by its
// user id when it is known only by that.
func (d *Broadcasts) audience(ctx context.Context, accountID, id int64) ([]store.RecipientInput, error) {
	as, err := d.Store.Audiences(ctx, accountID)
	if err != nil {
		return nil, err
	}
	var f *store.AudienceFilter
	for _, a := range as {
		if a.ID == id {
			f = &a.Filter
		}
	}
	if f == nil {
		return nil, ErrAudienceNotFound
	}
	var out []store.RecipientInput
	for after := int64(0); ; {
		ms, err := d.Store.AudienceMembers(ctx, accountID, *f, after, audienceBatch)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			r := store.RecipientInput{Mobile: m.Mobile, Variables: map[string]string{
				"first_name": m.FirstName, "last_name": m.LastName, "name": strings.TrimSpace(m.FirstName + " " + m.LastName)}}
			if m.Mobile == "" {
				r.UserID = m.UserID
			}
			out = append(out, r)
		}
		if len(ms) < audienceBatch {
			return out, nil
		}
		after = ms[len(ms)-1].ContactID
	}
}

// preflight merges duplicates, leaves out opted-out and blocked contacts (by number or user id)
// and US numbers of a MARKETING template (a user id is no number, whatever its country), and
// estimates the duration and the budget's use.
func (d *Broadcasts) preflight(ctx context.Context, accountID int64, t BroadcastTarget, rs []store.RecipientInput) ([]store.RecipientInput, Preflight, error) {
	var pf Preflight
	seen := make(map[string]bool, len(rs))
	unique := make([]store.RecipientInput, 0, len(rs))
	mobiles := make([]string, 0, len(rs))
	var userIDs []string
	for _, r := range rs {
		to := r.Mobile + r.UserID
		if seen[to] {
			pf.Duplicates++
			continue
		}
		seen[to] = true
		unique = append(unique, r)
		if r.Mobile != "" {
			mobiles = append(mobiles, r.Mobile)
		} else {
			userIDs = append(userIDs, r.UserID)
		}
	}
	blocked := map[string]bool{}
	if !t.Test && len(unique) > 0 {
		var err error
		if blocked, err = d.Store.BlockedRecipients(ctx, accountID, mobiles, userIDs); err != nil {
			return nil, pf, err
		}
	}
	marketing := isMarketing(t.Template)
	kept := unique[:0]
	keptTo := make([]string, 0, len(unique))
	for _, r := range unique {
		if self, ok := blocked[r.Mobile+r.UserID]; ok {
			if self {
				pf.OptedOut++
			} else {
				pf.Blocked++
			}
			continue
		}
		if marketing && strings.HasPrefix(r.Mobile, "1") {
			pf.USMarketing++
			continue
		}
		kept = append(kept, r)
		keptTo = append(keptTo, r.Mobile+r.UserID)
	}
	pf.Recipients = len(kept)
	lim := NumberLimits{}
	if d.Limits != nil && !t.Test {
		lim = d.Limits(ctx, accountID, t.PhoneNumberID)
	}
	thr := lim.Throughput
	if thr <= 0 {
		thr = 80
	}
	share := d.Share
	if share <= 0 || share > 1 {
		share = 1
	}
	pf.Throughput = max(1, int(math.Floor(float64(thr)*share)))
	pf.EstimatedSeconds = int(math.Ceil(float64(pf.Recipients) / float64(pf.Throughput)))
	if t.Portfolio != "" && len(keptTo) > 0 {
		used, reached, err := d.Store.PortfolioReach(ctx, accountID, t.Portfolio, keptTo, d.now())
		if err != nil {
			return nil, pf, err
		}
		pf.BudgetUsed, pf.BudgetNeeded = used, len(keptTo)-reached
	} else {
		pf.BudgetNeeded = len(keptTo)
	}
	if lim.Budget > 0 {
		pf.BudgetLimit = lim.Budget
		pf.BudgetShare = math.Round(float64(pf.BudgetNeeded)/float64(lim.Budget)*10000) / 10000
	}
	return kept, pf, nil
}

// Progress is a broadcast's progress: recipients by status, the rate of the last minute and
// the estimated end.
type Progress struct {
	store.BroadcastProgress
	Rate float64    // recipients called per second over the last minute
	ETA  *time.Time // a running broadcast's estimated end at Rate
}

// progressWindow is the time the rate is measured over.
const progressWindow = time.Minute

// ProgressOf returns the broadcast's progress.
func (d *Broadcasts) ProgressOf(ctx context.Context, b store.Broadcast) (Progress, error) {
	now := d.now()
	p, err := d.Store.BroadcastProgressOf(ctx, b.AccountID, b.ID, b.Test, now.Add(-progressWindow), now)
	if err != nil {
		return Progress{}, err
	}
	window := progressWindow
	if b.StartedAt != nil && now.Sub(*b.StartedAt) < window {
		window = max(now.Sub(*b.StartedAt), time.Second)
	}
	out := Progress{BroadcastProgress: p, Rate: math.Round(float64(p.Recent)/window.Seconds()*10) / 10}
	if left := p.ByState[store.RecipientPending]; b.State == store.BroadcastRunning && out.Rate > 0 {
		eta := now.Add(time.Duration(float64(left) / out.Rate * float64(time.Second))).UTC().Truncate(time.Second)
		out.ETA = &eta
	}
	return out, nil
}

// PreflightOf returns the pre-flight stored with the broadcast.
func PreflightOf(b store.Broadcast) Preflight {
	var pf Preflight
	_ = json.Unmarshal(b.Preflight, &pf) // the column is a JSON object by its CHECK
	return pf
}
