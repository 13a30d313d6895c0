package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"gateway/platform/whatsapp"
	"gateway/server/domain"
	"gateway/store"
)

// Platform is what the server needs of the messaging platform (Meta's Cloud API); the
// whatsapp.Client implements it.
type Platform interface {
	SendTemplate(ctx context.Context, token, phoneNumberID string, m whatsapp.TemplateSend) (whatsapp.SendResult, error)
	SendText(ctx context.Context, token, phoneNumberID, to, body string) (whatsapp.SendResult, error)
	ListTemplates(ctx context.Context, token, wabaID string) ([]whatsapp.Template, error)
	SendMessage(ctx context.Context, token, phoneNumberID string, m whatsapp.Message) (whatsapp.SendResult, error)
	MarkRead(ctx context.Context, token, phoneNumberID, messageID string, typing bool) error
}

// messenger adapts the Platform to the domain's send pipeline (domain.Messenger): each kind
// of payload becomes its platform call, and every failure a *domain.PlatformError.
type messenger struct{ p Platform }

var _ domain.Messenger = messenger{}

// Send sends one payload. A new kind of message adds its case here.
func (m messenger) Send(ctx context.Context, from store.Connection, to string, p domain.Payload, callbackData string) (domain.Accepted, error) {
	switch p := p.(type) {
	case domain.TemplatePayload:
		send := whatsapp.TemplateSend{To: to, ToUserID: p.ToUserID, Name: p.Name, Language: p.Language, HeaderParams: p.HeaderParams, BodyParams: p.BodyParams,
			HeaderParamNames: p.HeaderParamNames, BodyParamNames: p.BodyParamNames, CallbackData: callbackData}
		if h := p.HeaderMedia; h != nil {
			send.HeaderMedia = &whatsapp.HeaderMedia{Type: h.Type, Link: h.Link, ID: h.ID, Filename: h.Filename}
		}
		if l := p.HeaderLocation; l != nil {
			send.HeaderLocation = &whatsapp.HeaderLocation{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}
		}
		for _, b := range p.Buttons {
			send.Buttons = append(send.Buttons, whatsapp.ButtonParam{Index: b.Index, Type: b.Type, Value: b.Value})
		}
		return accepted(m.p.SendTemplate(ctx, from.AccessToken, from.PhoneNumberID, send))
	case domain.AnswerPayload:
		msg, err := answerMessage(to, p)
		if err != nil {
			return domain.Accepted{}, &domain.PlatformError{Outcome: domain.PlatformBadArgument, Cause: err}
		}
		msg.CallbackData = callbackData
		return accepted(m.p.SendMessage(ctx, from.AccessToken, from.PhoneNumberID, msg))
	}
	return domain.Accepted{}, &domain.PlatformError{Outcome: domain.PlatformBadArgument,
		Cause: fmt.Errorf("%w: no platform call sends a %q message", whatsapp.ErrInvalidArgument, p.MessageType())}
}

// SendText sends a plain text.
func (m messenger) SendText(ctx context.Context, token, phoneNumberID, to, body string) (domain.Accepted, error) {
	return accepted(m.p.SendText(ctx, token, phoneNumberID, to, body))
}

// ParamNames reads a NAMED template's placeholder names as the platform's templates name them.
func (messenger) ParamNames(components json.RawMessage) (header, body []string, err error) {
	var wt whatsapp.Template
	if err := json.Unmarshal(components, &wt.Components); err != nil {
		return nil, nil, err
	}
	return wt.HeaderParamNames(), wt.BodyParamNames(), nil
}

func accepted(res whatsapp.SendResult, err error) (domain.Accepted, error) {
	if err != nil {
		return domain.Accepted{}, platformError(err)
	}
	return domain.Accepted{MessageID: res.MessageID, WaID: res.WaID}, nil
}

// platformError classifies a platform client's error for the domain: a refusal with its code
// and title, an argument our client refused, an unreadable answer, no answer in time, or the
// platform out of reach.
func platformError(err error) *domain.PlatformError {
	var pe *whatsapp.Error
	switch {
	case errors.As(err, &pe):
		return &domain.PlatformError{Outcome: domain.PlatformRejected, Code: pe.Code, HTTPStatus: pe.HTTPStatus,
			Title: platformTitle(pe), Reason: pe.Reason(), Details: pe.Details, Cause: err}
	case errors.Is(err, whatsapp.ErrInvalidArgument):
		return &domain.PlatformError{Outcome: domain.PlatformBadArgument, Cause: err}
	case errors.Is(err, whatsapp.ErrMalformedResponse):
		return &domain.PlatformError{Outcome: domain.PlatformUnreadable, Cause: err}
	case whatsapp.IsTimeout(err):
		return &domain.PlatformError{Outcome: domain.PlatformTimeout, Cause: err}
	}
	return &domain.PlatformError{Outcome: domain.PlatformUnreachable, Cause: err}
}

// platformTitle is the error's title: error_user_title, else the message without its "(#code) "
// prefix.
func platformTitle(pe *whatsapp.Error) string {
	if pe.Title != "" {
		return pe.Title
	}
	msg := pe.Message
	if strings.HasPrefix(msg, "(#") {
		if i := strings.Index(msg, ") "); i > 0 {
			msg = msg[i+2:]
		}
	}
	return msg
}

// answerMessage is an answer as the platform receives it: the recipient (the number to, or the
// payload's user id), the content of its kind, and the platform's ids of the quoted and
// reacted-to messages.
func answerMessage(to string, p domain.AnswerPayload) (whatsapp.Message, error) {
	a := p.Answer
	m := whatsapp.Message{To: to, ToUserID: a.UserID, ReplyTo: p.ReplyToWamid}
	media := func(md *domain.AnswerMedia) *whatsapp.MediaMessage {
		return &whatsapp.MediaMessage{ID: md.ID, Link: md.Link, Caption: md.Caption, Filename: md.Filename}
	}
	switch a.Type {
	case domain.AnswerText:
		m.Text = &whatsapp.TextMessage{Body: a.Text.Body, PreviewURL: a.Text.PreviewURL}
	case domain.AnswerImage:
		m.Image = media(a.Image)
	case domain.AnswerVideo:
		m.Video = media(a.Video)
	case domain.AnswerAudio:
		m.Audio = media(a.Audio)
	case domain.AnswerDocument:
		m.Document = media(a.Document)
	case domain.AnswerSticker:
		m.Sticker = media(a.Sticker)
	case domain.AnswerLocation:
		l := a.Location
		m.Location = &whatsapp.LocationMessage{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}
	case domain.AnswerContacts:
		if err := json.Unmarshal(a.Contacts, &m.Contacts); err != nil {
			return m, fmt.Errorf("contact cards: %w", err)
		}
	case domain.AnswerReaction:
		m.Reaction = &whatsapp.Reaction{MessageID: p.ReactToWamid, Emoji: a.Reaction.Emoji}
	case domain.AnswerInteractive:
		im := a.Interactive
		w := &whatsapp.InteractiveMessage{Type: im.Type, Header: im.Header, Body: im.Body, Footer: im.Footer, ListButton: im.Button}
		for _, b := range im.Buttons {
			w.Buttons = append(w.Buttons, whatsapp.ReplyButton{ID: b.ID, Title: b.Title})
		}
		for _, sec := range im.Sections {
			ws := whatsapp.ListSection{Title: sec.Title}
			for _, r := range sec.Rows {
				ws.Rows = append(ws.Rows, whatsapp.ListRow{ID: r.ID, Title: r.Title, Description: r.Description})
			}
			w.Sections = append(w.Sections, ws)
		}
		m.Interactive = w
	}
	return m, nil
}
