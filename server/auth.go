package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"gateway/gen"
	"gateway/server/domain"
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
	// What the key's mode reaches (keymode.go).
	keyMode
}

// principalFrom returns the request's principal; strict handlers only run behind the
// authenticating middleware, so a missing principal is a programming error reported as 500.
func principalFrom(ctx context.Context) (Principal, error) {
	r, ok := apiRequestFrom(ctx)
	if !ok {
		return Principal{}, errors.New("no principal on the request context")
	}
	return r.principal, nil
}

var errInactive = newAPIError(http.StatusForbidden, gen.ErrorCodeAccountInactive, "The account is inactive")

// keyForms names, for people, where each security scheme's key was read.
var keyForms = map[string]string{
	"bearerAuth":   "the Authorization: Bearer header",
	"apiKeyHeader": "the X-API-Key header",
	"apiKeyQuery":  "the apiKey query parameter",
}

// unauthorized is a 401 that says which form of key was read and what was wrong with it,
// never the key itself. Every 401 carries the challenge (RFC 9110, section 11.6.1).
func unauthorized(scheme, problem string) *apiError {
	msg := "No API key: send Authorization: Bearer <key> (or X-API-Key: <key>, or ?apiKey=<key>)"
	if scheme != "" {
		msg = "The key in " + keyForms[scheme] + " " + problem
	}
	return &apiError{Status: http.StatusUnauthorized, Code: gen.ErrorCodeUnauthorized, Message: msg,
		Header: http.Header{"Www-Authenticate": {`Bearer realm="gateway"`}}}
}

const (
	keyMissing   = "is empty"
	keyNotBearer = "is not a Bearer key: send Authorization: Bearer <key>"
	keyMalformed = "is malformed: keys are svc_live_, svc_test_ or svc_demo_ followed by 38 letters and digits, copied whole"
	keyUnknown   = "is not a key of this service (deleted, or from another environment)"
	keyRevoked   = "was revoked; create a new key"
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
// through (rendered as 500). With aheadID > 0 it reads that message of the key's account in the
// same statement (readahead.go) and returns it when the account has it; nil otherwise.
func (s *Server) authenticate(ctx context.Context, r *http.Request, aheadID int64) (Principal, *store.Message, error) {
	key, scheme, ok := credential(r)
	switch {
	case !ok:
		return Principal{}, nil, unauthorized("", "")
	case key == "" && scheme == "bearerAuth" && !hasBearerPrefix(r):
		return Principal{}, nil, unauthorized(scheme, keyNotBearer)
	case key == "":
		return Principal{}, nil, unauthorized(scheme, keyMissing)
	}
	mode, err := domain.ParseKey(key)
	if err != nil {
		return Principal{}, nil, unauthorized(scheme, keyMalformed)
	}
	km := s.modeFor(mode)
	if !km.readsAhead {
		aheadID = 0
	}
	p, ahead, err := s.lookupKey(ctx, domain.HashKey(key), aheadID)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, nil, unauthorized(scheme, keyUnknown)
	}
	if err != nil {
		return Principal{}, nil, err
	}
	if p.Mode != mode {
		return Principal{}, nil, unauthorized(scheme, keyUnknown)
	}
	if p.Revoked {
		return Principal{}, nil, unauthorized(scheme, keyRevoked)
	}
	if !p.AccountActive {
		return Principal{}, nil, errInactive
	}
	if p.LastUsedAt == nil || s.now().Sub(*p.LastUsedAt) > 60e9 {
		if err := s.store.TouchAPIKey(ctx, p.AccountID, p.KeyID); err != nil {
			s.log.WarnContext(ctx, "record key use", "key_id", p.KeyID, "error", err.Error())
		}
	}
	return Principal{KeyID: p.KeyID, AccountID: p.AccountID, Mode: p.Mode, Scheme: scheme,
		AccountName: p.AccountName, AccountEmail: p.AccountEmail, JoinCode: p.JoinCode, keyMode: km}, ahead, nil
}

// keyLookupTimeout bounds one shared statement of API key lookups (s.keys).
const keyLookupTimeout = 10 * time.Second

// lookupKey reads the key with hash and, when aheadID > 0, that message of its account in the
// same statement. When the statement finds no row (no such key, or no such message) the key is
// read alone and the message is nil. ErrNotFound: no such key.
func (s *Server) lookupKey(ctx context.Context, hash []byte, aheadID int64) (store.Principal, *store.Message, error) {
	if aheadID > 0 {
		// One indexed read, bounded by the pool's statement_timeout, runs detached from the
		// request's cancellation: watching it would cost database/sql and lib/pq a goroutine
		// each per poll, and a client that hangs up mid-read would make lib/pq drop the
		// connection and dial another to send the cancel.
		p, m, err := s.store.PrincipalWithMessage(context.WithoutCancel(ctx), hash, aheadID)
		if err == nil {
			return p, &m, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return store.Principal{}, nil, err
		}
	}
	// Concurrent requests share the lookup's statement (s.keys): it starts after this request
	// arrived, so a key revoked before then is read as revoked.
	k, err := s.keys.Do(hash)
	if err == nil && !k.Found {
		err = store.ErrNotFound
	}
	return k.Principal, nil, err
}

func hasBearerPrefix(r *http.Request) bool {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	return strings.EqualFold(h, "bearer") || (len(h) >= 7 && strings.EqualFold(h[:7], "bearer "))
}
