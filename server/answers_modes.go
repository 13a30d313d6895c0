package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"gateway/gen"
	"gateway/platform/whatsapp"
	"gateway/server/domain"
	"gateway/store"
)

// What each key mode does with an answer and a read receipt (the choice is keymode.go's).

func (l liveMessaging) answer(ctx context.Context, p Principal, a domain.Answer) (gen.SendResult, error) {
	res, err := l.s.answerLive(ctx, p.AccountID, a, "api")
	// A 502 is counted by sendFailed, and the platform's 131047 where it is met, each with the
	// platform's code.
	var ae *apiError
	if !(errors.As(err, &ae) && ae.Status == http.StatusBadGateway) && !errors.Is(err, whatsapp.ErrOutsideWindow) {
		l.s.countSend(p.Mode, err)
	}
	return res, err
}

func (l liveMessaging) markRead(ctx context.Context, p Principal, id int64) (string, error) {
	return l.s.markReadLive(ctx, p.AccountID, id)
}

// answer with a test or demo key is simulated, or, for a text to a phone that joined the
// sandbox in the last 24 hours with real deliveries left, delivered for real through the
// sandbox number. Test mode keeps no service window: every answer is accepted (a live key's
// answer outside the window is the 409 window_closed).
func (t testMessaging) answer(ctx context.Context, p Principal, a domain.Answer) (gen.SendResult, error) {
	res, err := t.s.answerTest(ctx, p, a)
	t.s.countSend(p.Mode, err)
	return res, err
}

func (s *Server) answerTest(ctx context.Context, p Principal, a domain.Answer) (gen.SendResult, error) {
	now := s.now()
	delivery, wamid, note := gen.Simulated, testWamid(), ""
	sb := s.opts.Sandbox
	var claim store.SandboxClaim
	if a.Type == domain.AnswerText && a.Destination != "" && sb.PhoneNumberID != "" && sb.AccessToken != "" && s.platform != nil {
		var err error
		if claim, err = s.store.ClaimSandboxDelivery(ctx, p.AccountID, a.Destination, now.Add(-sandboxWindow), sandboxRealLimit); err != nil {
			return gen.SendResult{}, err
		}
	}
	if claim.Claimed {
		ctx = context.WithoutCancel(ctx)
		pctx, cancel := context.WithTimeout(ctx, s.opts.SendTimeout)
		res, err := s.platform.SendText(pctx, sb.AccessToken, sb.PhoneNumberID, a.Destination, a.Text.Body)
		cancel()
		if err != nil {
			_, fail := platformFailure(err, s.opts.SendTimeout)
			if fail == nil {
				return gen.SendResult{}, fmt.Errorf("sandbox answer: %w", err)
			}
			return gen.SendResult{}, fail
		}
		delivery, wamid = gen.Real, res.MessageID
		note = fmt.Sprintf("Delivered for real through the sandbox number (%d of %d real messages used by this phone).",
			claim.RealSent, sandboxRealLimit)
	} else {
		note = "Simulated: nothing was sent. Test keys accept every answer; a live key's answer outside the customer's " +
			"service window is a 409 window_closed."
		if a.Type == domain.AnswerText && a.Destination != "" {
			note += fmt.Sprintf(" To receive text answers for real, send \"join %s\" from this phone to the sandbox number %s.",
				p.JoinCode, sb.PhoneNumber)
		}
	}
	tm, err := s.store.RecordTestSend(ctx, p.AccountID, store.TestSendInput{Destination: a.Destination + a.UserID,
		Type: a.Type, Delivery: string(delivery), PlatformMessageID: wamid, CreatedAt: now,
		ConversationID: testConversationID, ContactID: testContactID, ClientReference: a.ClientReference})
	if err != nil {
		return gen.SendResult{}, err
	}
	mode, typ := gen.SendResultModeTest, gen.OutgoingType(a.Type)
	return gen.SendResult{MessageId: tm.ID, ChatMessageId: tm.PlatformMessageID, CampaignId: testCampaignID,
		ConversationId: testConversationID, ContactId: testContactID, Status: gen.Sent, Mode: &mode,
		Delivery: &delivery, Note: &note, ClientReference: optional(a.ClientReference), Type: &typ}, nil
}

// markRead with a test or demo key marks a message the sandbox number received for the
// account read, through the sandbox number; any other id is a 404.
func (t testMessaging) markRead(ctx context.Context, p Principal, id int64) (string, error) {
	wamid, err := t.s.store.SandboxMessageID(ctx, p.AccountID, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", errMessageNotFound
	}
	if err != nil {
		return "", err
	}
	sb := t.s.opts.Sandbox
	if sb.PhoneNumberID == "" || sb.AccessToken == "" {
		return wamid, nil
	}
	return wamid, t.s.markRead(ctx, sb.AccessToken, sb.PhoneNumberID, wamid)
}

// SendMessage and MarkRead are timed like the other platform calls (measuredPlatform,
// metrics.go).
func (mp measuredPlatform) SendMessage(ctx context.Context, token, phoneNumberID string, m whatsapp.Message) (whatsapp.SendResult, error) {
	start := time.Now()
	r, err := mp.p.SendMessage(ctx, token, phoneNumberID, m)
	mp.observe("send_message", start, err)
	return r, err
}

func (mp measuredPlatform) MarkRead(ctx context.Context, token, phoneNumberID, messageID string, typing bool) error {
	start := time.Now()
	err := mp.p.MarkRead(ctx, token, phoneNumberID, messageID, typing)
	mp.observe("mark_read", start, err)
	return err
}
