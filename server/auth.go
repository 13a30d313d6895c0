package server

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"gateway/gen"
	"gateway/store"
)

// Principal is the authenticated caller of a request: the key and its account.
type Principal struct {
	KeyID     int64
	AccountID int64
	Mode      string // live, test or demo
	Scheme    string // the security scheme the key came in: bearerAuth, apiKeyHeader, apiKeyQuery
	// The account's name, email and sandbox join code, read with the key.
	AccountName, AccountEmail, JoinCode string
}

type principalKey struct{}

// principalFrom returns the request's principal; strict handlers only run behind the
// authenticating middleware, so a missing principal is a programming error reported as 500.
func principalFrom(ctx context.Context) (Principal, error) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	if !ok {
		return Principal{}, errors.New("no principal on the request context")
	}
	return p, nil
}

func withPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

var (
	// errUnauthorized carries the challenge every 401 must send (RFC 9110, section 11.6.1).
	errUnauthorized = &apiError{Status: http.StatusUnauthorized, Code: gen.ErrorCodeUnauthorized, Message: "Missing or invalid API key",
		Header: http.Header{"Www-Authenticate": {`Bearer realm="gateway"`}}}
	errInactive = newAPIError(http.StatusForbidden, gen.ErrorCodeAccountInactive, "The account is inactive")
)

// credential picks the one key a request carries, by precedence: Authorization: Bearer, then
// X-API-Key, then ?apiKey=. Presence decides, not validity: a present but invalid Bearer key is
// not followed by a look at X-API-Key (no fall-through). ok is false when no form is present.
func credential(r *http.Request) (key, scheme string, ok bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
			return strings.TrimSpace(h[7:]), "bearerAuth", true
		}
		return "", "bearerAuth", true // another scheme (Basic, ...) is an invalid credential
	}
	if h := r.Header.Get("X-API-Key"); h != "" {
		return strings.TrimSpace(h), "apiKeyHeader", true
	}
	if q, present := r.URL.Query()["apiKey"]; present {
		v := ""
		if len(q) > 0 {
			v = q[0]
		}
		return v, "apiKeyQuery", true
	}
	return "", "", false
}

// authenticate resolves the request's key to a principal. It fails with 401 for a missing,
// malformed, unknown or revoked key, 403 for an inactive account, and passes database failures
// through (rendered as 500).
func (s *Server) authenticate(ctx context.Context, r *http.Request) (Principal, error) {
	key, scheme, ok := credential(r)
	if !ok {
		return Principal{}, errUnauthorized
	}
	mode, err := ParseKey(key)
	if err != nil {
		return Principal{}, errUnauthorized
	}
	p, err := s.store.PrincipalByKeyHash(ctx, HashKey(key))
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, errUnauthorized
	}
	if err != nil {
		return Principal{}, err
	}
	if p.Revoked || p.Mode != mode {
		return Principal{}, errUnauthorized
	}
	if !p.AccountActive {
		return Principal{}, errInactive
	}
	if p.LastUsedAt == nil || s.now().Sub(*p.LastUsedAt) > 60e9 {
		if err := s.store.TouchAPIKey(ctx, p.AccountID, p.KeyID); err != nil {
			s.log.WarnContext(ctx, "record key use", "key_id", p.KeyID, "error", err.Error())
		}
	}
	return Principal{KeyID: p.KeyID, AccountID: p.AccountID, Mode: p.Mode, Scheme: scheme,
		AccountName: p.AccountName, AccountEmail: p.AccountEmail, JoinCode: p.JoinCode}, nil
}
