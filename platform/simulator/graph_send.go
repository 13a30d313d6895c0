package simulator

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sendResponse is the HTTP 200 body of an accepted send.
type sendResponse struct {
	MessagingProduct string            `json:"messaging_product"`
	Contacts         []responseContact `json:"contacts"`
	Messages         []responseMessage `json:"messages"`
}

type responseContact struct {
	Input  string `json:"input"`
	WaID   string `json:"wa_id,omitempty"`
	UserID string `json:"user_id,omitempty"`
}

type responseMessage struct {
	ID            string `json:"id"`
	MessageStatus string `json:"message_status,omitempty"`
}

// accepted is what the status timeline needs about an accepted send.
type accepted struct {
	number   Number
	wamid    string
	waID     string // "" for a send to a user id whose number is not shared
	userID   string // the recipient's user id, when known
	category string // pricing category, lower-case
	free     bool   // a non-template send inside a free entry point
	opaque   string
	template bool
	at       time.Time // Config.Clock at acceptance
	failCode int       // async failure, 0 = none
	dropped  bool      // accepted past the portfolio's messaging limit: no status follows
	outcome  Outcome
	set      settings
}

// serveSend implements POST /{version}/{phone-number-id}/messages.
func (s *Simulator) serveSend(w http.ResponseWriter, r *http.Request, phoneID, trace string) {
	tok := bearer(r)
	raw, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))

	s.mu.Lock()
	n, known := s.numbers[phoneID]
	_, tokenKnown := s.tokens[tok]
	set := s.set
	now := s.clock()
	var (
		ge      *graphError
		release func()
	)
	switch {
	case tok == "" || !tokenKnown:
		ge = tokenError()
	case !known:
		ge = unknownObjectError("post", phoneID)
	case n.AccessToken != tok:
		ge = tokenError()
	case n.Unregistered:
		ge = waError(133010, "")
	default:
		release, ge = s.reserveSend(n, now)
	}
	s.mu.Unlock()
	if ge != nil {
		ge.write(w, trace)
		return
	}
	// The send counts in its second's throughput from here; a refusal uncounts it.
	taken := false
	defer func() {
		if !taken {
			s.mu.Lock()
			release()
			s.mu.Unlock()
		}
	}()
	if readErr != nil {
		paramError("Invalid parameter", "request body could not be read: "+readErr.Error()).write(w, trace)
		return
	}

	var req sendRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		paramError("Invalid parameter", "request body is not valid JSON: "+err.Error()).write(w, trace)
		return
	}
	switch {
	case req.MessagingProduct == nil || *req.MessagingProduct == "":
		ge = paramError("The parameter messaging_product is required.", "messaging_product is required")
	case *req.MessagingProduct != "whatsapp":
		ge = paramError(`Param messaging_product must be one of {WHATSAPP} - got "`+*req.MessagingProduct+`".`, "messaging_product must be whatsapp")
	case req.Status != "":
		s.serveMarkRead(w, req, trace)
		return
	case (req.To == nil || *req.To == "") && (req.Recipient == nil || *req.Recipient == ""):
		ge = paramError("The parameter to is required.", "to or recipient is required")
	case req.RecipientType != "" && req.RecipientType != "individual":
		ge = paramError(`Param recipient_type must be one of {INDIVIDUAL, GROUP} - got "`+req.RecipientType+`".`, "the simulator supports only individual recipients")
	}
	if ge != nil {
		ge.write(w, trace)
		return
	}
	// The number wins when both are given (reference §11).
	var (
		waID, userID, input string
		h                   *Handset
	)
	if req.To != nil && *req.To != "" {
		input = *req.To
		digits, ok := recipientDigits(*req.To)
		if !ok {
			waError(131009, "Recipient phone number is not a valid phone number: "+*req.To).write(w, trace)
			return
		}
		waID = WaIDFor(digits)
		s.mu.Lock()
		h = s.byWaID[waID]
		s.mu.Unlock()
	} else {
		input = *req.Recipient
		if !isUserID(input) {
			paramError("Invalid parameter", "recipient "+strconv.Quote(input)+" is not a business-scoped user id").write(w, trace)
			return
		}
		s.mu.Lock()
		h = s.byUserID[input]
		s.mu.Unlock()
		if h != nil {
			waID = h.WaID
		}
	}
	if h != nil {
		userID = h.UserID
	}
	key := cmp.Or(waID, userID, input) // scripts and pair limits are per recipient
	msgType := "text"
	if req.Type != nil {
		msgType = strings.ToLower(*req.Type)
	}

	sm := SentMessage{
		PhoneNumberID:         phoneID,
		To:                    deref(req.To),
		Recipient:             deref(req.Recipient),
		WaID:                  waID,
		UserID:                userID,
		Type:                  msgType,
		BizOpaqueCallbackData: req.BizOpaqueCallbackData,
		At:                    now,
		Raw:                   json.RawMessage(raw),
	}
	acc := accepted{number: n, waID: waID, userID: userID, opaque: req.BizOpaqueCallbackData, at: now, set: set}
	switch msgType {
	case "template":
		acc.template = true
		ge = s.checkTemplate(n.WabaID, req.Template, &sm, &acc)
		sm.Components = rawComponents(raw)
	case "text":
		switch {
		case req.Text == nil:
			ge = paramError("The parameter text is required.", "text is required for type text")
		case req.Text.Body == nil || *req.Text.Body == "":
			ge = paramError("The parameter text['body'] is required.", "text.body is required")
		case len(*req.Text.Body) > 4096:
			ge = waError(131009, "text.body is longer than 4096 characters")
		default:
			sm.TextBody = *req.Text.Body
			acc.category = "service"
			ge = s.checkSession(msgType, n.WabaID, raw, &sm)
		}
	default:
		if !sessionKinds[msgType] {
			ge = waError(131051, "The simulator accepts template, text, image, video, audio, document, sticker, location, contacts, reaction and interactive messages, got "+strconv.Quote(msgType))
			break
		}
		acc.category = "service"
		ge = s.checkSession(msgType, n.WabaID, raw, &sm)
	}
	if ge != nil {
		ge.write(w, trace)
		return
	}

	// Acceptance: pair limit, scripts, service window, record.
	s.mu.Lock()
	out := s.scripts[key]
	open, free := s.windowAt(phoneID, h, now)
	closed := !acc.template && set.enforceWindow && !open
	switch {
	case out.FailSync != 0:
		ge = waError(out.FailSync, "")
	case closed && set.windowSync:
		ge = waError(131047, "")
	case !s.pairAllowed(phoneID, key, now):
		ge = waError(131056, "")
	}
	if ge == nil {
		taken = true
		acc.failCode = out.FailAsync
		if closed && acc.failCode == 0 {
			acc.failCode = 131047
		}
		// The portfolio's limits (limits.go): a new recipient outside a window past the
		// messaging limit is accepted and dropped; a marketing template may fail with 131049.
		pf := s.portfolioOf(portfolioID(n))
		if acc.template && !open && !pf.reach(key, now) {
			pf.dropped++
			acc.dropped = true
			sm.Dropped = DroppedMessagingLimit
		}
		if acc.template && !acc.dropped && acc.category == "marketing" && pf.marketingRefused(key, now) && acc.failCode == 0 {
			acc.failCode = 131049
		}
		acc.free = !acc.template && free
		acc.outcome = out
		if out.NoCallbackData {
			acc.opaque = ""
		}
		acc.wamid = newWamid(key, true)
		sm.Wamid = acc.wamid
		s.sent = append(s.sent, sm)
		if len(s.sent) > s.maxSent {
			// Drop the oldest tenth at once so trimming stays amortised O(1).
			keep := s.maxSent - s.maxSent/10
			s.sent = slices.Clone(s.sent[len(s.sent)-keep:])
		}
	}
	s.mu.Unlock()
	if ge != nil {
		s.hang(r.Context(), out.Hang)
		ge.write(w, trace)
		return
	}

	var steps []delayedBody
	if set.webhookURL != "" && s.subscribed(n.WabaID) && !acc.dropped {
		steps = s.statusSteps(acc)
	}
	if out.EarlyStatus && len(steps) > 0 && set.webhookURL != "" {
		_ = s.hooks.deliverNow(r.Context(), steps[0].body)
		steps = steps[1:]
	}
	s.hang(r.Context(), out.Hang)

	resp := sendResponse{
		MessagingProduct: "whatsapp",
		Contacts:         []responseContact{{Input: input, WaID: waID, UserID: userID}},
		Messages:         []responseMessage{{ID: acc.wamid}},
	}
	if acc.template {
		resp.Messages[0].MessageStatus = "accepted"
	}
	writeGraphJSON(w, http.StatusOK, resp)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if set.webhookURL != "" && len(steps) > 0 {
		start := time.Now()
		queued := make([]step, len(steps))
		for i, p := range steps {
			queued[i] = step{body: p.body, at: start.Add(p.delay)}
		}
		s.hooks.enqueue(queued)
	}
}

