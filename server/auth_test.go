package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"gateway/server/domain"
	"gateway/server/servertest"
)

// envBody is the response envelope as a client reads it.
type envBody struct {
	Success bool                `json:"success"`
	Message string              `json:"message"`
	Code    string              `json:"code"`
	Errors  map[string][]string `json:"errors"`
	Data    json.RawMessage     `json:"data"`
}

func decodeEnv(t testing.TB, r *servertest.Response) envBody {
	t.Helper()
	var b envBody
	r.JSON(t, &b)
	return b
}

// wantFailure checks status, success=false, the error code and a non-empty message.
func wantFailure(t testing.TB, r *servertest.Response, status int, code string) envBody {
	t.Helper()
	b := decodeEnv(t, r)
	if r.Status != status || b.Success || b.Code != code || b.Message == "" {
		t.Fatalf("want %d %s, got %d %s", status, code, r.Status, r.Body)
	}
	return b
}

// wantOK checks a 200 success envelope and decodes its data into v.
func wantOK(t testing.TB, r *servertest.Response, v any) envBody {
	t.Helper()
	b := decodeEnv(t, r)
	if r.Status != http.StatusOK || !b.Success {
		t.Fatalf("want 200, got %d %s", r.Status, r.Body)
	}
	if v != nil {
		if err := json.Unmarshal(b.Data, v); err != nil {
			t.Fatalf("decode data %s: %v", b.Data, err)
		}
	}
	return b
}

type meData struct {
	Account struct {
		ID    int64  `json:"id"`
		Name  string `json:"name"`
		Email string `json:"email"`
	} `json:"account"`
	Chat struct {
		Connected     bool   `json:"connected"`
		DisplayName   string `json:"display_name"`
		PhoneNumber   string `json:"phone_number"`
		PhoneNumberID string `json:"phone_number_id"`
	} `json:"chat"`
	Mode    string `json:"mode"`
	Sandbox *struct {
		PhoneNumber string `json:"phone_number"`
		JoinPhrase  string `json:"join_phrase"`
		JoinCode    string `json:"join_code"`
	} `json:"sandbox"`
}

// getMe calls GET /v1/me with the request's credentials and returns the account it shows.
func getMe(t testing.TB, env *servertest.Env, r servertest.Request) meData {
	t.Helper()
	r.Method = http.MethodGet
	if r.Path == "" {
		r.Path = "/v1/me"
	}
	var me meData
	wantOK(t, env.Do(r), &me)
	return me
}

func queryKey(key string) string { return "/v1/me?apiKey=" + url.QueryEscape(key) }

func TestAuthEachKeyFormWorks(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	env.NewTenant("Other Co") // a second account, so "the first account" cannot pass by accident

	for name, r := range map[string]servertest.Request{
		"bearer":           {Key: a.Live},
		"bearer lowercase": {Header: map[string]string{"Authorization": "bearer " + a.Live}},
		"x-api-key":        {Header: map[string]string{"X-API-Key": a.Live}},
		"query":            {Path: queryKey(a.Live)},
	} {
		t.Run(name, func(t *testing.T) {
			me := getMe(t, env, r)
			if me.Account.ID != a.Account.ID || me.Account.Name != "Acme Ltd" || me.Mode != domain.ModeLive || me.Sandbox != nil {
				t.Fatalf("unexpected %+v", me)
			}
		})
	}
}

func TestAuthPrecedence(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	b := env.NewTenant("Beta Inc")

	cases := []struct {
		name string
		req  servertest.Request
		want int64
	}{
		{"bearer over x-api-key", servertest.Request{Key: a.Live, Header: map[string]string{"X-API-Key": b.Live}}, a.Account.ID},
		{"bearer over x-api-key (swapped)", servertest.Request{Key: b.Live, Header: map[string]string{"X-API-Key": a.Live}}, b.Account.ID},
		{"x-api-key over query", servertest.Request{Path: queryKey(b.Live), Header: map[string]string{"X-API-Key": a.Live}}, a.Account.ID},
		{"x-api-key over query (swapped)", servertest.Request{Path: queryKey(a.Live), Header: map[string]string{"X-API-Key": b.Live}}, b.Account.ID},
		{"bearer over query", servertest.Request{Path: queryKey(a.Live), Key: b.Live}, b.Account.ID},
		{"bearer over both", servertest.Request{Path: queryKey(a.Live), Key: b.Live, Header: map[string]string{"X-API-Key": a.Live}}, b.Account.ID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := getMe(t, env, c.req).Account.ID; got != c.want {
				t.Fatalf("GET /me showed account %d, want %d", got, c.want)
			}
		})
	}
}

