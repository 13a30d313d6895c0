package simulator

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Graph endpoints of a Tech Provider's onboarding (reference §9):
//
//	GET  /{version}/oauth/access_token?client_id&client_secret&code  → {access_token, token_type}
//	GET  /{version}/{waba-id}/phone_numbers                           → {data: [...], paging}
//	POST /{version}/{waba-id}/subscribed_apps                         → {success: true}
//	GET  /{version}/{waba-id}/subscribed_apps                         → {data: [{whatsapp_business_api_data}]}
//	POST /{version}/{phone-number-id}/register {messaging_product, pin} → {success: true}
//
// Codes come from Embedded Signup (the sign-up window, Signup, or POST /_sim/signup) or
// IssueCode; each is single use and expires after CodeTTL.

// CodeTTL is how long an Embedded Signup code can be exchanged.
const CodeTTL = 30 * time.Second

// RegisterLimit is how many registrations of one number the platform allows in
// RegisterWindow; the next answers 133016.
const (
	RegisterLimit  = 10
	RegisterWindow = 7 * 24 * time.Hour
)

// authCode is an issued Embedded Signup code.
type authCode struct {
	token   string
	expires time.Time
	used    bool
}

// onboarding is the simulator's state for the onboarding endpoints; guarded by Simulator.mu.
type onboarding struct {
	codes      map[string]*authCode
	subscribed map[string]bool        // WABA ids that subscribed the app
	fresh      map[string]bool        // WABA ids made by NewBusiness: no webhooks until subscribed
	registered map[string][]time.Time // registrations by phone number id
}

func (o *onboarding) init() {
	if o.codes == nil {
		o.codes = map[string]*authCode{}
		o.subscribed = map[string]bool{}
		o.registered = map[string][]time.Time{}
		o.fresh = map[string]bool{}
	}
}

// ErrNotSubscribed: the number's WABA was made by NewBusiness (Embedded Signup) and no app
// subscribed to its webhooks yet (POST /{waba-id}/subscribed_apps), so no webhook goes out.
var ErrNotSubscribed = errors.New("simulator: no app subscribed to the WABA's webhooks")

// subscribed reports whether webhooks of the WABA go out: always for WABAs added with
// AddNumber, after POST /{waba-id}/subscribed_apps for those made by NewBusiness.
func (s *Simulator) subscribed(wabaID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.onb.fresh[wabaID] || s.onb.subscribed[wabaID]
}

// Signup is what Embedded Signup hands a business that created a new WhatsApp Business
// Account: the WABA and number ids the window posts, the code the SDK's login callback gets,
// and (for tests) the number's token and display number.
type Signup struct {
	Code               string `json:"code"`
	WabaID             string `json:"waba_id"`
	PhoneNumberID      string `json:"phone_number_id"`
	DisplayPhoneNumber string `json:"display_phone_number"`
	VerifiedName       string `json:"verified_name"`
	AccessToken        string `json:"access_token"`
}

// OnboardingState is what the simulator knows of a number's onboarding.
type OnboardingState struct {
	Registered    bool   // registered for Cloud API use (numbers added with AddNumber are, unless Unregistered)
	PIN           string // the two-step verification pin ("" = none set)
	Registrations int    // registrations in the last RegisterWindow
	AppSubscribed bool   // the app subscribed to the number's WABA
}

// NewBusiness creates a fresh WhatsApp Business Account with one new, unregistered number
// (random ids, a +1 555 display number, its own access token) seeded with DefaultTemplates,
// as Embedded Signup's "Create a new WhatsApp Business Account" does. Its number's inbound and
// status webhooks go out only once an app subscribed to the WABA (ErrNotSubscribed). An empty name becomes
// "Test Business <n>".
func (s *Simulator) NewBusiness(name string) Number {
	name = strings.TrimSpace(name)
	if name == "" {
		name = "Test Business " + strconv.Itoa(100+rand.IntN(900))
	}
	n := Number{
		PhoneNumberID:      "1" + randomDigits(14),
		WabaID:             "2" + randomDigits(14),
		DisplayPhoneNumber: fmt.Sprintf("+1 555-%s-%s", randomDigits(3), randomDigits(4)),
		AccessToken:        "EAASIM" + randomHex(24),
		VerifiedName:       name,
		Unregistered:       true,
	}
	s.AddNumber(n)
	s.SeedTemplates(n.WabaID, DefaultTemplates())
	s.mu.Lock()
	s.onb.init()
	s.onb.fresh[n.WabaID] = true
	s.mu.Unlock()
	return n
}

