package server

import (
	"context"
	"errors"
	"time"

	"gateway/platform/whatsapp"
	"gateway/server/domain"
	"gateway/store"
)

// What each key mode does with an answer and a read receipt (the choice is keymode.go's).

// answer is the domain's live answer (server/domain/answersend.go), with source "api"; it
// counts the send.
func (l liveMessaging) answer(ctx context.Context, p Principal, a domain.Answer) (domain.SentMessage, error) {
	return l.s.sends.SendAnswer(ctx, domain.AnswerSend{AccountID: p.AccountID, Answer: a, Key: heldKeyFrom(ctx), Source: "api"})
}

func (l liveMessaging) markRead(ctx context.Context, p Principal, id int64) (string, error) {
	return l.s.markReadLive(ctx, p.AccountID, id)
}

// answer with a test or demo key is test mode's answer (server/domain/testanswer.go); it
// counts the send under the key's mode.
func (t testMessaging) answer(ctx context.Context, p Principal, a domain.Answer) (domain.SentMessage, error) {
	return t.s.sends.SendTestAnswer(ctx, domain.TestSender{AccountID: p.AccountID, Mode: p.Mode, JoinCode: p.JoinCode}, a)
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