func TestAuthNoFallThrough(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	unknown, _, _, err := domain.GenerateKey(domain.ModeLive) // well formed, never stored
	if err != nil {
		t.Fatal(err)
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(a.Live+":"))

	for name, r := range map[string]servertest.Request{
		"garbage bearer, valid x-api-key":     {Header: map[string]string{"Authorization": "Bearer nope", "X-API-Key": a.Live}},
		"unknown bearer, valid x-api-key":     {Key: unknown, Header: map[string]string{"X-API-Key": a.Live}},
		"unknown bearer, valid query":         {Key: unknown, Path: queryKey(a.Live)},
		"empty bearer, valid x-api-key":       {Header: map[string]string{"Authorization": "Bearer", "X-API-Key": a.Live}},
		"basic, valid x-api-key":              {Header: map[string]string{"Authorization": basic, "X-API-Key": a.Live}},
		"invalid x-api-key, valid query":      {Path: queryKey(a.Live), Header: map[string]string{"X-API-Key": "svc_live_nope"}},
		"unknown x-api-key, valid query":      {Path: queryKey(a.Live), Header: map[string]string{"X-API-Key": unknown}},
		"empty query key":                     {Path: "/v1/me?apiKey="},
		"valid key in an unknown query param": {Path: "/v1/me?api_key=" + a.Live},
	} {
		t.Run(name, func(t *testing.T) {
			r.Method = http.MethodGet
			if r.Path == "" {
				r.Path = "/v1/me"
			}
			resp := env.Do(r)
			wantFailure(t, resp, http.StatusUnauthorized, "unauthorized")
			if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("401 without a WWW-Authenticate challenge: %v", resp.Header)
			}
		})
	}
}

func TestAuthRejectsBadKeys(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	ctx := context.Background()

	unknown, _, _, err := domain.GenerateKey(domain.ModeLive)
	if err != nil {
		t.Fatal(err)
	}
	// A test key whose hash is stored as a live key: the prefix and the stored mode disagree.
	mislabelled, hash, prefix, err := domain.GenerateKey(domain.ModeTest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.CreateAPIKey(ctx, a.Account.ID, domain.ModeLive, hash, prefix); err != nil {
		t.Fatal(err)
	}
	flip := func(key string, i int) string {
		c := byte('A')
		if key[i] == 'A' {
			c = 'B'
		}
		return key[:i] + string(c) + key[i+1:]
	}

	for name, h := range map[string]map[string]string{
		"missing":                 nil,
		"basic scheme":            {"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+a.Live))},
		"token scheme":            {"Authorization": "Token " + a.Live},
		"malformed":               {"Authorization": "Bearer hello"},
		"wrong checksum":          {"Authorization": "Bearer " + flip(a.Live, len(a.Live)-1)},
		"body changed":            {"Authorization": "Bearer " + flip(a.Live, 12)},
		"wrong prefix":            {"Authorization": "Bearer " + "svc_prod_" + a.Live[9:]},
		"truncated":               {"Authorization": "Bearer " + a.Live[:len(a.Live)-1]},
		"trailing garbage":        {"Authorization": "Bearer " + a.Live + "x"},
		"unknown well-formed":     {"Authorization": "Bearer " + unknown},
		"mode mismatch":           {"Authorization": "Bearer " + mislabelled},
		"x-api-key malformed":     {"X-API-Key": "svc_live_123"},
		"x-api-key unknown":       {"X-API-Key": unknown},
		"x-api-key with a scheme": {"X-API-Key": "Bearer " + a.Live},
	} {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/v1/me", "/v1/contacts"} {
				resp := env.Do(servertest.Request{Method: http.MethodGet, Path: path, Header: h})
				wantFailure(t, resp, http.StatusUnauthorized, "unauthorized")
			}
		})
	}
	// The same checks as a query parameter.
	for _, k := range []string{"hello", flip(a.Live, 20), unknown, mislabelled} {
		wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: queryKey(k)}), http.StatusUnauthorized, "unauthorized")
	}
	// A POST without a key is refused before its body is looked at.
	resp := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Body: "{not json"})
	wantFailure(t, resp, http.StatusUnauthorized, "unauthorized")
}

