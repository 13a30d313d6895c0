package server

import (
	"context"
	"strconv"

	"gateway/server/domain"
)

// The two implementations of a broadcast's target (keymode.go chooses one per key).

// broadcastTarget is the account's number and its approved template of that name.
func (l liveMessaging) broadcastTarget(ctx context.Context, accountID int64, name, language string) (domain.BroadcastTarget, error) {
	conn, tpl, err := l.s.sends.BroadcastTemplate(ctx, accountID, name, language)
	if err != nil {
		return domain.BroadcastTarget{}, err
	}
	// The portfolio's budget is kept per business account (the platform shares it among a
	// portfolio's accounts; the gateway knows the account).
	return domain.BroadcastTarget{PhoneNumberID: conn.PhoneNumberID, Portfolio: conn.WabaID, Template: tpl}, nil
}

func (liveMessaging) testBroadcasts() bool { return false }

// broadcastTarget is a sandbox fixture; the engine simulates every send of a test-mode
// broadcast on a lane of the account's own ("test:<account id>").
func (t testMessaging) broadcastTarget(_ context.Context, accountID int64, name, language string) (domain.BroadcastTarget, error) {
	tpl, err := t.s.sends.FixtureTemplate(name, language)
	if err != nil {
		return domain.BroadcastTarget{}, err
	}
	return domain.BroadcastTarget{PhoneNumberID: "test:" + strconv.FormatInt(accountID, 10), Template: tpl, Test: true}, nil
}

func (testMessaging) testBroadcasts() bool { return true }
