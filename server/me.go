package server

import (
	"context"
	"errors"

	"gateway/gen"
	"gateway/store"
)

// GetMe shows the account (read with the key) and its connected number, read live on every call. A test or demo
// key sees the sandbox identity and the account's join code instead.
func (a *api) GetMe(ctx context.Context, _ gen.GetMeRequestObject) (gen.GetMeResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	mode := gen.KeyMode(p.Mode)
	me := gen.Me{
		Account: gen.Account{Id: p.AccountID, Name: p.AccountName, Email: p.AccountEmail},
		Mode:    mode,
	}
	if p.Mode != ModeLive {
		sb := a.s.opts.Sandbox
		me.Chat = gen.Chat{Connected: true, DisplayName: "Sandbox", PhoneNumber: sb.PhoneNumber, PhoneNumberId: sb.PhoneNumberID}
		me.Sandbox = &gen.Sandbox{PhoneNumber: sb.PhoneNumber, JoinCode: p.JoinCode, JoinPhrase: "join " + p.JoinCode}
		return gen.GetMe200JSONResponse{Body: gen.MeEnvelope{Success: true, Message: "OK", Data: me}}, nil
	}
	conn, err := a.s.store.ConnectionByAccount(ctx, p.AccountID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		me.Chat = gen.Chat{Connected: false}
	case err != nil:
		return nil, err
	default:
		me.Chat = gen.Chat{Connected: true, DisplayName: conn.DisplayName, PhoneNumber: conn.PhoneNumber, PhoneNumberId: conn.PhoneNumberID}
	}
	return gen.GetMe200JSONResponse{Body: gen.MeEnvelope{Success: true, Message: "OK", Data: me}}, nil
}