// serveMarkRead answers a read receipt for an inbound message (status "read", message_id).
func (s *Simulator) serveMarkRead(w http.ResponseWriter, req sendRequest, trace string) {
	switch {
	case req.Status != "read":
		paramError(`Param status must be one of {READ} - got "`+req.Status+`".`, "status must be read").write(w, trace)
	case req.MessageID == "":
		paramError("The parameter message_id is required.", "message_id is required").write(w, trace)
	default:
		s.mu.Lock()
		s.markedRead = append(s.markedRead, req.MessageID)
		if len(s.markedRead) > s.maxSent { // bounded like the sent log
			s.markedRead = slices.Clone(s.markedRead[len(s.markedRead)-(s.maxSent-s.maxSent/10):])
		}
		s.mu.Unlock()
		writeGraphJSON(w, http.StatusOK, map[string]any{"success": true})
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// rawComponents returns template.components of a send body as received, or nil.
func rawComponents(body []byte) json.RawMessage {
	var b struct {
		Template struct {
			Components json.RawMessage `json:"components"`
		} `json:"template"`
	}
	if json.Unmarshal(body, &b) != nil {
		return nil
	}
	return b.Template.Components
}

// hang waits d, or until the client goes away or the simulator closes.
func (s *Simulator) hang(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-s.done:
	}
}

// checkTemplate looks the template up for the number's WABA and validates
// the send against it, filling sm and acc.
func (s *Simulator) checkTemplate(wabaID string, tpl *sendTemplate, sm *SentMessage, acc *accepted) *graphError {
	if tpl == nil {
		return paramError("The parameter template is required.", "template is required for type template")
	}
	if tpl.Name == "" {
		return paramError("The parameter template['name'] is required.", "template.name is required")
	}
	if tpl.Language == nil || tpl.Language.Code == "" {
		return paramError("The parameter template['language'] is required.", "template.language.code is required")
	}
	if p := tpl.Language.Policy; p != "" && p != "deterministic" {
		return paramError(`Param template['language']['policy'] must be one of {DETERMINISTIC} - got "`+p+`".`, "language.policy must be deterministic")
	}
	s.mu.Lock()
	var st storedTemplate
	found := false
	for _, t := range s.templates[wabaID] {
		if t.t.Name == tpl.Name && t.t.Language == tpl.Language.Code {
			st, found = *t, true
			break
		}
	}
	s.mu.Unlock()
	notFound := waError(132001, "template name ("+tpl.Name+") does not exist in "+tpl.Language.Code)
	if !found {
		return notFound
	}
	switch st.t.Status {
	case "APPROVED":
	case "PAUSED":
		return waError(132015, "")
	case "DISABLED":
		return waError(132016, "")
	default:
		return notFound
	}
	params, ge := validateTemplateSend(st.spec, tpl.Components)
	if ge != nil {
		return ge
	}
	sm.TemplateName = st.t.Name
	sm.TemplateLanguage = st.t.Language
	sm.Parameters = params
	acc.category = strings.ToLower(st.t.Category)
	return nil
}

// delayedBody is a status webhook body and its delay after the send response.
type delayedBody struct {
	body  []byte
	delay time.Duration
}

// statusSteps builds the status webhooks of an accepted message, in the
// order they are to be delivered.
func (s *Simulator) statusSteps(a accepted) []delayedBody {
	type planned struct {
		status string
		delay  time.Duration
	}
	var plan []planned
	switch {
	case a.failCode != 0:
		plan = []planned{{"sent", a.set.sentDelay}, {"failed", a.set.deliveredDelay}}
	case a.outcome.SkipDelivered:
		plan = []planned{{"sent", a.set.sentDelay}, {"read", a.set.readDelay}}
	default:
		plan = []planned{{"sent", a.set.sentDelay}, {"delivered", a.set.deliveredDelay}, {"read", a.set.readDelay}}
	}
	// Delivery slots stay in time order; with Reorder the statuses are
	// assigned to them in reverse, each keeping its own timestamp.
	slots := make([]time.Duration, len(plan))
	for i, p := range plan {
		slots[i] = p.delay
	}
	slices.Sort(slots)
	if a.outcome.Reorder {
		slices.Reverse(plan)
	}
	convID := strings.ToLower(randomHex(16))
	var steps []delayedBody
	for i, p := range plan {
		st := statusObject{
			ID:                    a.wamid,
			Status:                p.status,
			Timestamp:             strconv.FormatInt(a.at.Add(p.delay).Unix(), 10),
			RecipientID:           a.waID,
			RecipientUserID:       a.userID,
			BizOpaqueCallbackData: a.opaque,
		}
		switch p.status {
		case "failed":
			st.Errors = []statusError{asyncError(a.failCode)}
		case "sent", "delivered":
			st.Conversation = &conversation{ID: convID, Origin: origin{Type: a.category}}
			if p.status == "sent" {
				st.Conversation.ExpirationTimestamp = strconv.FormatInt(a.at.Add(24*time.Hour).Unix(), 10)
			}
			// Since October 2026 answers inside the window are charged (type regular, category
			// service), except inside a free entry point after an ad.
			st.Pricing = &pricing{Billable: true, PricingModel: "PMP", Type: "regular", Category: a.category}
			if a.free {
				st.Pricing.Billable = false
				st.Pricing.Type = "free_entry_point"
			}
		}
		env := messagesEnvelope(a.number.WabaID, messagesValue{
			Metadata: metadataOf(a.number),
			Statuses: []statusObject{st},
		})
		body, err := metaJSON(env)
		if err != nil {
			continue
		}
		steps = append(steps, delayedBody{body, slots[i]})
		if a.outcome.Duplicate {
			steps = append(steps, delayedBody{body, slots[i]})
		}
	}
	return steps
}
