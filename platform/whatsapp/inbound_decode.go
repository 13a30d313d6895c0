package whatsapp

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"time"
)

// UnmarshalJSON decodes a message leniently and keeps it in Raw. It never fails: fields of an
// unexpected JSON type are left empty, a numeric timestamp is accepted, and a payload that
// cannot be typed sets Err.
func (m *InboundMessage) UnmarshalJSON(data []byte) error {
	*m = InboundMessage{Raw: append(json.RawMessage(nil), data...)}
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		m.Err = fmt.Errorf("%w: message is not a JSON object", ErrUnparseableMessage)
		return nil
	}
	type plain InboundMessage
	aux := struct {
		*plain
		Timestamp flexString `json:"timestamp"`
	}{plain: (*plain)(m)}
	_ = lenientUnmarshal(data, &aux)
	m.Timestamp = string(aux.Timestamp)
	if why := m.contentProblem(); why != "" {
		m.Err = fmt.Errorf("%w: %s", ErrUnparseableMessage, why)
	}
	return nil
}

// contentProblem says what is missing from the payload of a known type ("" when nothing is).
func (m *InboundMessage) contentProblem() string {
	switch m.Type {
	case TypeText:
		if m.Text == nil || m.Text.Body == "" {
			return "text message without a body"
		}
	case TypeImage, TypeVideo, TypeAudio, TypeDocument, TypeSticker:
		if md := m.Media(); md == nil || md.ID == "" {
			return m.Type + " message without a media id"
		}
	case TypeLocation:
		if l := m.Location; l == nil || (l.Latitude == 0 && l.Longitude == 0 && l.Name == "" && l.Address == "") {
			return "location message without coordinates"
		}
	case TypeContacts:
		if len(m.Contacts) == 0 {
			return "contacts message without contact cards"
		}
	case TypeInteractive:
		return m.Interactive.problem()
	case TypeButton:
		if m.Button == nil || (m.Button.Text == "" && m.Button.Payload == "") {
			return "button message without text or payload"
		}
	case TypeReaction:
		if m.Reaction == nil || m.Reaction.MessageID == "" {
			return "reaction without the message reacted to"
		}
	case TypeOrder:
		if m.Order == nil || m.Order.CatalogID == "" {
			return "order without a catalog id"
		}
	case TypeSystem:
		if m.System == nil || m.System.Type == "" {
			return "system message without a system type"
		}
	case TypeEdit:
		switch {
		case m.Edit == nil || m.Edit.OriginalMessageID == "":
			return "edit without the original message id"
		case m.Edit.Message == nil:
			return "edit without the new content"
		case m.Edit.Message.Err != nil:
			return "edit: " + m.Edit.Message.Err.Error()
		}
	case TypeRevoke:
		if m.Revoke == nil || m.Revoke.OriginalMessageID == "" {
			return "revoke without the original message id"
		}
	}
	return ""
}

// problem says what is wrong with an interactive reply ("" when nothing is).
func (i *Interactive) problem() string {
	switch {
	case i == nil:
		return "interactive message without an interactive object"
	case i.Type == InteractiveButtonReply && i.ButtonReply == nil:
		return "button_reply without its object"
	case i.Type == InteractiveListReply && i.ListReply == nil:
		return "list_reply without its object"
	case i.Type == InteractiveNFMReply && i.NFMReply == nil:
		return "nfm_reply without its object"
	case i.Type == InteractiveNFMReply && i.NFMReply.invalid:
		return "nfm_reply whose response_json is not a JSON object"
	case i.Type != InteractiveButtonReply && i.Type != InteractiveListReply && i.Type != InteractiveNFMReply:
		return fmt.Sprintf("interactive reply of unknown type %q", i.Type)
	}
	return ""
}

// UnmarshalJSON decodes a Flow's answers: response_json is a string holding a JSON object (an
// object given directly is accepted too). Anything else marks the reply invalid. It never fails.
func (n *NFMReply) UnmarshalJSON(data []byte) error {
	var aux struct {
		Name         string          `json:"name"`
		Body         string          `json:"body"`
		ResponseJSON json.RawMessage `json:"response_json"`
	}
	_ = lenientUnmarshal(data, &aux)
	*n = NFMReply{Name: aux.Name, Body: aux.Body}
	raw := bytes.TrimSpace(aux.ResponseJSON)
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			n.invalid = true
			return nil
		}
		raw = bytes.TrimSpace([]byte(s))
	}
	var obj map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		n.invalid = true
		return nil
	}
	n.ResponseJSON = append(json.RawMessage(nil), raw...)
	if tok, ok := obj["flow_token"]; ok {
		_ = json.Unmarshal(tok, &n.FlowToken)
	}
	return nil
}

