package server

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"gateway/platform/whatsapp"
	"gateway/server/domain"
	"gateway/store"
)

// recordInbound records one inbound message: contact, alias, conversation, message and events,
// and the STOP / START opt-out keywords.
func (s *Server) recordInbound(ctx context.Context, conn store.Connection, m whatsapp.InboundMessage, profileName string) error {
	if m.ID == "" || !domain.IsWaID(m.From) {
		s.log.WarnContext(ctx, "platform webhook: inbound message without a usable sender or id ignored",
			"account_id", conn.AccountID, "wamid", m.ID, "type", m.Type)
		return nil
	}
	at, ok := m.Time()
	if !ok {
		at = s.now()
	}
	fields, err := json.Marshal(inboundEventFields(m))
	if err != nil {
		return fmt.Errorf("message.received fields: %w", err)
	}
	in := store.InboundMessage{
		PlatformMessageID: m.ID,
		From:              m.From,
		FromForms:         domain.WaIDForms(m.From),
		ProfileName:       profileName,
		Type:              cmp.Or(m.Type, "unknown"),
		SentAt:            at,
		Destination:       conn.PhoneNumber,
		Content:           m.Raw,
		EventFields:       fields,
		Block:             optOut(m.TextContent()),
	}
	res, err := s.store.RecordInbound(ctx, conn.AccountID, in)
	if err != nil {
		return err
	}
	if res.Duplicate {
		s.log.DebugContext(ctx, "platform webhook: duplicate inbound message", "account_id", conn.AccountID, "wamid", m.ID)
	}
	return nil
}

// optOut returns true for STOP / UNSUBSCRIBE, false for START, nil for any other text.
func optOut(text string) *bool {
	var v bool
	switch strings.ToUpper(strings.TrimSpace(text)) {
	case "STOP", "UNSUBSCRIBE":
		v = true
	case "START":
		v = false
	default:
		return nil
	}
	return &v
}

// receivedFields are the typed parts of message.received data (openapi MessageReceivedData);
// only those that apply to the message's type are set.
type receivedFields struct {
	Text     *string           `json:"text,omitempty"`
	Media    *receivedMedia    `json:"media,omitempty"`
	Location *receivedLocation `json:"location,omitempty"`
	Reply    *receivedReply    `json:"reply,omitempty"`
	Reaction *receivedReaction `json:"reaction,omitempty"`
}

type receivedMedia struct {
	ID       string `json:"id"`
	MimeType string `json:"mime_type,omitempty"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"`
}

type receivedLocation struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
}

type receivedReply struct {
	ID      string `json:"id,omitempty"`
	Title   string `json:"title,omitempty"`
	Payload string `json:"payload,omitempty"`
}

type receivedReaction struct {
	MessageID string `json:"message_id"`
	Emoji     string `json:"emoji"`
}

// inboundEventFields picks the typed parts of a message for its message.received event: text
// for text messages and button or list replies, media, location, reply and reaction.
func inboundEventFields(m whatsapp.InboundMessage) receivedFields {
	var f receivedFields
	if m.Type == "text" || m.Type == "button" || m.Type == "interactive" {
		if t := m.TextContent(); t != "" || m.Type == "text" {
			f.Text = &t
		}
	}
	media := map[string]*whatsapp.Media{"image": m.Image, "video": m.Video, "audio": m.Audio, "document": m.Document, "sticker": m.Sticker}[m.Type]
	if media != nil && media.ID != "" {
		f.Media = &receivedMedia{ID: media.ID, MimeType: media.MimeType, Caption: media.Caption, Filename: media.Filename}
	}
	if m.Type == "location" && m.Location != nil {
		l := m.Location
		f.Location = &receivedLocation{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}
	}
	switch {
	case m.Type == "button" && m.Button != nil:
		f.Reply = &receivedReply{Title: m.Button.Text, Payload: m.Button.Payload}
	case m.Type == "interactive" && m.Interactive != nil && m.Interactive.ButtonReply != nil:
		f.Reply = &receivedReply{ID: m.Interactive.ButtonReply.ID, Title: m.Interactive.ButtonReply.Title}
	case m.Type == "interactive" && m.Interactive != nil && m.Interactive.ListReply != nil:
		f.Reply = &receivedReply{ID: m.Interactive.ListReply.ID, Title: m.Interactive.ListReply.Title}
	}
	if m.Type == "reaction" && m.Reaction != nil {
		f.Reaction = &receivedReaction{MessageID: m.Reaction.MessageID, Emoji: m.Reaction.Emoji}
	}
	return f
}
