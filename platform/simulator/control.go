package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Control API routes, all under /_sim/ (JSON in and out, no authentication;
// the simulator is for loopback use):
//
//	POST /_sim/numbers          Number, or an array of them        → {"numbers": [...]}
//	GET  /_sim/numbers                                             → {"numbers": [...]}
//	POST /_sim/templates        {waba_id, templates: [Template], defaults: bool, rich: bool}
//	                            (a template with the name and language of a stored one
//	                            replaces it: a change on the platform the gateway sees only
//	                            at its next sync)
//	GET  /_sim/templates?waba_id=...                               → {"data": [...]}
//	POST /_sim/script           {recipient, fail_sync, fail_async, skip_delivered,
//	                             reorder, duplicate, early_status, no_callback_data,
//	                             hang_ms}
//	POST /_sim/inbound          Inbound: {phone_number_id, from (or "" with user_id for a
//	                             username-only sender), name, type, payload, user_id?,
//	                             parent_user_id?, username?, context_message_id?,
//	                             context_from?, forwarded?, frequently_forwarded?,
//	                             referral?, errors?, media_size?}
//	                                                               → Injected {wamid, wa_id, user_id,
//	                                                                 media_id?, sha256?, media_size?}
//	POST /_sim/change-number    {phone_number_id, user (number or user id), new_number}
//	                                                               → Injected (the new wa_id and user id)
//	POST /_sim/change-user-id   {phone_number_id, user, new_user_id?} → Injected
//	GET  /_sim/handsets                                            → {"data": [Handset]}
//	GET  /_sim/window?phone_number_id=&user=                       → WindowState {last_inbound_at,
//	                                                                 closes_at, free_entry_until?, open}
//	GET  /_sim/media?id=                                           → MediaInfo
//	GET  /_sim/read                                                → {"data": [wamid marked read]}
//	POST /_sim/template-status  {waba_id, template_id, status, reason}
//	POST /_sim/config           {webhook_url?, sent_delay_ms?, delivered_delay_ms?,
//	                             read_delay_ms?, rate_per_second?, pair_interval_ms?,
//	                             pair_burst?, messaging_limit?, marketing_user_limit?,
//	                             enforce_service_window?, service_window_sync?}
//	GET  /_sim/config                                              → the same fields
//	GET  /_sim/sent                                                → {"data": [SentMessage]}
//	POST /_sim/reset            {all?: bool}
//	GET  /_sim/webhooks                                            → WebhookStats
//	POST /_sim/wait-idle        {timeout_ms?: default 5000}        → WebhookStats, 504 on timeout
//	POST /_sim/verify-webhook   {verify_token}                     → {"challenge": "..."}
//	POST /_sim/signup           {business_name?}                   → Signup (a new WABA, number and code)
//	POST /_sim/codes            {access_token}                     → {"code": "..."} (for an existing number)
//	POST /_sim/quality          {phone_number_id, quality_rating?, messaging_limit_tier?, event?}
//	GET  /_sim/limits?phone_number_id=                             → NumberLimits
//	POST /_sim/limits           {phone_number_id, throughput?, pair_interval_ms?, pair_burst?}
//	                                                               → NumberLimits
//	POST /_sim/upgrade          {phone_number_id, window_ms?}      → NumberLimits (131057 until
//	                                                                 upgrading_until, then 1,000/s)
//	GET  /_sim/portfolio?id=                                       → PortfolioState
//	POST /_sim/portfolio        {id, tier? ("TIER_2K"...) or limit?, marketing_limit?}
//	                                                               → PortfolioState
//	GET  /_sim/rate?phone_number_id=                               → {"data": [SecondCount],
//	                                                                 "max_sends": n, "throughput": n}
//
// Failures answer {"error": "..."} with 400 (bad input), 404 (unknown number
// or template, unknown route), 405 (wrong method) or 502 (a webhook could not
// be delivered).

// controlError is the body of a failed control request.
type controlError struct {
	Error string `json:"error"`
}

func writeControl(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func controlFail(w http.ResponseWriter, status int, format string, args ...any) {
	writeControl(w, status, controlError{Error: fmt.Sprintf(format, args...)})
}

// decodeControl reads a JSON body into v; an empty body leaves v unchanged.
func decodeControl(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return json.Unmarshal(b, v)
}

// configBody is the JSON shape of /_sim/config.
type configBody struct {
	WebhookURL       *string `json:"webhook_url,omitempty"`
	SentDelayMS      *int64  `json:"sent_delay_ms,omitempty"`
	DeliveredDelayMS *int64  `json:"delivered_delay_ms,omitempty"`
	ReadDelayMS      *int64  `json:"read_delay_ms,omitempty"`
	RatePerSecond    *int    `json:"rate_per_second,omitempty"`
	PairIntervalMS   *int64  `json:"pair_interval_ms,omitempty"`
	PairBurst        *int    `json:"pair_burst,omitempty"`
	// MessagingLimit and MarketingUserLimit are the defaults of portfolios not yet seen.
	MessagingLimit     *int  `json:"messaging_limit,omitempty"`
	MarketingUserLimit *bool `json:"marketing_user_limit,omitempty"`
	EnforceWindow      *bool `json:"enforce_service_window,omitempty"`
	WindowSync         *bool `json:"service_window_sync,omitempty"`
}

// scriptBody is the JSON shape of /_sim/script.
type scriptBody struct {
	Recipient string `json:"recipient"`
	Outcome
	HangMS int64 `json:"hang_ms,omitempty"`
}

func (s *Simulator) serveControl(w http.ResponseWriter, r *http.Request, route string) {
	method := func(m string) bool {
		if r.Method != m {
			w.Header().Set("Allow", m)
			controlFail(w, http.StatusMethodNotAllowed, "%s /_sim/%s: method not allowed", r.Method, route)
			return false
		}
		return true
	}
	switch route {
	case "numbers":
		switch r.Method {
		case http.MethodGet:
			writeControl(w, http.StatusOK, map[string]any{"numbers": s.Numbers()})
		case http.MethodPost:
			s.controlNumbers(w, r)
		default:
			method(http.MethodPost)
		}
	case "templates":
		switch r.Method {
		case http.MethodGet:
			ts := s.Templates(r.URL.Query().Get("waba_id"))
			if ts == nil {
				ts = []Template{}
			}
			writeControl(w, http.StatusOK, map[string]any{"data": ts})
		case http.MethodPost:
			s.controlTemplates(w, r)
		default:
			method(http.MethodPost)
		}
	case "script":
		if !method(http.MethodPost) {
			return
		}
		var b scriptBody
		if err := decodeControl(r, &b); err != nil || b.Recipient == "" {
			controlFail(w, http.StatusBadRequest, "script: need {recipient, ...outcome}: %v", err)
			return
		}
		b.Outcome.Hang = time.Duration(b.HangMS) * time.Millisecond
		s.Script(b.Recipient, b.Outcome)
		writeControl(w, http.StatusOK, map[string]any{"ok": true})
	case "inbound":
		if !method(http.MethodPost) {
			return
		}
		var in Inbound
		if err := decodeControl(r, &in); err != nil {
			controlFail(w, http.StatusBadRequest, "inbound: %v", err)
			return
		}
		res, err := s.Inject(in)
		writeInjected(w, res, err)
	case "change-number", "change-user-id":
		if !method(http.MethodPost) {
			return
		}
		var b struct {
			PhoneNumberID string `json:"phone_number_id"`
			User          string `json:"user"`
			NewNumber     string `json:"new_number"`
			NewUserID     string `json:"new_user_id"`
		}
		if err := decodeControl(r, &b); err != nil {
			controlFail(w, http.StatusBadRequest, "%s: %v", route, err)
			return
		}
		var (
			res Injected
			err error
		)
		if route == "change-number" {
			res, err = s.ChangeNumber(b.PhoneNumberID, b.User, b.NewNumber)
		} else {
			res, err = s.ChangeUserID(b.PhoneNumberID, b.User, b.NewUserID)
		}
		writeInjected(w, res, err)
	case "handsets":
		if !method(http.MethodGet) {
			return
		}
		writeControl(w, http.StatusOK, map[string]any{"data": s.Handsets()})
	case "window":
		if !method(http.MethodGet) {
			return
		}
		q := r.URL.Query()
		state, ok := s.Window(q.Get("phone_number_id"), q.Get("user"))
		if !ok {
			controlFail(w, http.StatusNotFound, "no window: %q never wrote to %q", q.Get("user"), q.Get("phone_number_id"))
			return
		}
		writeControl(w, http.StatusOK, state)
	case "media":
		if !method(http.MethodGet) {
			return
		}
		info, ok := s.Media(r.URL.Query().Get("id"))
		if !ok {
			controlFail(w, http.StatusNotFound, "unknown media id %q", r.URL.Query().Get("id"))
			return
		}
		writeControl(w, http.StatusOK, info)
	case "read":
		if !method(http.MethodGet) {
			return
		}
		read := s.MarkedRead()
		if read == nil {
			read = []string{}
		}
		writeControl(w, http.StatusOK, map[string]any{"data": read})
	case "template-status":
		if !method(http.MethodPost) {
			return
		}
		var b struct {
			WabaID     string `json:"waba_id"`
			TemplateID string `json:"template_id"`
			Status     string `json:"status"`
			Reason     string `json:"reason"`
		}
		if err := decodeControl(r, &b); err != nil {
			controlFail(w, http.StatusBadRequest, "template-status: %v", err)
			return
		}
		err := s.SetTemplateStatus(b.WabaID, b.TemplateID, b.Status, b.Reason)
		switch {
		case errors.Is(err, ErrUnknownTemplate):
			controlFail(w, http.StatusNotFound, "%v", err)
		case errors.Is(err, ErrInvalidStatus):
			controlFail(w, http.StatusBadRequest, "%v", err)
		case err != nil:
			controlFail(w, http.StatusBadGateway, "%v", err)
		default:
			writeControl(w, http.StatusOK, map[string]any{"ok": true})
		}
	case "config":
		switch r.Method {
		case http.MethodGet:
			writeControl(w, http.StatusOK, s.configSnapshot())
		case http.MethodPost:
			var b configBody
			if err := decodeControl(r, &b); err != nil {
				controlFail(w, http.StatusBadRequest, "config: %v", err)
				return
			}
			s.applyConfig(b)
			writeControl(w, http.StatusOK, s.configSnapshot())
		default:
			method(http.MethodPost)
		}
	case "sent":
		if !method(http.MethodGet) {
			return
		}
		sent := s.Sent()
		if sent == nil {
			sent = []SentMessage{}
		}
		writeControl(w, http.StatusOK, map[string]any{"data": sent})
	case "reset":
		if !method(http.MethodPost) {
			return
		}
		var b struct {
			All bool `json:"all"`
		}
		if err := decodeControl(r, &b); err != nil {
			controlFail(w, http.StatusBadRequest, "reset: %v", err)
			return
		}
		s.Reset(b.All)
		writeControl(w, http.StatusOK, map[string]any{"ok": true})
	case "webhooks":
		if !method(http.MethodGet) {
			return
		}
		writeControl(w, http.StatusOK, s.WebhookStats())
	case "wait-idle":
		if !method(http.MethodPost) {
			return
		}
		var b struct {
			TimeoutMS int64 `json:"timeout_ms"`
		}
		if err := decodeControl(r, &b); err != nil {
			controlFail(w, http.StatusBadRequest, "wait-idle: %v", err)
			return
		}
		if b.TimeoutMS <= 0 {
			b.TimeoutMS = 5000
		}
		ctx, cancel := context.WithTimeout(r.Context(), time.Duration(b.TimeoutMS)*time.Millisecond)
		defer cancel()
		if err := s.WaitIdle(ctx); err != nil {
			writeControl(w, http.StatusGatewayTimeout, map[string]any{"error": err.Error(), "stats": s.WebhookStats()})
			return
		}
		writeControl(w, http.StatusOK, s.WebhookStats())
	case "verify-webhook":
		if !method(http.MethodPost) {
			return
		}
		var b struct {
			VerifyToken string `json:"verify_token"`
		}
		if err := decodeControl(r, &b); err != nil {
			controlFail(w, http.StatusBadRequest, "verify-webhook: %v", err)
			return
		}
		challenge, err := s.VerifyWebhook(r.Context(), b.VerifyToken)
		if err != nil {
			controlFail(w, http.StatusBadGateway, "%v", err)
			return
		}
		writeControl(w, http.StatusOK, map[string]any{"challenge": challenge})
	case "signup", "codes", "quality":
		s.controlOnboarding(w, r, route)
	case "limits", "upgrade", "portfolio", "rate":
		s.controlLimits(w, r, route)
	default:
		controlFail(w, http.StatusNotFound, "unknown control route /_sim/%s", route)
	}
}

// writeInjected answers an inbound or identity-change request.
func writeInjected(w http.ResponseWriter, res Injected, err error) {
	switch {
	case errors.Is(err, ErrUnknownNumber), errors.Is(err, ErrUnknownUser):
		controlFail(w, http.StatusNotFound, "%v", err)
	case errors.Is(err, ErrNoWebhookURL), errors.Is(err, ErrNotSubscribed):
		controlFail(w, http.StatusBadRequest, "%v", err)
	case err != nil && res.Wamid == "":
		controlFail(w, http.StatusBadRequest, "%v", err)
	case err != nil:
		writeControl(w, http.StatusBadGateway, map[string]any{"error": err.Error(), "wamid": res.Wamid})
	default:
		writeControl(w, http.StatusOK, res)
	}
}
