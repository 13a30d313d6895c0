package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
// the engine runs keyed (broadcast.Config.Keyed). A test-mode broadcast's recipient is
// recorded as a simulated test send, and nothing reaches the platform.
func (s *Server) BroadcastSender() broadcast.Sender { return broadcastSender{s} }

type broadcastSender struct{ s *Server }

// SendBroadcast implements broadcast.Sender.
func (bs broadcastSender) SendBroadcast(ctx context.Context, m broadcast.Message) (string, error) {
	s := bs.s
	b := m.Broadcast
	if b.Test {
		return s.sendBroadcastTest(ctx, m)
	}
	if m.Recipient.Mobile == "" {
		return "", fmt.Errorf("%w: a recipient known only by a user id cannot be sent a template yet", broadcast.ErrNotSent)
	}
	name, lang, campaign, params := b.TemplateName, b.TemplateLanguage, b.Name, m.BodyParams
	req := &gen.SendTemplateRequest{Destination: m.Recipient.Mobile, TemplateName: &name, Language: &lang,
		BodyVariables: &params, CampaignName: &campaign}
	held := &heldKey{key: store.BroadcastKey(m.Recipient.ID)}
	ctx = context.WithValue(ctx, heldKeyCtx{}, held)
	if m.BeforeCall != nil {
		ctx = context.WithValue(ctx, callGateCtx{}, m.BeforeCall)
	}
	resp, err := s.sendLive(ctx, b.AccountID, req, "api")
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadGateway {
		s.countSend(domain.ModeLive, err) // a 502 is counted by sendFailed, with the platform's code
	}
	if err == nil {
		ok, isOK := resp.(gen.SendTemplateMessage200JSONResponse)
		if !isOK {
			return "", fmt.Errorf("unexpected send response %T", resp)
		}
		return ok.Body.Data.ChatMessageId, nil
	}
	return "", broadcastSendError(err)
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
	var ae *apiError
	if !errors.As(err, &ae) {
		return err
	}
	switch {
	case ae.OutcomeUnknown:
		return err
	case ae.Status == http.StatusBadGateway && ae.cause != nil:
		return ae.cause // *whatsapp.Error
	case ae.Status < 500:
		return fmt.Errorf("%w: %s (%s)", broadcast.ErrNotSent, strings.TrimSuffix(ae.Message, "."), ae.Code)
	}
	return err
}

// sendBroadcastTest records a test-mode broadcast's send as a simulated test send (its
// message.sent event marked test) and returns its made-up platform id.
func (s *Server) sendBroadcastTest(ctx context.Context, m broadcast.Message) (string, error) {
	tm, err := s.store.RecordTestSend(ctx, m.Broadcast.AccountID, store.TestSendInput{Destination: m.Recipient.To(),
		TemplateName: m.Broadcast.TemplateName, Delivery: string(gen.Simulated), PlatformMessageID: testWamid(), CreatedAt: s.now(),
		ConversationID: testConversationID, ContactID: testContactID})
	if err != nil {
		return "", err
	}
	return tm.PlatformMessageID, nil
}