// IssueCode issues a single-use code, valid for CodeTTL, that GET /oauth/access_token
// exchanges for token. It fails with ErrUnknownToken when no number uses token.
func (s *Simulator) IssueCode(token string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tokens[token]; !ok || token == "" {
		return "", ErrUnknownToken
	}
	s.onb.init()
	code := "AQ" + randomHex(32)
	s.onb.codes[code] = &authCode{token: token, expires: s.clock().Add(CodeTTL)}
	return code, nil
}

// ErrUnknownToken: no number uses that access token.
var ErrUnknownToken = errors.New("simulator: unknown access token")

// Signup completes Embedded Signup for a new business: NewBusiness, a code for its token,
// and, when a webhook URL is set, an account_update webhook (event PARTNER_ADDED) queued
// for the WABA. It never fails.
func (s *Simulator) Signup(name string) Signup {
	n := s.NewBusiness(name)
	code, _ := s.IssueCode(n.AccessToken) // the token was just added
	s.queueAccountUpdate(n.WabaID)
	return Signup{Code: code, WabaID: n.WabaID, PhoneNumberID: n.PhoneNumberID,
		DisplayPhoneNumber: n.DisplayPhoneNumber, VerifiedName: n.VerifiedName, AccessToken: n.AccessToken}
}

// Onboarding returns the onboarding state of a number; ok is false for an unknown number.
func (s *Simulator) Onboarding(phoneNumberID string) (st OnboardingState, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.numbers[phoneNumberID]
	if !ok {
		return OnboardingState{}, false
	}
	s.onb.init()
	return OnboardingState{
		Registered:    !n.Unregistered,
		PIN:           n.PIN,
		Registrations: len(recent(s.onb.registered[phoneNumberID], s.clock().Add(-RegisterWindow))),
		AppSubscribed: s.onb.subscribed[n.WabaID],
	}, true
}

// queueAccountUpdate POSTs Meta's account_update webhook for a business that completed
// Embedded Signup (in the background; nothing when no webhook URL is set).
func (s *Simulator) queueAccountUpdate(wabaID string) {
	s.mu.Lock()
	hookURL := s.set.webhookURL
	appID := s.appID
	now := s.clock()
	s.mu.Unlock()
	if hookURL == "" {
		return
	}
	env := envelope{Object: "whatsapp_business_account", Entry: []entry{{ID: wabaID, Time: now.Unix(), Changes: []change{{
		Field: "account_update",
		Value: map[string]any{"event": "PARTNER_ADDED", "waba_info": map[string]any{
			"waba_id": wabaID, "owner_business_id": "3" + randomDigits(14), "partner_app_id": appID}},
	}}}}}
	body, err := metaJSON(env)
	if err != nil {
		return
	}
	s.hooks.enqueue([]step{{body: body, at: time.Now()}})
}

func randomDigits(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + rand.IntN(10))
	}
	return string(b)
}

// recent returns the times after since.
func recent(ts []time.Time, since time.Time) []time.Time {
	var out []time.Time
	for _, t := range ts {
		if t.After(since) {
			out = append(out, t)
		}
	}
	return out
}

// oauthError is Graph's OAuthException for the code exchange.
func oauthError(code, subcode int, message string) *graphError {
	return &graphError{status: http.StatusBadRequest, typ: "OAuthException", code: code, subcode: subcode,
		message: message, title: message, noData: true}
}

// requestedFields is the request's fields parameter as a list (nil when absent).
func requestedFields(r *http.Request) []string {
	var fields []string
	for v := range strings.SplitSeq(r.URL.Query().Get("fields"), ",") {
		if v = strings.TrimSpace(v); v != "" {
			fields = append(fields, v)
		}
	}
	return fields
}

