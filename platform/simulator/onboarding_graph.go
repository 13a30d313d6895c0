package simulator

import (
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
)

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
