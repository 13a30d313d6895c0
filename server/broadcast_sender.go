package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gateway/gen"
	"gateway/platform/whatsapp"
	"gateway/server/broadcast"
	"gateway/server/domain"
	"gateway/store"
)

// BroadcastSender is the broadcast engine's Sender over the gateway's own send path: a live
// broadcast's recipient is sent like POST /v1/messages/template (the message row and its
// events, the contact check, the campaign named after the broadcast, the send metrics), with
// the recipient's key (store.BroadcastKey) bound to the message before the platform call, so
// that the engine settles a recipient left sending from its message (broadcast.Sender). A
// test-mode broadcast's recipient is recorded as a simulated test send, and nothing reaches
// the platform.
func (s *Server) BroadcastSender() broadcast.Sender { return broadcastSender{s} }

type broadcastSender struct{ s *Server }

// SendBroadcast implements broadcast.Sender: the recipient's send is the domain's template
// send (server/domain/templatesend.go), holding the recipient's key.
func (bs broadcastSender) SendBroadcast(ctx context.Context, m broadcast.Message) (string, error) {
	s := bs.s
	b := m.Broadcast
	if b.Test {
		return s.sendBroadcastTest(ctx, m)
	}
	if m.Recipient.Mobile == "" {
		return "", fmt.Errorf("%w: a recipient known only by a user id cannot be sent a template yet", broadcast.ErrNotSent)
	}
	name := b.TemplateName
	in := domain.TemplateSend{AccountID: b.AccountID, Destination: m.Recipient.Mobile, TemplateName: &name,
		Language: b.TemplateLanguage, BodyVariables: m.BodyParams, CampaignName: b.Name, Source: "api",
		Key: &domain.HeldKey{Key: store.BroadcastKey(m.Recipient.ID)}}
	if m.BeforeCall != nil {
		ctx = context.WithValue(ctx, callGateCtx{}, m.BeforeCall)
	}
	sent, err := s.sends.SendTemplate(ctx, in)
	if err != nil {
		return "", broadcastSendError(err)
	}
	return sent.PlatformMessageID, nil
}

// callGateCtx keys a platform call's pacing gate in its context (broadcast.Message.BeforeCall),
// which the platform wrapper waits on right before the call (measuredPlatform.SendTemplate).
type callGateCtx struct{}

// waitCallGate waits on the context's gate, if any; an error means the call must not be made.
func waitCallGate(ctx context.Context) error {
	if g, ok := ctx.Value(callGateCtx{}).(func(context.Context) error); ok {
		if err := g(ctx); err != nil {
			return fmt.Errorf("%w: the number's pace was not reached in time: %v", whatsapp.ErrInvalidArgument, err)
		}
	}
	return nil
}

// broadcastSendError turns the send path's error into what the engine acts on: the platform's
// own error when it refused the send, ErrNotSent for a send refused before any platform call,
// and anything else (an outcome unknown) as it is.
func broadcastSendError(err error) error {
	se := domain.AsSendError(err)
	if se == nil {
		return err
	}
	switch se.Kind {
	case domain.KindOutcomeUnknown:
		return err
	case domain.KindUpstream:
		var pe *whatsapp.Error
		if errors.As(err, &pe) {
			return pe
		}
		return err
	}
	return fmt.Errorf("%w: %s (%s)", broadcast.ErrNotSent, strings.TrimSuffix(se.Message, "."), se.Code)
}

// sendBroadcastTest records a test-mode broadcast's send as a simulated test send (its
// message.sent event marked test) and returns its made-up platform id.
func (s *Server) sendBroadcastTest(ctx context.Context, m broadcast.Message) (string, error) {
	tm, err := s.store.RecordTestSend(ctx, m.Broadcast.AccountID, store.TestSendInput{Destination: m.Recipient.To(),
		TemplateName: m.Broadcast.TemplateName, Delivery: string(gen.Simulated), PlatformMessageID: domain.TestPlatformID(), CreatedAt: s.now(),
		ConversationID: testConversationID, ContactID: testContactID})
	if err != nil {
		return "", err
	}
	return tm.PlatformMessageID, nil
}
