package domain

import (
	"context"
	"fmt"

	"gateway/store"
)

// SendTestAnswer is an answer with a test or demo key; it counts the send under the key's
// mode. It is simulated, or, for a text to a phone that joined the sandbox in the last 24
// hours with real deliveries left, delivered for real through the sandbox number. Test mode
// keeps no service window: every answer is accepted (a live key's answer outside the window
// is the 409 window_closed). a passed CheckAnswer.
func (s *Sends) SendTestAnswer(ctx context.Context, k TestSender, a Answer) (SentMessage, error) {
	sent, err := s.sendTestAnswer(ctx, k, a)
	s.observe(k.Mode, err)
	return sent, err
}

func (s *Sends) sendTestAnswer(ctx context.Context, k TestSender, a Answer) (SentMessage, error) {
	now := s.cfg.Clock()
	real, wamid, note := false, testWamid(), ""
	sb := s.cfg.Sandbox
	var claim store.SandboxClaim
	if a.Type == AnswerText && a.Destination != "" && sb.PhoneNumberID != "" && sb.AccessToken != "" && s.cfg.Messenger != nil {
		var err error
		if claim, err = s.cfg.Store.ClaimSandboxDelivery(ctx, k.AccountID, a.Destination, now.Add(-SandboxWindow), SandboxRealLimit); err != nil {
			return SentMessage{}, err
		}
	}
	if claim.Claimed {
		ctx = context.WithoutCancel(ctx)
		pctx, cancel := context.WithTimeout(ctx, s.cfg.SendTimeout)
		res, err := s.cfg.Messenger.SendText(pctx, sb.AccessToken, sb.PhoneNumberID, a.Destination, a.Text.Body)
		cancel()
		if err != nil {
			_, fail := platformFailure(err, s.cfg.SendTimeout)
			if fail == nil {
				return SentMessage{}, fmt.Errorf("sandbox answer: %w", err)
			}
			return SentMessage{}, fail
		}
		real, wamid = true, res.MessageID
		note = fmt.Sprintf("Delivered for real through the sandbox number (%d of %d real messages used by this phone).",
			claim.RealSent, SandboxRealLimit)
	} else {
		note = "Simulated: nothing was sent. Test keys accept every answer; a live key's answer outside the customer's " +
			"service window is a 409 window_closed."
		if a.Type == AnswerText && a.Destination != "" {
			note += fmt.Sprintf(" To receive text answers for real, send \"join %s\" from this phone to the sandbox number %s.",
				k.JoinCode, sb.PhoneNumber)
		}
	}
	delivery := "simulated"
	if real {
		delivery = "real"
	}
	tm, err := s.cfg.Store.RecordTestSend(ctx, k.AccountID, store.TestSendInput{Destination: a.Destination + a.UserID,
		Type: a.Type, Delivery: delivery, PlatformMessageID: wamid, CreatedAt: now,
		ConversationID: TestConversationID, ContactID: TestContactID, ClientReference: a.ClientReference})
	if err != nil {
		return SentMessage{}, err
	}
	return SentMessage{Sent: Sent{MessageID: tm.ID, PlatformMessageID: tm.PlatformMessageID, CampaignID: TestCampaignID,
		ConversationID: TestConversationID, ContactID: TestContactID},
		ClientReference: optional(a.ClientReference), Test: &TestDelivery{Real: real, Note: note}}, nil
}
