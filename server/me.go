package server

import (
	"context"

	"gateway/gen"
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
	if me.Chat, me.Sandbox, err = p.data.chat(ctx, p); err != nil {
		return nil, err
	}
	return gen.GetMe200JSONResponse{Body: gen.MeEnvelope{Success: true, Message: "OK", Data: me}}, nil
}
