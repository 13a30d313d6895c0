package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"gateway/server/domain"
	"gateway/server/servertest"
)

// A 401 says which of the three forms the key was read from and what was wrong with it
// (missing, not Bearer, malformed, unknown, revoked), and never repeats the key.
func TestAuthSaysWhatWasWrong(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	revoked, k := env.NewKey(a.Account.ID, domain.ModeLive)
	if _, err := env.Store.RevokeAPIKey(context.Background(), k.ID); err != nil {
		t.Fatal(err)
	}
	unknown, _, _, err := domain.GenerateKey(domain.ModeLive)
	if err != nil {
		t.Fatal(err)
	}
	malformed := a.Live[:len(a.Live)-1] + "x"
	if strings.HasSuffix(a.Live, "x") {
		malformed = a.Live[:len(a.Live)-1] + "y"
	}
	cases := []struct {
		name       string
		req        servertest.Request
		secret     string
		want, form string
	}{
		{"no key", servertest.Request{}, "", "No API key", "Authorization: Bearer <key>"},
		{"basic", servertest.Request{Header: map[string]string{"Authorization": "Basic " + a.Live}}, a.Live, "is not a Bearer key", "Authorization: Bearer header"},
		{"empty bearer", servertest.Request{Header: map[string]string{"Authorization": "Bearer  "}}, "", "is empty", "Authorization: Bearer header"},
		{"malformed bearer", servertest.Request{Key: malformed}, malformed, "is malformed", "Authorization: Bearer header"},
		{"malformed header", servertest.Request{Header: map[string]string{"X-API-Key": "svc_live_short"}}, "svc_live_short", "is malformed", "X-API-Key header"},
		{"unknown query", servertest.Request{Path: queryKey(unknown)}, unknown, "is not a key of this service", "apiKey query parameter"},
		{"revoked header", servertest.Request{Header: map[string]string{"X-API-Key": revoked}}, revoked, "was revoked", "X-API-Key header"},
	}
	for _, c := range cases {
		c.req.Method = http.MethodGet
		if c.req.Path == "" {
			c.req.Path = "/v1/me"
		}
		r := env.Do(c.req)
		b := wantFailure(t, r, http.StatusUnauthorized, "unauthorized")
		if !strings.Contains(b.Message, c.want) || !strings.Contains(b.Message, c.form) {
			t.Errorf("%s: message %q, want it to say %q and %q", c.name, b.Message, c.want, c.form)
		}
		if c.secret != "" && strings.Contains(string(r.Body), c.secret[9:]) {
			t.Errorf("%s: the response repeats the key: %s", c.name, r.Body)
		}
	}
}

// A destination that is not digits only is refused with a sentence saying what a valid one
// looks like, not the raw pattern.
func TestSendDestinationMessage(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	for _, dest := range []string{"+15551234567", "1555 123 4567", "555-1234", "1"} {
		r := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Key: a.Test,
			Body: map[string]any{"destination": dest, "template_name": "sandbox_welcome"}})
		var b struct {
			Errors map[string][]string `json:"errors"`
		}
		r.JSON(t, &b)
		want := "digits only, country code first, e.g. 15551234567; no +, spaces or dashes"
		if r.Status != http.StatusUnprocessableEntity || len(b.Errors["destination"]) != 1 || b.Errors["destination"][0] != want {
			t.Errorf("destination %q: %d %s", dest, r.Status, r.Body)
		}
	}
}
