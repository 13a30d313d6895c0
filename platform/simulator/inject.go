package simulator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Driving the simulator from a test or the control API: inbound messages from users and
// template status changes, each delivered as the platform's signed webhook.

// Inbound is a message from a user for InjectInboundMessage.
type Inbound struct {
	PhoneNumberID string         `json:"phone_number_id"`
	From          string         `json:"from"`
	Name          string         `json:"name"`
	Type          string         `json:"type"`
	Payload       map[string]any `json:"payload"`
	// ContextMessageID, when set, adds context{from: business number, id}
	// (a reply to, or a button tap on, that message).
	ContextMessageID string `json:"context_message_id,omitempty"`
}

// InjectInboundMessage makes the user in.From (digits, '+' allowed; rewritten
// to its wa_id like a send) send a message of type in.Type to the business
// number in.PhoneNumberID, and POSTs the signed inbound-message webhook:
// contacts[{profile{name}, wa_id}] and messages[{from, id, timestamp, type,
// <type>: in.Payload}], e.g. type "text" with payload {"body": "STOP"}, plus
// the reply context when in.ContextMessageID is set. It returns the new wamid
// once the webhook was answered 200. It fails with ErrUnknownNumber, for an
// empty from or type, with ErrNoWebhookURL, or with the last delivery error
// after every retry failed.
func (s *Simulator) InjectInboundMessage(in Inbound) (wamid string, err error) {
	from := onlyDigits(in.From)
	if from == "" {
		return "", errors.New("simulator: inbound from has no digits")
	}
	if in.Type == "" {
		return "", errors.New("simulator: inbound type is required")
	}
	waID := WaIDFor(from)
	s.mu.Lock()
	n, ok := s.numbers[in.PhoneNumberID]
	url := s.set.webhookURL
	now := s.clock()
	if ok {
		s.lastInbound[in.PhoneNumberID+"|"+waID] = now
	}
	s.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrUnknownNumber, in.PhoneNumberID)
	}
	if url == "" {
		return "", ErrNoWebhookURL
	}
	if !s.subscribed(n.WabaID) {
		return "", fmt.Errorf("%w: WABA %q", ErrNotSubscribed, n.WabaID)
	}
	wamid = newWamid(waID, false)
	msg := inboundMessage{
		From:      waID,
		ID:        wamid,
		Timestamp: strconv.FormatInt(now.Unix(), 10),
		Type:      in.Type,
	}
	if in.Payload != nil {
		msg.Payload = in.Payload
	}
	if in.ContextMessageID != "" {
		msg.Context = &messageContext{From: displayDigits(n.DisplayPhoneNumber), ID: in.ContextMessageID}
	}
	env := messagesEnvelope(n.WabaID, messagesValue{
		Metadata: metadataOf(n),
		Contacts: []inboundContact{{Profile: profile{Name: in.Name}, WaID: waID}},
		Messages: []inboundMessage{msg},
	})
	body, err := metaJSON(env)
	if err != nil {
		return "", fmt.Errorf("simulator: inbound payload: %w", err)
	}
	if err := s.hooks.deliverNow(context.Background(), body); err != nil {
		return wamid, err
	}
	return wamid, nil
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
