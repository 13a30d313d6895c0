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
	name := b.TemplateName
	// The recipient is its number or, for a customer known only by a user id, the user id:
	// exactly one (the table's check). A broadcast's template has no code button (Check refuses
	// variables outside the body); one that gained such a button since, which the platform
	// sends only to a number, is refused by the send's own check and recorded as a failure.
	in := domain.TemplateSend{AccountID: b.AccountID, Destination: m.Recipient.Mobile, UserID: m.Recipient.UserID, TemplateName: &name,
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
// own error when it refused the send, ErrNotSent for a send refused before any platform call
// (with the refused fields' reasons, which say why in words where the message only names
// them), and anything else (an outcome unknown) as it is.
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
	why := strings.TrimSuffix(se.Message, ".")
	if len(se.Fields) > 0 {
		reasons := make([]string, len(se.Fields))
		for i, f := range se.Fields {
			reasons[i] = f.Path + ": " + f.Reason
		}
		why = strings.Join(reasons, "; ")
	}
	return fmt.Errorf("%w: %s (%s)", broadcast.ErrNotSent, why, se.Code)
}

// sendBroadcastTest records a test-mode broadcast's send as a simulated test send (its
// message.sent event marked test) and returns its made-up platform id. A recipient known only
// by a user id is recorded under it, as a test key's template send to a user id is.
func (s *Server) sendBroadcastTest(ctx context.Context, m broadcast.Message) (string, error) {
	tm, err := s.store.RecordTestSend(ctx, m.Broadcast.AccountID, store.TestSendInput{Destination: m.Recipient.To(),
		TemplateName: m.Broadcast.TemplateName, Delivery: string(gen.Simulated), PlatformMessageID: domain.TestPlatformID(), CreatedAt: s.now(),
		ConversationID: testConversationID, ContactID: testContactID})
	if err != nil {
		return "", err
	}
	return tm.PlatformMessageID, nil
}