// numberFields renders a phone number, restricted to fields when given (id is always included).
func numberFields(n Number, fields []string) map[string]any {
	display := n.DisplayPhoneNumber
	if display == "" {
		display = "+" + onlyDigits(n.PhoneNumberID)
	}
	verification := "VERIFIED"
	if n.Unregistered {
		verification = "NOT_VERIFIED"
	}
	all := map[string]any{
		"id":                       n.PhoneNumberID,
		"verified_name":            cmp.Or(n.VerifiedName, "Test Business"),
		"code_verification_status": verification,
		"display_phone_number":     display,
		"quality_rating":           cmp.Or(n.QualityRating, "GREEN"),
		"name_status":              "APPROVED",
		"platform_type":            "CLOUD_API",
		"throughput":               map[string]any{"level": throughputLevel(n)},
		"messaging_limit_tier":     cmp.Or(n.MessagingLimitTier, "TIER_1K"),
	}
	if len(fields) == 0 {
		return all
	}
	out := map[string]any{"id": n.PhoneNumberID}
	for _, f := range fields {
		if v, ok := all[f]; ok {
			out[f] = v
		}
	}
	return out
}

// throughputLevel is the level GET ?fields=throughput reports: HIGH from ThroughputHigh up.
func throughputLevel(n Number) string {
	if n.Throughput >= ThroughputHigh {
		return "HIGH"
	}
	return "STANDARD"
}

// controlOnboarding serves POST /_sim/signup, /_sim/codes and /_sim/quality.
func (s *Simulator) controlOnboarding(w http.ResponseWriter, r *http.Request, route string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		controlFail(w, http.StatusMethodNotAllowed, "%s /_sim/%s: method not allowed", r.Method, route)
		return
	}
	var b struct {
		BusinessName  string `json:"business_name"`
		AccessToken   string `json:"access_token"`
		PhoneNumberID string `json:"phone_number_id"`
		QualityRating string `json:"quality_rating"`
		Limit         string `json:"messaging_limit_tier"`
		Event         string `json:"event"`
	}
	if err := decodeControl(r, &b); err != nil {
		controlFail(w, http.StatusBadRequest, "%s: %v", route, err)
		return
	}
	switch route {
	case "signup":
		writeControl(w, http.StatusOK, s.Signup(b.BusinessName))
		return
	case "quality":
		err := s.SetQuality(b.PhoneNumberID, b.QualityRating, b.Limit, b.Event)
		switch {
		case errors.Is(err, ErrUnknownNumber):
			controlFail(w, http.StatusNotFound, "%v", err)
		case err != nil:
			controlFail(w, http.StatusBadGateway, "%v", err)
		default:
			writeControl(w, http.StatusOK, map[string]any{"ok": true})
		}
		return
	}
	code, err := s.IssueCode(b.AccessToken)
	if err != nil {
		controlFail(w, http.StatusNotFound, "%v", err)
		return
	}
	writeControl(w, http.StatusOK, map[string]any{"code": code})
}

// SetQuality changes a number's quality rating and messaging limit tier (empty values keep
// the current ones) and POSTs Meta's phone_number_quality_update webhook for its WABA: event
// (e.g. FLAGGED, UNFLAGGED, DOWNGRADE, UPGRADE), display_phone_number and current_limit. Without
// a webhook URL only the number changes. It fails with ErrUnknownNumber, or with the last
// delivery error after every retry failed.
func (s *Simulator) SetQuality(phoneNumberID, rating, tier, event string) error {
	s.mu.Lock()
	n, ok := s.numbers[phoneNumberID]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrUnknownNumber, phoneNumberID)
	}
	if rating != "" {
		n.QualityRating = strings.ToUpper(rating)
	}
	if tier != "" {
		n.MessagingLimitTier = strings.ToUpper(tier)
	}
	s.numbers[phoneNumberID] = n
	s.mu.Unlock()
	return s.qualityWebhook(n, event)
}
