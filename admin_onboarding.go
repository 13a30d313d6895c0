package main

import (
	"context"
	"errors"
	"flag"

	"gateway/store"
)

// adminNumberConnectToken is `gateway admin number connect-token`: connect a number with a
// system-user token, validated against the platform first (onboarding.Service.ConnectWithToken,
// as the dashboard's form), unlike `number connect`, which stores what it is given.
func adminNumberConnectToken(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account id")
	waba := fs.String("waba-id", "", "WhatsApp Business Account id")
	pnid := fs.String("phone-number-id", "", "the platform's phone number id")
	tokenInput := newSecretInput(fs, "access-token", envAdminAccessToken, "the system-user access token (stored encrypted)")
	if err := parseFlags(fs, args, "account", "waba-id", "phone-number-id"); err != nil {
		return nil, err
	}
	token, err := tokenInput.required(a.cfg.getenv)
	if err != nil {
		return nil, err
	}
	svc := a.server.Onboarding()
	if svc == nil {
		return nil, errors.New("onboarding is not configured")
	}
	conn, err := svc.ConnectWithToken(ctx, *id, *waba, *pnid, token)
	if err == nil {
		operatorAudit(ctx, a, *id, store.AuditNumberConnected, conn.PhoneNumber,
			"by the operator, with a system-user token; phone number id "+conn.PhoneNumberID)
	}
	return conn, err
}
