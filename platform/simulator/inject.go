package simulator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Driving the simulator from a test or the control API: inbound messages from users and
// template status changes, each delivered as the platform's signed webhook.

// Inbound is a message from a user for InjectInboundMessage.
type Inbound struct {
	PhoneNumberID string `json:"phone_number_id"`
	// From is the user's number (digits; '+' and spaces allowed). Leave it
	// empty for a username-only user whose number the platform does not
	// share: UserID is then required, and the webhook has no wa_id or from.
	From string `json:"from"`
	Name string `json:"name"`
	// Type is the message type; Payload goes under the key of that name (an
	// object, or an array for "contacts"). For image, video, audio, document
	// and sticker without an "id" in Payload the simulator creates the media
	// (MediaSize bytes of deterministic content) and fills id, mime_type and
	// sha256 (base64, as webhooks carry it).
	Type    string `json:"type"`
	Payload any    `json:"payload"`
	// UserID is the user's business-scoped user id; empty takes the one the
	// simulator gives the number (UserIDFor). ParentUserID and Username are
	// sent when set.
	UserID       string `json:"user_id,omitempty"`
	ParentUserID string `json:"parent_user_id,omitempty"`
	Username     string `json:"username,omitempty"`
	// ContextMessageID, when set, adds context{from, id}: a reply to, or a
	// button tap on, that message; ContextFrom is who sent it (the business
	// number when empty).
	ContextMessageID string `json:"context_message_id,omitempty"`
	ContextFrom      string `json:"context_from,omitempty"`
	// Forwarded and FrequentlyForwarded set the context's flags.
	Forwarded           bool `json:"forwarded,omitempty"`
	FrequentlyForwarded bool `json:"frequently_forwarded,omitempty"`
	// Referral is the click-to-WhatsApp ad the user came from (source_url,
	// source_id, source_type, headline, body, media_type, image_url,
	// video_url, thumbnail_url, ctwa_clid); it opens a 72 h window.
	Referral map[string]any `json:"referral,omitempty"`
	// Errors replaces the platform's errors array of an "unsupported"
	// message (131051 by default).
	Errors any `json:"errors,omitempty"`
	// MediaSize is the size of created media (0 takes a size per type).
	MediaSize int64 `json:"media_size,omitempty"`
	// SentSecondsAgo dates the message that long before the simulator's clock (its webhook
	// timestamp and the window it opens), so that a development setup can have a customer whose
	// service window has already closed: a message sent 25 hours ago opened a 24-hour window
	// that closed an hour ago.
	SentSecondsAgo int64 `json:"sent_seconds_ago,omitempty"`
}

// Injected is what Inject made: the message's wamid, the sender's identity and, for media the
// simulator created, the media id and its SHA-256.
type Injected struct {
	Wamid     string `json:"wamid"`
	WaID      string `json:"wa_id,omitempty"`
	UserID    string `json:"user_id"`
	MediaID   string `json:"media_id,omitempty"`
	SHA256    string `json:"sha256,omitempty"` // hex
	MediaSize int64  `json:"media_size,omitempty"`
}

// InjectInboundMessage is Inject returning only the wamid. It fails like Inject.
func (s *Simulator) InjectInboundMessage(in Inbound) (wamid string, err error) {
	res, err := s.Inject(in)
	return res.Wamid, err
}

