package domain

import (
	"context"
	"errors"
	"fmt"

	"gateway/server/refusal"
	"gateway/store"
)

// The answer's front on the send pipeline: an Answer (answer.go) checked, the platform ids of
// the messages it quotes and reacts to found, and then Deliver with an AnswerPayload, which
// records it only while the customer's service window is open. Test mode's answer is
// testanswer.go.

// AnswerPayload is a non-template message as the platform receives it: the answer, its
// recipient's user id when it has no number, and the platform's ids of the messages it quotes
// (ReplyTo) and reacts to (ReactTo).
type AnswerPayload struct {
	Answer
	ReplyToWamid, ReactToWamid string
}

// MessageType is the answer's kind ("text", "image", ...).
func (p AnswerPayload) MessageType() string { return p.Type }

// AnswerSend is an answer to send for an account: the Answer (it passed CheckAnswer), the
// Idempotency-Key it holds (nil for none) and where it comes from ("api" or "panel").
type AnswerSend struct {
	AccountID int64
	Answer    Answer
	Key       *HeldKey
	Source    string
}

// SendAnswer is a live answer: the number, the quoted and reacted-to messages, then the
// pipeline (Deliver), which refuses a blocked contact and a closed window. It counts the send.
func (s *Sends) SendAnswer(ctx context.Context, in AnswerSend) (SentMessage, error) {
	sent, err := s.sendAnswer(ctx, in)
	if counted(err) {
		s.observe(ModeLive, err)
	}
	return sent, err
}

func (s *Sends) sendAnswer(ctx context.Context, in AnswerSend) (SentMessage, error) {
	a := in.Answer
	conn, _, err := s.cfg.Store.SendTarget(ctx, in.AccountID, 0, "", "")
	if errors.Is(err, store.ErrNotFound) {
		return SentMessage{}, errNotConnected()
	}
	if err != nil {
		return SentMessage{}, err
	}
	p := AnswerPayload{Answer: a}
	var fe refusal.Fields
	if a.ReplyTo != 0 {
		p.ReplyToWamid = s.platformIDOf(ctx, in.AccountID, a.ReplyTo, "reply_to", &fe)
	}
	if a.Type == AnswerReaction && a.Reaction != nil {
		p.ReactToWamid = s.platformIDOf(ctx, in.AccountID, a.Reaction.MessageID, "reaction.message_id", &fe)
	}
	if len(fe) > 0 {
		return SentMessage{}, Invalid(fe)
	}
	content, err := AnswerContent(a)
	if err != nil {
		return SentMessage{}, err
	}
	sent, err := s.Deliver(ctx, Outgoing{AccountID: in.AccountID, From: conn, Destination: a.Destination, UserID: a.UserID,
		Name: a.Name, Campaign: a.CampaignName, Payload: p, Content: content, ClientReference: a.ClientReference,
		Key: in.Key, Source: in.Source, Answer: true})
	if err != nil {
		return SentMessage{}, err
	}
	s.answered(ctx, in.AccountID, sent.ConversationID)
	return SentMessage{Sent: sent, ClientReference: optional(a.ClientReference)}, nil
}

// platformIDOf is the platform's id of the account's message id (sent or received), or "" with
// a reason added at path when the account has no such message or it never reached the platform.
func (s *Sends) platformIDOf(ctx context.Context, accountID, id int64, path string, fe *refusal.Fields) string {
	m, err := s.cfg.Store.MessageRefByID(ctx, accountID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		fe.Add(path, fmt.Sprintf("no message %d in this account", id))
	case err != nil:
		fe.Add(path, "the message could not be read; try again")
	case m.PlatformMessageID == "":
		fe.Add(path, fmt.Sprintf("message %d has not reached the platform (it is %s)", id, m.Status))
	}
	return m.PlatformMessageID
}

// optional is s, or nil when it is empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
