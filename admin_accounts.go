package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"math/big"

	"gateway/server/domain"
	"gateway/store"
)

// adminAccountCreate is `gateway admin account create`.
func adminAccountCreate(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	name := fs.String("name", "", "account name")
	email := fs.String("email", "", "contact email")
	if err := parseFlags(fs, args, "name", "email"); err != nil {
		return nil, err
	}
	acct, err := createAccount(ctx, a.store, *name, *email)
	if err == nil {
		operatorAudit(ctx, a, acct.ID, store.AuditWorkspaceCreated, acct.Name, "by the operator")
	}
	return acct, err
}

// adminAccountSetActive is `gateway admin account activate` (true) and `deactivate` (false).
func adminAccountSetActive(active bool) func(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	return func(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
		id := fs.Int64("account", 0, "account id")
		if err := parseFlags(fs, args, "account"); err != nil {
			return nil, err
		}
		acct, err := a.store.SetAccountActive(ctx, *id, active)
		if err == nil {
			action := store.AuditWorkspaceDeactivated
			if active {
				action = store.AuditWorkspaceActivated
			}
			operatorAudit(ctx, a, *id, action, acct.Name, "by the operator")
		}
		return acct, err
	}
}

// adminKeyCreate is `gateway admin key create`.
func adminKeyCreate(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account id")
	mode := fs.String("mode", "live", "live or test")
	if err := parseFlags(fs, args, "account"); err != nil {
		return nil, err
	}
	k, err := createKey(ctx, a.store, *id, *mode)
	if err == nil {
		operatorAudit(ctx, a, *id, store.AuditKeyCreated, k.Prefix, "("+k.Mode+") by the operator")
	}
	return k, err
}

// adminKeyRevoke is `gateway admin key revoke`.
func adminKeyRevoke(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("key", 0, "key id")
	if err := parseFlags(fs, args, "key"); err != nil {
		return nil, err
	}
	k, err := a.store.RevokeAPIKey(ctx, *id)
	if err == nil {
		operatorAudit(ctx, a, k.AccountID, store.AuditKeyRevoked, k.Prefix, "("+k.Mode+") by the operator")
	}
	return k, err
}

// adminNumberConnect is `gateway admin number connect`: it stores the connection as given.
func adminNumberConnect(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	var c store.Connection
	fs.Int64Var(&c.AccountID, "account", 0, "account id")
	fs.StringVar(&c.WabaID, "waba-id", "", "WhatsApp Business Account id")
	fs.StringVar(&c.PhoneNumberID, "phone-number-id", "", "the platform's phone number id")
	fs.StringVar(&c.PhoneNumber, "phone-number", "", "the number with its country code (stored as digits only)")
	fs.StringVar(&c.DisplayName, "display-name", "", "display name")
	token := newSecretInput(fs, "access-token", envAdminAccessToken, "the platform access token (stored encrypted)")
	if err := parseFlags(fs, args, "account", "waba-id", "phone-number-id", "phone-number", "display-name"); err != nil {
		return nil, err
	}
	var err error
	if c.AccessToken, err = token.required(a.cfg.getenv); err != nil {
		return nil, err
	}
	digits, ok := domain.NormalizeMobile(c.PhoneNumber)
	if !ok {
		return nil, fmt.Errorf("--phone-number %q: want an international number, 8 to 15 digits with the country code first", c.PhoneNumber)
	}
	c.PhoneNumber = digits
	conn, err := a.store.ConnectNumber(ctx, c)
	if err == nil {
		operatorAudit(ctx, a, c.AccountID, store.AuditNumberConnected, c.PhoneNumber, "by the operator; phone number id "+c.PhoneNumberID)
	}
	return conn, err
}

// adminNumberDisconnect is `gateway admin number disconnect`.
func adminNumberDisconnect(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("account", 0, "account id")
	if err := parseFlags(fs, args, "account"); err != nil {
		return nil, err
	}
	if err := a.store.DisconnectNumber(ctx, *id); err != nil {
		return nil, err
	}
	operatorAudit(ctx, a, *id, store.AuditNumberDisconnect, "", "by the operator")
	return map[string]any{"account_id": *id, "connected": false}, nil
}

// adminContactSetBlocked is `gateway admin contact block` (true) and `unblock` (false).
func adminContactSetBlocked(blocked bool) func(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
	return func(ctx context.Context, a *app, fs *flag.FlagSet, args []string) (any, error) {
		id := fs.Int64("account", 0, "account id")
		mobile := fs.String("mobile", "", "the contact's number, digits only")
		if err := parseFlags(fs, args, "account", "mobile"); err != nil {
			return nil, err
		}
		c, action, err := domain.LiveRecords{Store: a.store}.SetContactBlocked(ctx, *id, *mobile, blocked)
		if err == nil {
			operatorAudit(ctx, a, *id, action, c.Mobile, "by the operator")
		}
		return c, err
	}
}

// createAccount makes an account with a fresh sandbox join code.
func createAccount(ctx context.Context, st *store.Store, name, email string) (store.Account, error) {
	for i := 0; i < 5; i++ {
		acct, err := st.CreateAccount(ctx, name, email, newJoinCode())
		if err == nil || !isConflict(err) {
			return acct, err
		}
	}
	return store.Account{}, fmt.Errorf("could not find a free join code")
}

// keyCreated is printed once: the key itself is never shown again.
type keyCreated struct {
	store.APIKey
	Key string `json:"key"`
}

func createKey(ctx context.Context, st *store.Store, accountID int64, mode string) (keyCreated, error) {
	if mode != domain.ModeLive && mode != domain.ModeTest {
		return keyCreated{}, fmt.Errorf("--mode must be live or test")
	}
	key, hash, prefix, err := domain.GenerateKey(mode)
	if err != nil {
		return keyCreated{}, err
	}
	k, err := st.CreateAPIKey(ctx, accountID, mode, hash, prefix)
	if errors.Is(err, store.ErrLimitReached) {
		return keyCreated{}, fmt.Errorf("account %d already has %d active keys, the most it may have (GATEWAY_MAX_API_KEYS): revoke one first (gateway admin key revoke --key ID)",
			accountID, st.Limits().ActiveAPIKeys)
	}
	if err != nil {
		return keyCreated{}, fmt.Errorf("create key for account %d: %w", accountID, err)
	}
	return keyCreated{APIKey: k, Key: key}, nil
}

// newJoinCode is two groups of four characters drawn from a 32-character alphabet (the
// lowercase letters without l and o, and the digits 2 to 9), e.g. "k7m2-q9x4".
func newJoinCode() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	b := make([]byte, 9)
	for i := range b {
		if i == 4 {
			b[i] = '-'
			continue
		}
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		b[i] = alphabet[n.Int64()]
	}
	return string(b)
}

func isConflict(err error) bool { return err != nil && errors.Is(err, store.ErrConflict) }