// Inject makes a user send the message in to the business number and POSTs the signed webhook,
// as the platform does since April 2026: user_id always, wa_id and from only for a user whose
// number is known. The message opens (or extends) the handset's service window with that number:
// 24 h, or 72 h with a referral; system messages do not. It fails with ErrUnknownNumber, for a
// missing type or sender, for media it cannot create, with ErrNoWebhookURL or
// ErrNotSubscribed, or with the last delivery error after every retry failed (Wamid is set then).
func (s *Simulator) Inject(in Inbound) (Injected, error) {
	from := onlyDigits(in.From)
	switch {
	case in.Type == "":
		return Injected{}, errors.New("simulator: inbound type is required")
	case from == "" && in.From != "":
		return Injected{}, errors.New("simulator: inbound from has no digits")
	case from == "" && in.UserID == "":
		return Injected{}, errors.New("simulator: inbound needs from (a number) or user_id (a username-only sender)")
	case in.UserID != "" && !isUserID(in.UserID):
		return Injected{}, fmt.Errorf("simulator: user_id %q is not CC.[ENT.]alphanumerics", in.UserID)
	case in.SentSecondsAgo < 0:
		return Injected{}, errors.New("simulator: sent_seconds_ago cannot be negative")
	}
	payload := in.Payload
	var res Injected
	s.mu.Lock()
	n, ok := s.numbers[in.PhoneNumberID]
	now := s.clock()
	var h *Handset
	if ok {
		s.countInbound(in.PhoneNumberID, now)
		if from != "" {
			h = s.handsetByWaID(WaIDFor(from))
			if in.UserID != "" {
				s.relink(h, "", in.UserID)
			}
		} else {
			h = s.handsetByUserID(in.UserID)
		}
		h.ParentUserID = cmp.Or(in.ParentUserID, h.ParentUserID)
		h.Username = cmp.Or(in.Username, h.Username)
		h.Name = cmp.Or(in.Name, h.Name)
		if isMediaType(in.Type) {
			var err error
			if payload, res, err = s.inboundMedia(n, in, now); err != nil {
				s.mu.Unlock()
				return Injected{}, err
			}
		}
		if in.Type != "system" {
			s.openWindow(in.PhoneNumberID, h, sentAt(now, in), in.Referral != nil)
		}
	}
	var hs Handset
	if h != nil {
		hs = *h
	}
	s.mu.Unlock()
	if !ok {
		return Injected{}, fmt.Errorf("%w: %q", ErrUnknownNumber, in.PhoneNumberID)
	}
	if from == "" {
		hs.WaID = "" // the platform leaves the number out for a username-only sender
	}
	msg := inboundMessage{
		From:             hs.WaID,
		FromUserID:       hs.UserID,
		FromParentUserID: hs.ParentUserID,
		Type:             in.Type,
		Payload:          payload,
	}
	if in.Referral != nil {
		msg.Referral = in.Referral
	}
	if in.Type == "unsupported" {
		msg.Errors = in.Errors
		if msg.Errors == nil {
			msg.Errors = []statusError{{Code: 131051, Title: "Message type unknown", Message: "Message type unknown",
				ErrorData: statusErrorData{Details: "Message type is currently not supported."}}}
		}
		msg.Payload = nil
	}
	if in.ContextMessageID != "" || in.Forwarded || in.FrequentlyForwarded {
		msg.Context = &messageContext{ID: in.ContextMessageID, Forwarded: in.Forwarded, FrequentlyForwarded: in.FrequentlyForwarded}
		if in.ContextMessageID != "" {
			msg.Context.From = cmp.Or(onlyDigits(in.ContextFrom), displayDigits(n.DisplayPhoneNumber))
		}
	}
	res.WaID, res.UserID = hs.WaID, hs.UserID
	wamid, err := s.deliverInbound(n, hs, msg, sentAt(now, in))
	res.Wamid = wamid
	return res, err
}

// sentAt is when the handset sent in: now, or SentSecondsAgo before it.
func sentAt(now time.Time, in Inbound) time.Time {
	return now.Add(-time.Duration(in.SentSecondsAgo) * time.Second)
}

// deliverInbound stamps msg (id, timestamp), wraps it with the sender's contact (none for a
// system message, as the platform sends them) and POSTs it.
// It returns the wamid, also when the delivery failed.
func (s *Simulator) deliverInbound(n Number, h Handset, msg inboundMessage, now time.Time) (string, error) {
	if s.webhookURL() == "" {
		return "", ErrNoWebhookURL
	}
	if !s.subscribed(n.WabaID) {
		return "", fmt.Errorf("%w: WABA %q", ErrNotSubscribed, n.WabaID)
	}
	msg.ID = newWamid(cmp.Or(msg.From, msg.FromUserID), false)
	msg.Timestamp = strconv.FormatInt(now.Unix(), 10)
	v := messagesValue{Metadata: metadataOf(n), Messages: []inboundMessage{msg}}
	if msg.Type != "system" { // system messages come without contacts
		v.Contacts = []inboundContact{{Profile: profile{Name: h.Name, Username: h.Username}, WaID: msg.From, UserID: h.UserID, ParentUserID: h.ParentUserID}}
	}
	env := messagesEnvelope(n.WabaID, v)
	body, err := metaJSON(env)
	if err != nil {
		return "", fmt.Errorf("simulator: inbound payload: %w", err)
	}
	if err := s.hooks.deliverNow(context.Background(), body); err != nil {
		return msg.ID, err
	}
	return msg.ID, nil
}

// systemPayload is a system message's object (identity changes).
type systemPayload struct {
	Body                 string `json:"body"`
	WaID                 string `json:"wa_id,omitempty"`
	Type                 string `json:"type"`
	UserID               string `json:"user_id,omitempty"`
	ParentUserID         string `json:"parent_user_id,omitempty"`
	PreviousUserID       string `json:"previous_user_id,omitempty"`
	PreviousParentUserID string `json:"previous_parent_user_id,omitempty"`
}

// ChangeNumber makes the user (a number or a user id) move to newNumber, as the platform reports
// it: a system message user_changed_number from the old number, naming the new wa_id, the new
// user id (regenerated, as the platform does on a number change) and the previous one. The
// handset and its service windows follow. It fails like Inject, and for an unknown user.
func (s *Simulator) ChangeNumber(phoneNumberID, user, newNumber string) (Injected, error) {
	newWa := WaIDFor(onlyDigits(newNumber))
	if newWa == "" {
		return Injected{}, errors.New("simulator: the new number has no digits")
	}
	return s.changeIdentity(phoneNumberID, user, func(h *Handset) (systemPayload, string, string) {
		newUID := UserIDFor(newWa)
		return systemPayload{Body: fmt.Sprintf("User %s changed from %s to %s", cmp.Or(h.Name, "A"), h.WaID, newWa),
			WaID: newWa, Type: "user_changed_number", UserID: newUID}, newWa, newUID
	})
}

