package server

import (
	"context"
	"errors"
	"strconv"

	"gateway/gen"
	"gateway/server/domain"
	"gateway/store"
)

// The two implementations of a broadcast's target (keymode.go chooses one per key).

// broadcastTarget is the account's number and its approved template of that name.
func (l liveMessaging) broadcastTarget(ctx context.Context, accountID int64, name, language string) (domain.BroadcastTarget, error) {
	conn, candidates, err := l.s.store.SendTarget(ctx, accountID, 0, name, language)
	if errors.Is(err, store.ErrNotFound) {
		return domain.BroadcastTarget{}, errNotConnected
	}
	if err != nil {
		return domain.BroadcastTarget{}, err
	}
	tpl, fail := pickByName(candidates, name, language)
	if fail != nil {
		return domain.BroadcastTarget{}, fail
	}
	// The portfolio's budget is kept per business account (the platform shares it among a
	// portfolio's accounts; the gateway knows the account).
	return domain.BroadcastTarget{PhoneNumberID: conn.PhoneNumberID, Portfolio: conn.WabaID, Template: tpl}, nil
}

func (liveMessaging) testBroadcasts() bool { return false }

// broadcastTarget is a sandbox fixture; the engine simulates every send of a test-mode
// broadcast on a lane of the account's own ("test:<account id>").
func (testMessaging) broadcastTarget(_ context.Context, accountID int64, name, language string) (domain.BroadcastTarget, error) {
	tpl, fail := resolveFixture(&gen.SendTemplateRequest{TemplateName: &name, Language: &language})
	if fail != nil {
		return domain.BroadcastTarget{}, fail
	}
	return domain.BroadcastTarget{PhoneNumberID: "test:" + strconv.FormatInt(accountID, 10), Template: tpl, Test: true}, nil
}

func (testMessaging) testBroadcasts() bool { return true }
