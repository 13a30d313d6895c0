package server

import (
	"context"
	"errors"

	"gateway/gen"
	"gateway/server/domain"
	"gateway/store"
)

// An API key's mode selects, once, what its requests reach (modeFor, called where the key is
// resolved: authenticate). A live key reaches the account's data and the platform
// (liveMessaging, below, and the domain's LiveRecords); a test or demo key reaches the
// fixtures and the simulated send, or the sandbox number for a joined phone (testMessaging,
// testmode.go, and the domain's TestRecords); a demo key is also rate-limited per client. The
// principal carries the choice, so no handler and no store function asks which mode a request
// is in.

// messaging is what an API request reads and writes, as its key's mode selects it.
type messaging interface {
	// send sends an approved template (POST /v1/messages/template) through server/domain and
	// counts it in the send metrics; in passed domain.CheckTemplateSend.
	send(ctx context.Context, p Principal, in domain.TemplateSend) (domain.SentMessage, error)
	templates(ctx context.Context, accountID int64) ([]store.Template, error)
	// chat is the number GetMe shows, and the sandbox a test key joins phones to (nil for a
	// live key).
	chat(ctx context.Context, p Principal) (gen.Chat, *gen.Sandbox, error)
	// broadcastTarget resolves a broadcast's template: the account's number and approved
	// template, or a sandbox fixture simulated by the engine (broadcasts_mode.go).
	broadcastTarget(ctx context.Context, accountID int64, name, language string) (domain.BroadcastTarget, error)
	// testBroadcasts: the key sees the account's test-mode broadcasts, not its live ones.
	testBroadcasts() bool
	// answer sends a non-template message (POST /v1/messages; answers_modes.go) through
	// server/domain and counts it; a passed domain.CheckAnswer.
	answer(ctx context.Context, p Principal, a domain.Answer) (domain.SentMessage, error)
	// markRead marks a received message read and returns its platform id.
	markRead(ctx context.Context, p Principal, id int64) (string, error)
}

// keyMode is what a key's mode selects.
type keyMode struct {
	data messaging
	// records is what the key reads and keeps of the account: contacts, messages, campaigns.
	records domain.Records
	// readsAhead: a poll of a message reads it with the key (readahead.go). Test sends are
	// not messages, so only a live key reads ahead.
	readsAhead bool
	// limited: requests are rate-limited per client (demo.go).
	limited bool
	// media is what GET and POST /v1/media reach: the platform (liveMedia, media.go) or the
	// fixture and the simulated upload (testMedia, testmode_media.go).
	media mediaAccess
}

// modeFor is the one place a key's mode (ModeLive, ModeTest or ModeDemo, as ParseKey read it)
// selects what the key's requests reach.
func (s *Server) modeFor(mode string) keyMode {
	switch mode {
	case domain.ModeLive:
		return keyMode{data: liveMessaging{s}, records: s.liveRecords, readsAhead: true, media: liveMedia{s}}
	case domain.ModeDemo:
		return keyMode{data: testMessaging{s}, records: s.testRecords, limited: true, media: testMedia{s}}
	}
	return keyMode{data: testMessaging{s}, records: s.testRecords, media: testMedia{s}}
}

// buildRecords makes the records each mode selects (New calls it once): interface values
// built ahead, so that selecting one per request allocates nothing.
func (s *Server) buildRecords() {
	s.liveRecords = domain.LiveRecords{Store: s.store}
	s.testRecords = domain.TestRecords{Store: s.store, Now: s.now,
		DeliveredAfter: s.opts.TestDeliveredAfter, ReadAfter: s.opts.TestReadAfter}
}

// liveMessaging is a live key's: the account's data in the store, sends through the platform.
type liveMessaging struct{ s *Server }

// send is the domain's live send (server/domain/templatesend.go), with source "api".
func (l liveMessaging) send(ctx context.Context, _ Principal, in domain.TemplateSend) (domain.SentMessage, error) {
	in.Source = "api"
	return l.s.sends.SendTemplate(ctx, in)
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