// ChangeUserID gives the user (a number or a user id) a new business-scoped user id (newUserID,
// or a generated one when empty), as the platform reports it: a system message
// user_changed_user_id naming the new and the previous id. It fails like ChangeNumber, and for a
// newUserID that is not a user id.
func (s *Simulator) ChangeUserID(phoneNumberID, user, newUserID string) (Injected, error) {
	if newUserID != "" && !isUserID(newUserID) {
		return Injected{}, fmt.Errorf("simulator: new user id %q is not CC.[ENT.]alphanumerics", newUserID)
	}
	return s.changeIdentity(phoneNumberID, user, func(h *Handset) (systemPayload, string, string) {
		newUID := cmp.Or(newUserID, deriveUserID(h.UserID[:2], "rotate:"+h.UserID))
		return systemPayload{Body: fmt.Sprintf("User %s changed their user id", cmp.Or(h.Name, "A")),
			Type: "user_changed_user_id", UserID: newUID}, "", newUID
	})
}

// changeIdentity sends the system message change builds from the handset's current identity
// and then relinks the handset to the new wa_id and user id change returns.
func (s *Simulator) changeIdentity(phoneNumberID, user string, change func(h *Handset) (systemPayload, string, string)) (Injected, error) {
	s.mu.Lock()
	n, ok := s.numbers[phoneNumberID]
	h := s.lookupHandset(user)
	now := s.clock()
	if !ok || h == nil {
		s.mu.Unlock()
		if !ok {
			return Injected{}, fmt.Errorf("%w: %q", ErrUnknownNumber, phoneNumberID)
		}
		return Injected{}, fmt.Errorf("%w: %q", ErrUnknownUser, user)
	}
	old := *h
	sys, newWa, newUID := change(h)
	sys.ParentUserID = old.ParentUserID
	sys.PreviousUserID, sys.PreviousParentUserID = old.UserID, old.ParentUserID
	s.relink(h, newWa, newUID)
	s.mu.Unlock()
	msg := inboundMessage{From: old.WaID, FromUserID: old.UserID, FromParentUserID: old.ParentUserID, Type: "system", Payload: sys}
	wamid, err := s.deliverInbound(n, old, msg, now)
	return Injected{Wamid: wamid, WaID: cmp.Or(newWa, old.WaID), UserID: newUID}, err
}

// SetTemplateStatus changes a template's stored status (and rejected reason)
// and POSTs a signed message_template_status_update webhook with event =
// status, the numeric message_template_id and reason ("NONE" when empty).
// REINSTATED and UNARCHIVED are stored as APPROVED (sendable again). Without
// a webhook URL only the status changes. It fails with ErrUnknownTemplate,
// ErrInvalidStatus, for a non-numeric template id, or with the last delivery
// error after every retry failed (the status is changed regardless).
func (s *Simulator) SetTemplateStatus(wabaID, templateID, status, reason string) error {
	status = strings.ToUpper(strings.TrimSpace(status))
	if !slices.Contains(TemplateStatuses, status) {
		return fmt.Errorf("%w: %q", ErrInvalidStatus, status)
	}
	s.mu.Lock()
	var st *storedTemplate
	for _, t := range s.templates[wabaID] {
		if t.t.ID == templateID {
			st = t
			break
		}
	}
	if st == nil {
		s.mu.Unlock()
		return fmt.Errorf("%w: %q in WABA %q", ErrUnknownTemplate, templateID, wabaID)
	}
	if _, err := strconv.ParseInt(templateID, 10, 64); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("simulator: template id %q is not numeric", templateID)
	}
	stored := status
	if status == "REINSTATED" || status == "UNARCHIVED" {
		stored = "APPROVED"
	}
	t := st.t // the struct is replaced, never mutated, so readers' copies stay valid
	t.Status = stored
	if status == "REJECTED" {
		t.RejectedReason = reason
	} else {
		t.RejectedReason = ""
	}
	*st = storedTemplate{t: t, spec: st.spec}
	url := s.set.webhookURL
	now := s.clock()
	s.mu.Unlock()
	if url == "" {
		return nil
	}
	env, err := templateStatusEnvelope(wabaID, now.Unix(), t, status, reason)
	if err != nil {
		return err
	}
	body, err := metaJSON(env)
	if err != nil {
		return fmt.Errorf("simulator: template status payload: %w", err)
	}
	return s.hooks.deliverNow(context.Background(), body)
}

// metadataOf is value.metadata for a number.
func metadataOf(n Number) metadata {
	return metadata{DisplayPhoneNumber: displayDigits(n.DisplayPhoneNumber), PhoneNumberID: n.PhoneNumberID}
}
