package simulator

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
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

// serveExchange implements GET /{version}/oauth/access_token.
func (s *Simulator) serveExchange(w http.ResponseWriter, r *http.Request, trace string) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		unknownObjectError(strings.ToLower(r.Method), "access_token").write(w, trace)
		return
	}
	q := r.URL.Query()
	clientID, secret, code := q.Get("client_id"), q.Get("client_secret"), q.Get("code")
	switch {
	case clientID == "":
		oauthError(101, 0, "Missing client_id parameter.").write(w, trace)
		return
	case secret == "":
		oauthError(1, 0, "Missing client_secret parameter.").write(w, trace)
		return
	case code == "":
		oauthError(1, 0, "Missing code parameter.").write(w, trace)
		return
	}
	s.mu.Lock()
	s.onb.init()
	var ge *graphError
	c := s.onb.codes[code]
	switch {
	case s.appID != "" && clientID != s.appID:
		ge = oauthError(101, 0, "Error validating application. Invalid application ID.")
	case s.secret != "" && secret != s.secret:
		ge = oauthError(1, 0, "Error validating client secret.")
	case c == nil:
		ge = oauthError(100, 0, "Invalid verification code format.")
	case c.used:
		ge = oauthError(100, 36009, "This authorization code has been used.")
	case !s.clock().Before(c.expires):
		ge = oauthError(100, 36007, "This authorization code has expired.")
	default:
		c.used = true
	}
	s.mu.Unlock()
	if ge != nil {
		ge.write(w, trace)
		return
	}
	writeGraphJSON(w, http.StatusOK, map[string]any{"access_token": c.token, "token_type": "bearer"})
}

// wabaAccess checks a token against a WABA; it returns the error to answer, or nil.
// The caller holds s.mu.
func (s *Simulator) wabaAccess(tok, method, wabaID string) *graphError {
	if _, ok := s.tokens[tok]; tok == "" || !ok {
		return tokenError()
	}
	known, allowed := len(s.templates[wabaID]) > 0, false
	for _, n := range s.numbers {
		if n.WabaID == wabaID {
			known = true
			allowed = allowed || n.AccessToken == tok
		}
	}
	switch {
	case !known:
		return unknownObjectError(method, wabaID)
	case !allowed:
		return tokenError()
	}
	return nil
}

// serveSubscribedApps implements POST and GET /{version}/{waba-id}/subscribed_apps.
func (s *Simulator) serveSubscribedApps(w http.ResponseWriter, r *http.Request, wabaID, trace string) {
	method := strings.ToLower(r.Method)
	s.mu.Lock()
	s.onb.init()
	ge := s.wabaAccess(bearer(r), method, wabaID)
	subscribed := s.onb.subscribed[wabaID]
	if ge == nil {
		switch r.Method {
		case http.MethodPost:
			s.onb.subscribed[wabaID] = true
		case http.MethodDelete:
			delete(s.onb.subscribed, wabaID)
		case http.MethodGet:
		default:
			ge = unknownObjectError(method, wabaID)
		}
	}
	appID := s.appID
	s.mu.Unlock()
	if ge != nil {
		ge.write(w, trace)
		return
	}
	if r.Method != http.MethodGet {
		writeGraphJSON(w, http.StatusOK, map[string]any{"success": true})
		return
	}
	data := []any{}
	if subscribed {
		data = append(data, map[string]any{"whatsapp_business_api_data": map[string]any{
			"id": cmp.Or(appID, "000000000000000"), "link": "https://www.facebook.com/games/?app_id=" + appID, "name": "Messaging Gateway"}})
	}
	writeGraphJSON(w, http.StatusOK, map[string]any{"data": data})
}

// servePhoneNumbers implements GET /{version}/{waba-id}/phone_numbers (one page, sorted by id).
func (s *Simulator) servePhoneNumbers(w http.ResponseWriter, r *http.Request, wabaID, trace string) {
	if r.Method != http.MethodGet {
		unknownObjectError(strings.ToLower(r.Method), wabaID).write(w, trace)
		return
	}
	s.mu.Lock()
	ge := s.wabaAccess(bearer(r), "get", wabaID)
	s.mu.Unlock()
	if ge != nil {
		ge.write(w, trace)
		return
	}
	fields := requestedFields(r)
	data := []map[string]any{}
	for _, n := range s.Numbers() {
		if n.WabaID == wabaID {
			data = append(data, numberFields(n, fields))
		}
	}
	resp := map[string]any{"data": data}
	if len(data) > 0 {
		first, last := data[0]["id"].(string), data[len(data)-1]["id"].(string)
		resp["paging"] = paging{Cursors: cursors{Before: cursorFor(first), After: cursorFor(last)}}
	}
	writeGraphJSON(w, http.StatusOK, resp)
}

// serveRegister implements POST /{version}/{phone-number-id}/register.
func (s *Simulator) serveRegister(w http.ResponseWriter, r *http.Request, phoneID, trace string) {
	if r.Method != http.MethodPost {
		unknownObjectError(strings.ToLower(r.Method), phoneID).write(w, trace)
		return
	}
	raw, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	var req struct {
		MessagingProduct *string `json:"messaging_product"`
		Pin              *string `json:"pin"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &req); err != nil {
			// Graph also takes form-encoded parameters.
			if form, ferr := url.ParseQuery(string(raw)); ferr == nil {
				if v, ok := form["messaging_product"]; ok {
					req.MessagingProduct = &v[0]
				}
				if v, ok := form["pin"]; ok {
					req.Pin = &v[0]
				}
			}
		}
	}
	tok := bearer(r)
	s.mu.Lock()
	s.onb.init()
	n, known := s.numbers[phoneID]
	_, tokenKnown := s.tokens[tok]
	now := s.clock()
	var ge *graphError
	switch {
	case tok == "" || !tokenKnown:
		ge = tokenError()
	case !known:
		ge = unknownObjectError("post", phoneID)
	case n.AccessToken != tok:
		ge = tokenError()
	case req.MessagingProduct == nil || *req.MessagingProduct == "":
		ge = paramError("The parameter messaging_product is required.", "messaging_product is required")
	case *req.MessagingProduct != "whatsapp":
		ge = paramError(`Param messaging_product must be one of {WHATSAPP} - got "`+*req.MessagingProduct+`".`, "messaging_product must be whatsapp")
	case req.Pin == nil || *req.Pin == "":
		ge = paramError("The parameter pin is required.", "pin is required")
	case len(*req.Pin) != 6 || !allDigits(*req.Pin):
		ge = paramError("Param pin must be 6 characters long.", "pin must be 6 digits")
	case n.PIN != "" && n.PIN != *req.Pin:
		ge = waError(133005, "")
	case len(recent(s.onb.registered[phoneID], now.Add(-RegisterWindow))) >= RegisterLimit:
		ge = waError(133016, "")
	default:
		n.PIN, n.Unregistered = *req.Pin, false
		s.numbers[phoneID] = n
		s.onb.registered[phoneID] = append(recent(s.onb.registered[phoneID], now.Add(-RegisterWindow)), now)
	}
	s.mu.Unlock()
	if ge != nil {
		ge.write(w, trace)
		return
	}
	writeGraphJSON(w, http.StatusOK, map[string]any{"success": true})
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