func TestAuthRevokedKeyStopsAtOnce(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	second, _ := env.NewKey(a.Account.ID, domain.ModeLive)
	ctx := context.Background()

	if me := getMe(t, env, servertest.Request{Key: a.Live}); me.Account.ID != a.Account.ID {
		t.Fatalf("unexpected %+v", me)
	}
	if _, err := env.Store.RevokeAPIKey(ctx, a.LiveKey.ID); err != nil {
		t.Fatal(err)
	}
	// The very next request with the revoked key fails, in every form.
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/me", Key: a.Live}), http.StatusUnauthorized, "unauthorized")
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/me", Header: map[string]string{"X-API-Key": a.Live}}), http.StatusUnauthorized, "unauthorized")
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: queryKey(a.Live)}), http.StatusUnauthorized, "unauthorized")
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: a.Live,
		Body: map[string]any{"mobile": "15551234567"}}), http.StatusUnauthorized, "unauthorized")

	// The account's other keys keep working.
	for _, k := range []string{second, a.Test} {
		if me := getMe(t, env, servertest.Request{Key: k}); me.Account.ID != a.Account.ID {
			t.Fatalf("unexpected %+v", me)
		}
	}
	// Revoking twice is harmless and the key stays revoked.
	if _, err := env.Store.RevokeAPIKey(ctx, a.LiveKey.ID); err != nil {
		t.Fatal(err)
	}
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/me", Key: a.Live}), http.StatusUnauthorized, "unauthorized")
}

func TestAuthInactiveAccount(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	b := env.NewTenant("Beta Inc")
	ctx := context.Background()

	if _, err := env.Store.SetAccountActive(ctx, a.Account.ID, false); err != nil {
		t.Fatal(err)
	}
	for _, r := range []servertest.Request{
		{Method: http.MethodGet, Path: "/v1/me", Key: a.Live},
		{Method: http.MethodGet, Path: "/v1/me", Key: a.Test},
		{Method: http.MethodGet, Path: "/v1/contacts", Key: a.Live},
		{Method: http.MethodPost, Path: "/v1/contacts", Key: a.Live, Body: map[string]any{"mobile": "15551234567"}},
	} {
		wantFailure(t, env.Do(r), http.StatusForbidden, "account_inactive")
	}
	// Nothing was written by the refused POST.
	var n int
	if err := env.Store.DB().Get(&n, `SELECT count(*) FROM contacts WHERE account_id = $1`, a.Account.ID); err != nil || n != 0 {
		t.Fatalf("contacts of the inactive account: %d, %v", n, err)
	}
	// An invalid key is still a 401, whatever the account's state; other accounts are unaffected.
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/me", Key: "svc_live_nope"}), http.StatusUnauthorized, "unauthorized")
	if me := getMe(t, env, servertest.Request{Key: b.Live}); me.Account.ID != b.Account.ID {
		t.Fatalf("unexpected %+v", me)
	}

	if _, err := env.Store.SetAccountActive(ctx, a.Account.ID, true); err != nil {
		t.Fatal(err)
	}
	if me := getMe(t, env, servertest.Request{Key: a.Live}); me.Account.ID != a.Account.ID {
		t.Fatalf("unexpected %+v", me)
	}
}

