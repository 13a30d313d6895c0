package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"gateway/server/servertest"
)

// Strict input (I-JSON, RFC 7493): a NUL character or invalid UTF-8 anywhere
// in a request — body strings at any depth, query values, path and header parameters — and a
// duplicate key in a JSON object are a 422 naming the field, checked once in the validation
// middleware. Nothing is written and nothing is silently altered.
func TestStrictInputRefused(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	contact := func(body string) servertest.Request {
		return servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Body: body}
	}
	send := func(body string) servertest.Request {
		return servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Body: body}
	}
	const m = `"mobile":"15551234567"`
	const d = `"destination":"15551234567","template_name":"order_confirmation"`
	cases := []struct {
		name  string
		req   servertest.Request
		field string
	}{
		{"NUL in firstname", contact(`{` + m + `,"firstname":"An\u0000a"}`), "firstname"},
		{"NUL in lastname", contact(`{` + m + `,"lastname":"\u0000"}`), "lastname"},
		{"NUL in note", contact(`{` + m + `,"note":"vip\u0000"}`), "note"},
		{"invalid UTF-8 in firstname", contact("{" + m + `,"firstname":"Ana` + "\xff\xfe" + `"}`), "firstname"},
		{"truncated UTF-8 in note", contact("{" + m + `,"note":"caf` + "\xc3" + `"}`), "note"},
		{"lone surrogate escape", contact(`{` + m + `,"lastname":"x\ud800y"}`), "lastname"},
		{"lone low surrogate escape", contact(`{` + m + `,"lastname":"\udc00"}`), "lastname"},
		{"duplicate key", contact(`{` + m + `,"firstname":"Ana","firstname":"Bea"}`), "firstname"},
		{"duplicate mobile", contact(`{` + m + `,"mobile":"15557654321"}`), "mobile"},
		{"NUL in name", send(`{` + d + `,"name":"Ana\u0000"}`), "name"},
		{"NUL in campaign_name", send(`{` + d + `,"campaign_name":"\u0000x"}`), "campaign_name"},
		{"NUL in a body variable", send(`{` + d + `,"body_variables":["Ana","\u0000"]}`), "body_variables.1"},
		{"invalid UTF-8 in a body variable", send(`{` + d + `,"body_variables":["` + "\x80" + `"]}`), "body_variables.0"},
		{"duplicate key in send", send(`{` + d + `,"template_name":"other"}`), "template_name"},
		{"NUL in an unknown nested object", send(`{` + d + `,"extra":{"a":[{"b":"\u0000"}]}}`), "extra.a.0.b"},
		{"duplicate key nested", send(`{` + d + `,"extra":{"a":1,"a":2}}`), "extra.a"},
		{"NUL in search", servertest.Request{Method: http.MethodGet, Path: "/v1/contacts?search=%00"}, "query.search"},
		{"invalid UTF-8 in search", servertest.Request{Method: http.MethodGet, Path: "/v1/contacts?search=ana%FF"}, "query.search"},
		{"invalid UTF-8 in Idempotency-Key", servertest.Request{Method: http.MethodPost, Path: "/v1/contacts",
			Body: `{` + m + `}`, Header: map[string]string{"Idempotency-Key": "k\xff"}}, "header.Idempotency-Key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.Key = a.Live
			b := wantFailure(t, env.Do(c.req), http.StatusUnprocessableEntity, "validation_failed")
			if len(b.Errors[c.field]) == 0 {
				t.Fatalf("errors %v, want a reason for %q", b.Errors, c.field)
			}
		})
	}
	var n int
	if err := env.Store.DB().GetContext(context.Background(), &n, `SELECT count(*) FROM contacts`); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d contacts written by refused requests", n)
	}
}

// What I-JSON allows passes untouched: an escaped backslash before u0000 is six ordinary
// characters, a surrogate pair is one character, and non-ASCII text is kept byte for byte.
func TestStrictInputAllowed(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	r := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: a.Live,
		Body: `{"mobile":"15551234567","firstname":"Jos\u00e9 \\u0000","lastname":"\ud83d\ude00 Ünal"}`})
	var c struct {
		Name string `json:"name"`
	}
	wantOK(t, r, &c)
	if want := `José \u0000 😀 Ünal`; c.Name != want {
		t.Fatalf("name %q, want %q", c.Name, want)
	}
	r = env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/contacts?search=" + strings.ReplaceAll("José", "é", "%C3%A9"), Key: a.Live})
	var l struct {
		Contacts []struct {
			Name string `json:"name"`
		} `json:"contacts"`
	}
	wantOK(t, r, &l)
	if len(l.Contacts) != 1 {
		t.Fatalf("search for José: %+v", l)
	}
}