// UnmarshalJSON decodes a location, accepting coordinates given as numbers or as numeric
// strings. It never fails.
func (l *Location) UnmarshalJSON(data []byte) error {
	type plain Location
	aux := struct {
		*plain
		Latitude  flexFloat `json:"latitude"`
		Longitude flexFloat `json:"longitude"`
	}{plain: (*plain)(l)}
	_ = lenientUnmarshal(data, &aux)
	l.Latitude, l.Longitude = float64(aux.Latitude), float64(aux.Longitude)
	return nil
}

// UnmarshalJSON decodes an order line, accepting quantity and price given as numbers or as
// numeric strings. It never fails.
func (o *OrderItem) UnmarshalJSON(data []byte) error {
	type plain OrderItem
	aux := struct {
		*plain
		Quantity  flexInt   `json:"quantity"`
		ItemPrice flexFloat `json:"item_price"`
	}{plain: (*plain)(o)}
	_ = lenientUnmarshal(data, &aux)
	o.Quantity, o.ItemPrice = int(aux.Quantity), float64(aux.ItemPrice)
	return nil
}

// joinSenders fills each message's Sender from the message and the change's contacts, and sets
// Err on a message without an id or without any sender identifier.
func (v *ChangeValue) joinSenders() {
	for i := range v.Messages {
		m := &v.Messages[i]
		c := v.contactOf(m)
		m.Sender = Sender{
			WaID:         cmp.Or(m.From, c.WaID),
			UserID:       cmp.Or(m.FromUserID, c.UserID),
			ParentUserID: cmp.Or(m.FromParentUserID, c.ParentUserID),
			Username:     c.Profile.Username,
			Name:         c.Profile.Name,
		}
		if m.Type == TypeSystem && m.System != nil && m.Sender.WaID == "" && m.Sender.UserID == "" {
			// System messages come without contacts; an identity change names the person by
			// the id they had before it.
			m.Sender.UserID, m.Sender.ParentUserID = m.System.PreviousUserID, m.System.PreviousParentUserID
		}
		if m.Err != nil {
			continue
		}
		switch {
		case m.ID == "":
			m.Err = fmt.Errorf("%w: message without an id", ErrUnparseableMessage)
		case m.Sender.WaID == "" && m.Sender.UserID == "":
			m.Err = fmt.Errorf("%w: message without a sender (no from, from_user_id or contact)", ErrUnparseableMessage)
		}
	}
}

// contactOf is the value.contacts[] entry of a message's sender: the one with its wa_id or its
// user id, else the only contact when the message names no sender itself.
func (v *ChangeValue) contactOf(m *InboundMessage) Contact {
	for _, c := range v.Contacts {
		if (m.From != "" && c.WaID == m.From) || (m.FromUserID != "" && c.UserID == m.FromUserID) {
			return c
		}
	}
	if len(v.Contacts) == 1 && m.From == "" && m.FromUserID == "" {
		return v.Contacts[0]
	}
	return Contact{}
}

// Media returns the media payload of an image, video, audio, document or sticker message, and
// nil for every other type.
func (m InboundMessage) Media() *Media {
	switch m.Type {
	case TypeImage:
		return m.Image
	case TypeVideo:
		return m.Video
	case TypeAudio:
		return m.Audio
	case TypeDocument:
		return m.Document
	case TypeSticker:
		return m.Sticker
	}
	return nil
}

// Window returns how long the business may answer freely after this message: EntryPointWindow
// for a message from a click-to-WhatsApp ad (it carries a referral), else ServiceWindow.
func (m InboundMessage) Window() time.Duration {
	if m.Referral != nil {
		return EntryPointWindow
	}
	return ServiceWindow
}

// Time returns the message's timestamp. ok is false when it is missing or not a
// positive number of unix seconds.
func (m InboundMessage) Time() (t time.Time, ok bool) {
	return unixSeconds(m.Timestamp)
}