func TestAuthTestKeySeesSandbox(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")

	me := getMe(t, env, servertest.Request{Key: a.Test})
	if me.Mode != domain.ModeTest || me.Account.ID != a.Account.ID {
		t.Fatalf("unexpected %+v", me)
	}
	if me.Sandbox == nil || me.Sandbox.PhoneNumber != "15550001111" || me.Sandbox.JoinCode != a.Account.JoinCode ||
		!strings.Contains(me.Sandbox.JoinPhrase, a.Account.JoinCode) {
		t.Fatalf("sandbox %+v, want the sandbox number and join code %q", me.Sandbox, a.Account.JoinCode)
	}
	if !me.Chat.Connected || me.Chat.PhoneNumber != "15550001111" || me.Chat.PhoneNumberID != "sandbox-pnid" {
		t.Fatalf("chat %+v, want the sandbox number", me.Chat)
	}
	// The same account's live key shows the live identity (no number connected yet).
	live := getMe(t, env, servertest.Request{Key: a.Live})
	if live.Mode != domain.ModeLive || live.Sandbox != nil || live.Chat.Connected {
		t.Fatalf("unexpected %+v", live)
	}
}

func TestAuthRecordsKeyUse(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	used := func(keyID int64) bool {
		var ok bool
		if err := env.Store.DB().Get(&ok, `SELECT last_used_at IS NOT NULL FROM api_keys WHERE id = $1`, keyID); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if used(a.LiveKey.ID) {
		t.Fatal("a new key is marked as used")
	}
	getMe(t, env, servertest.Request{Key: a.Live})
	if !used(a.LiveKey.ID) {
		t.Fatal("last_used_at not recorded")
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func TestAuthQueryKeyNeverLogged(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	env := servertest.New(t, servertest.Config{Logger: logger})
	a := env.NewTenant("Acme Ltd")
	unknown, _, _, err := domain.GenerateKey(domain.ModeLive)
	if err != nil {
		t.Fatal(err)
	}
	q := url.QueryEscape

	reqs := []servertest.Request{
		{Method: http.MethodGet, Path: "/v1/me?apiKey=" + q(a.Live)},                         // 200
		{Method: http.MethodGet, Path: "/v1/me?apiKey=" + q(a.Test)},                         // 200, test mode
		{Method: http.MethodGet, Path: "/v1/me?apiKey=" + q(unknown)},                        // 401
		{Method: http.MethodGet, Path: "/v1/contacts?limit=0&apiKey=" + q(a.Live)},           // 422
		{Method: http.MethodGet, Path: "/v1/nope?apiKey=" + q(a.Live)},                       // 404
		{Method: http.MethodDelete, Path: "/v1/contacts?apiKey=" + q(a.Live)},                // 405
		{Method: http.MethodGet, Path: "/v1/messages/1?apiKey=" + q(a.Live)},                 // 404, or 500 while messaging is a placeholder
		{Method: http.MethodPost, Path: "/v1/contacts?apiKey=" + q(a.Live), Body: "{broken"}, // 422
		{Method: http.MethodPost, Path: "/v1/contacts", Header: map[string]string{"X-API-Key": a.Live}, // 200
			Body: map[string]any{"mobile": "15551234567", "firstname": "Ana"}},
		{Method: http.MethodGet, Path: "/v1/me", Key: a.Live}, // 200
	}
	for _, r := range reqs {
		env.Do(r)
	}
	out := logs.String()
	for _, secret := range []string{a.Live, a.Test, unknown, a.Live[9:], a.Test[9:], unknown[9:]} {
		if strings.Contains(out, secret) {
			t.Fatalf("a key reached the logs:\n%s", out)
		}
	}
	// The logger really received the requests (so the check above is not vacuous).
	if got := strings.Count(out, "msg=request "); got != len(reqs) {
		t.Fatalf("%d request lines logged, want %d:\n%s", got, len(reqs), out)
	}
	if !strings.Contains(out, "path=/v1/me ") || !strings.Contains(out, "status=401") {
		t.Fatalf("unexpected logs:\n%s", out)
	}
}
