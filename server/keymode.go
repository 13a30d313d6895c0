package server

import (
	"context"
	"errors"
	"net/http"

	"gateway/gen"
	"gateway/server/domain"
	"gateway/store"
)

// An API key's mode selects, once, what its requests reach (modeFor, called where the key is
// resolved: authenticate). A live key reaches the account's data and the platform
// (liveMessaging, below); a test or demo key reaches the fixtures and the simulated send, or
// the sandbox number for a joined phone (testMessaging, testmode.go); a demo key is also
// rate-limited per client. The principal carries the choice, so no handler and no store
// function asks which mode a request is in.

// messaging is what an API request reads and writes, as its key's mode selects it.
type messaging interface {
	// send sends an approved template (POST /v1/messages/template) and counts it in the send
	// metrics; b passed checkSendRequest.
	send(ctx context.Context, p Principal, b *gen.SendTemplateRequest) (gen.SendTemplateMessageResponseObject, error)
	// message is the message GetMessage shows; errMessageNotFound when there is none to show.
	message(ctx context.Context, accountID, id int64) (gen.Message, error)
	messages(ctx context.Context, accountID int64, f store.MessageFilter) (store.MessagePage, error)
	contacts(ctx context.Context, accountID int64, search string, limit, offset int) (store.ContactPage, error)
	upsertContact(ctx context.Context, accountID int64, in store.ContactInput) (c store.Contact, created bool, err error)
	// campaigns is up to limit campaigns with an id below before (all when 0), newest first.
	campaigns(ctx context.Context, accountID, before int64, limit int) ([]store.CampaignReport, error)
	// campaign is one campaign and its top failure reasons; errCampaignNotFound when there is
	// none.
	campaign(ctx context.Context, accountID, id int64) (store.CampaignReport, []store.FailureReason, error)
	templates(ctx context.Context, accountID int64) ([]store.Template, error)
	// chat is the number GetMe shows, and the sandbox a test key joins phones to (nil for a
	// live key).
	chat(ctx context.Context, p Principal) (gen.Chat, *gen.Sandbox, error)
	// answer sends a non-template message (POST /v1/messages; answers.go) and counts it; a
	// passed domain.CheckAnswer.
	answer(ctx context.Context, p Principal, a domain.Answer) (gen.SendResult, error)
	// markRead marks a received message read and returns its platform id.
	markRead(ctx context.Context, p Principal, id int64) (string, error)
}

// keyMode is what a key's mode selects.
type keyMode struct {
	data messaging
	// readsAhead: a poll of a message reads it with the key (readahead.go). Test sends are
	// not messages, so only a live key reads ahead.
	readsAhead bool
	// limited: requests are rate-limited per client (demo.go).
	limited bool
}

// modeFor is the one place a key's mode (ModeLive, ModeTest or ModeDemo, as ParseKey read it)
// selects what the key's requests reach.
func (s *Server) modeFor(mode string) keyMode {
	switch mode {
	case domain.ModeLive:
		return keyMode{data: liveMessaging{s}, readsAhead: true}
	case domain.ModeDemo:
		return keyMode{data: testMessaging{s}, limited: true}
	}
	return keyMode{data: testMessaging{s}}
}

// liveMessaging is a live key's: the account's data in the store, sends through the platform.
type liveMessaging struct{ s *Server }

func (l liveMessaging) send(ctx context.Context, p Principal, b *gen.SendTemplateRequest) (gen.SendTemplateMessageResponseObject, error) {
	resp, err := l.s.sendLive(ctx, p.AccountID, b, "api")
	// A 502 is not counted here: sendFailed counts a send the platform refused, with the
	// platform's error code.
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadGateway {
		l.s.countSend(p.Mode, err)
	}
	return resp, err
}

func (l liveMessaging) message(ctx context.Context, accountID, id int64) (gen.Message, error) {
	m, ok := messageAhead(ctx, accountID, id)
	var err error
	if !ok {
		m, err = l.s.store.MessageByID(ctx, accountID, id)
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && m.Status == "pending" && !m.OutcomeUnknown) {
		return gen.Message{}, errMessageNotFound
	}
	if err != nil {
		return gen.Message{}, err
	}
	return messageOut(m), nil
}

func (l liveMessaging) messages(ctx context.Context, accountID int64, f store.MessageFilter) (store.MessagePage, error) {
	return l.s.store.ListMessages(ctx, accountID, f)
}

func (l liveMessaging) contacts(ctx context.Context, accountID int64, search string, limit, offset int) (store.ContactPage, error) {
	return l.s.store.ListContacts(ctx, accountID, search, limit, offset)
}

func (l liveMessaging) upsertContact(ctx context.Context, accountID int64, in store.ContactInput) (store.Contact, bool, error) {
	return l.s.store.UpsertContact(ctx, accountID, in)
}

func (l liveMessaging) campaigns(ctx context.Context, accountID, before int64, limit int) ([]store.CampaignReport, error) {
	return l.s.store.Campaigns(ctx, accountID, before, limit)
}

func (l liveMessaging) campaign(ctx context.Context, accountID, id int64) (store.CampaignReport, []store.FailureReason, error) {
	c, err := l.s.store.CampaignByID(ctx, accountID, id)
	if errors.Is(err, store.ErrNotFound) {
		return c, nil, errCampaignNotFound
	}
	if err != nil {
		return c, nil, err
	}
	reasons, err := l.s.store.CampaignFailureReasons(ctx, accountID, c.ID, topFailureReasons)
	return c, reasons, err
}

func (l liveMessaging) templates(ctx context.Context, accountID int64) ([]store.Template, error) {
	return l.s.store.ApprovedTemplates(ctx, accountID, maxTemplatesListed)
}

// chat is the account's connected number, read live on every call.
func (l liveMessaging) chat(ctx context.Context, p Principal) (gen.Chat, *gen.Sandbox, error) {
	conn, err := l.s.store.ConnectionByAccount(ctx, p.AccountID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return gen.Chat{Connected: false}, nil, nil
	case err != nil:
		return gen.Chat{}, nil, err
	}
	return gen.Chat{Connected: true, DisplayName: conn.DisplayName, PhoneNumber: conn.PhoneNumber, PhoneNumberId: conn.PhoneNumberID}, nil, nil
}
