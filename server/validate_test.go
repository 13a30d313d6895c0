package server_test

import (
	"net/http"
	"strings"
	"testing"

	"gateway/server/servertest"
)

// Request validation runs in the middleware, before any handler, for every operation: each 422
// names every offending field by its JSON path joined with dots, query parameters as
// query.<name>, and the whole body as "body".
func TestValidationFieldPaths(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	send := func(body any) servertest.Request {
		return servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Body: body}
	}
	ok := map[string]any{"destination": "15551234567", "template_name": "order_confirmation"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range ok {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
				continue
			}
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		name   string
		req    servertest.Request
		fields []string
	}{
		{"destination missing", send(with("destination", nil)), []string{"destination"}},
		{"destination formatted", send(with("destination", "+1 555 123 4567")), []string{"destination"}},
		{"destination too long", send(with("destination", strings.Repeat("1", 21))), []string{"destination"}},
		{"template_name too long", send(with("template_name", strings.Repeat("t", 121))), []string{"template_name"}},
		{"template_name empty", send(with("template_name", "")), []string{"template_name"}},
		{"template_id a string", send(with("template_id", "7")), []string{"template_id"}},
		{"template_id zero", send(with("template_id", 0)), []string{"template_id"}},
		{"name too long", send(with("name", strings.Repeat("n", 81))), []string{"name"}},
		{"campaign_name too long", send(with("campaign_name", strings.Repeat("c", 121))), []string{"campaign_name"}},
		{"second body variable empty", send(with("body_variables", []any{"Ana", ""})), []string{"body_variables.1"}},
		{"body variable not a string", send(with("body_variables", []any{7})), []string{"body_variables.0"}},
		{"body_variables not an array", send(with("body_variables", "Ana")), []string{"body_variables"}},
		{"header variable too long", send(with("header_variables", []any{strings.Repeat("h", 1025)})), []string{"header_variables.0"}},
		{"unknown field", send(with("to", "15551234567")), []string{"to"}},
		{"several at once", send(with("destination", "x", "name", strings.Repeat("n", 81), "body_variables", []any{"a", "b", ""})),
			[]string{"destination", "name", "body_variables.2"}},
		{"malformed JSON", send(`{"destination":`), []string{"body"}},
		{"no body", send(""), []string{"body"}},
		{"message id not a number", servertest.Request{Method: http.MethodGet, Path: "/v1/messages/abc"}, []string{"path.id"}},
		{"message id zero", servertest.Request{Method: http.MethodGet, Path: "/v1/messages/0"}, []string{"path.id"}},
		{"contacts limit and search", servertest.Request{Method: http.MethodGet, Path: "/v1/contacts?limit=500&search=" + strings.Repeat("s", 101)},
			[]string{"query.limit", "query.search"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.Key = a.Live
			b := wantFailure(t, env.Do(c.req), http.StatusUnprocessableEntity, "validation_failed")
			if len(b.Errors) != len(c.fields) {
				t.Errorf("errors %v, want exactly %v", b.Errors, c.fields)
			}
			for _, f := range c.fields {
				if len(b.Errors[f]) == 0 {
					t.Errorf("no reason for %q in %v", f, b.Errors)
				}
			}
			// Reasons are short sentences, not schema dumps.
			for f, reasons := range b.Errors {
				for _, r := range reasons {
					if len(r) > 200 || strings.Contains(r, "Schema:") || strings.Contains(r, "\n") {
						t.Errorf("reason for %s is a dump: %q", f, r)
					}
				}
			}
		})
	}
	// The same rules apply to a test key, and validation comes after authentication.
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Key: a.Test, Body: with("destination", "x")}),
		http.StatusUnprocessableEntity, "validation_failed")
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Body: with("destination", "x")}),
		http.StatusUnauthorized, "unauthorized")
}
