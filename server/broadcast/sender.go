package broadcast

import (
	"context"
	"fmt"

	"gateway/platform/whatsapp"
)

// PlatformSender sends a broadcast's template with the platform client and nothing else: no
// message rows, events or counters. It serves tests and benchmarks against the simulator; the
// gateway plugs in its own send path.
type PlatformSender struct {
	Client *whatsapp.Client
	// Token returns the access token of a phone number.
	Token func(phoneNumberID string) string
}

// SendBroadcast implements Sender.
func (p PlatformSender) SendBroadcast(ctx context.Context, m Message) (string, error) {
	ts := whatsapp.TemplateSend{
		Name: m.Broadcast.TemplateName, Language: m.Broadcast.TemplateLanguage,
		BodyParams: m.BodyParams, CallbackData: m.CallbackData,
	}
	if m.Recipient.Mobile != "" {
		ts.To = m.Recipient.Mobile
	} else {
		ts.ToUserID = m.Recipient.UserID
	}
	if m.BeforeCall != nil {
		if err := m.BeforeCall(ctx); err != nil {
			return "", fmt.Errorf("%w: %v", ErrNotSent, err)
		}
	}
	res, err := p.Client.SendTemplate(ctx, p.Token(m.Broadcast.PhoneNumberID), m.Broadcast.PhoneNumberID, ts)
	if err != nil {
		return "", err
	}
	return res.MessageID, nil
}
