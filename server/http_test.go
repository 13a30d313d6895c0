package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"gateway/gen"
	"gateway/openapi"
	"gateway/server"
	"gateway/server/servertest"
)

// wantEnvelopeOutsideV1 checks a response to a path outside /v1, which Do cannot match to an
// operation: a failure envelope with the code.
func wantEnvelopeOutsideV1(t testing.TB, env *servertest.Env, r *servertest.Response, status int, code string) {
	t.Helper()
	if err := env.ValidateSchema("ErrorEnvelope", r.Body); err != nil {
		t.Fatalf("not an error envelope: %s: %v", r.Body, err)
	}
	wantFailure(t, r, status, code)
}

func TestHTTPUnknownPaths(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")

	for _, key := range []string{a.Live, ""} { // route lookup comes before authentication
		for _, p := range []string{"/v1/nope", "/v1/contacts/123", "/v1/me/extra", "/v1/campaigns/1/messages", "/v1/", "/v1/openapi.xml"} {
			r := env.Do(servertest.Request{Method: http.MethodGet, Path: p, Key: key})
			b := wantFailure(t, r, http.StatusNotFound, "not_found")
			if !strings.Contains(b.Message, p) {
				t.Errorf("message %q does not name the path", b.Message)
			}
		}
	}
	for _, p := range []string{"/nope", "/v2/me", "/V1/me", "/platform", "/healthz/x"} {
		r := env.Do(servertest.Request{Method: http.MethodGet, Path: p, Key: a.Live})
		wantEnvelopeOutsideV1(t, env, r, http.StatusNotFound, "not_found")
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("%s: content type %q", p, ct)
		}
	}
}

// The service's own address leads a person who opens it in a browser to the dashboard.
func TestHTTPRootLeadsToTheDashboard(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(env.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard" {
		t.Fatalf("GET /: %d to %q, want 303 to /dashboard", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestHTTPWrongMethod(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")

	for _, c := range []struct{ method, path, allow string }{
		{http.MethodDelete, "/v1/contacts", "GET, POST"},
		{http.MethodPut, "/v1/contacts", "GET, POST"},
		{http.MethodPost, "/v1/me", "GET"},
		{http.MethodPatch, "/v1/templates", "GET"},
		{http.MethodGet, "/v1/messages/template", "POST"},
		{http.MethodDelete, "/v1/messages/12", "GET"},
	} {
		for _, key := range []string{a.Live, ""} {
			r := env.Do(servertest.Request{Method: c.method, Path: c.path, Key: key})
			wantFailure(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
			if got := r.Header.Get("Allow"); got != c.allow {
				t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
			}
		}
	}
	// Nothing was written by the refused calls.
	if n := countRows(t, env, `SELECT count(*) FROM contacts`); n != 0 {
		t.Fatalf("%d contacts", n)
	}
}

// paddedContact is a valid POST /contacts body padded with JSON whitespace to exactly size bytes.
func paddedContact(size int) string {
	b := `{"mobile":"15551234567","firstname":"Big"}`
	return b[:len(b)-1] + strings.Repeat(" ", size-len(b)) + "}"
}

func TestHTTPBodyLimit(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	const mib = 1 << 20

	// Exactly 1 MiB is accepted.
	body := paddedContact(mib)
	if len(body) != mib {
		t.Fatalf("body is %d bytes", len(body))
	}
	upsertContact(t, env, a.Live, body)

	// One byte more is a 413, with or without a key (the limit comes first).
	for _, key := range []string{a.Live, ""} {
		r := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: key, Body: paddedContact(mib + 1)})
		wantFailure(t, r, http.StatusRequestEntityTooLarge, "payload_too_large")
	}
	r := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: a.Live, Body: paddedContact(5 * mib)})
	wantFailure(t, r, http.StatusRequestEntityTooLarge, "payload_too_large")

	// The same without Content-Length (chunked): the limit cuts the stream and the answer is
	// still 413, not a malformed-JSON 422.
	for _, size := range []int{mib + 1, 3 * mib} {
		big := paddedContact(size)
		req, err := http.NewRequest(http.MethodPost, env.URL+"/v1/contacts", io.MultiReader(strings.NewReader(big)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+a.Live)
		req.Header.Set("Content-Type", "application/json")
		if req.ContentLength != 0 {
			t.Fatal("request is not chunked")
		}
		resp, err := env.HTTP.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := &servertest.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
		sent := servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: a.Live, Body: big}
		if err := env.Validate(sent, got); err != nil {
			t.Fatalf("contract: %v", err)
		}
		wantFailure(t, got, http.StatusRequestEntityTooLarge, "payload_too_large")
	}
	if n := countRows(t, env, `SELECT count(*) FROM contacts`); n != 1 {
		t.Fatalf("%d contacts, want 1", n)
	}
}

var generatedID = regexp.MustCompile(`^req_[0-9a-f]{24}$`)

func TestHTTPRequestID(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")

	reqs := []servertest.Request{
		{Method: http.MethodGet, Path: "/v1/me", Key: a.Live},                   // 200
		{Method: http.MethodGet, Path: "/v1/me"},                                // 401
		{Method: http.MethodGet, Path: "/v1/contacts?limit=0", Key: a.Live},     // 422
		{Method: http.MethodGet, Path: "/v1/nope"},                              // 404
		{Method: http.MethodDelete, Path: "/v1/contacts"},                       // 405
		{Method: http.MethodGet, Path: "/nope"},                                 // 404 outside /v1
		{Method: http.MethodGet, Path: "/healthz"},                              // public
		{Method: http.MethodGet, Path: "/v1/openapi.json"},                      // public
		{Method: http.MethodPost, Path: "/v1/contacts", Key: a.Live, Body: "{"}, // 422
	}
	seen := map[string]bool{}
	for _, r := range reqs {
		// Generated when absent: unique and well formed.
		id := env.Do(r).Header.Get("X-Request-Id")
		if !generatedID.MatchString(id) || seen[id] {
			t.Fatalf("%s %s: generated X-Request-Id %q (seen before: %t)", r.Method, r.Path, id, seen[id])
		}
		seen[id] = true

		// Echoed when sent.
		r.Header = map[string]string{"X-Request-Id": "trace-42.abc_DEF"}
		if got := env.Do(r).Header.Get("X-Request-Id"); got != "trace-42.abc_DEF" {
			t.Fatalf("%s %s: X-Request-Id %q, want the one sent", r.Method, r.Path, got)
		}
		// Replaced when unreasonable (over 128 characters).
		r.Header = map[string]string{"X-Request-Id": strings.Repeat("r", 129)}
		if got := env.Do(r).Header.Get("X-Request-Id"); !generatedID.MatchString(got) {
			t.Fatalf("%s %s: an over-long X-Request-Id came back as %q", r.Method, r.Path, got)
		}
	}
}

func TestHTTPHealth(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	for _, p := range []string{"/healthz", "/readyz"} {
		r := env.Do(servertest.Request{Method: http.MethodGet, Path: p})
		if err := env.ValidateSchema("Envelope", r.Body); err != nil {
			t.Fatal(err)
		}
		wantOK(t, r, nil)
	}
	// /readyz says how the gateway uses the database: LISTEN or polling for the wake-ups, and
	// which pool serves the reads that may lag.
	if msg := decodeEnv(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/readyz"})).Message; !strings.Contains(msg, "wake-ups by LISTEN") ||
		!strings.Contains(msg, "reads on the primary (no replica)") {
		t.Fatalf("/readyz of a direct gateway without a replica: %q", msg)
	}
	polling := servertest.New(t, servertest.Config{Options: server.Options{NoListen: true}})
	if msg := decodeEnv(t, polling.Do(servertest.Request{Method: http.MethodGet, Path: "/readyz"})).Message; !strings.Contains(msg, "wake-ups by polling") {
		t.Fatalf("/readyz of a gateway without a direct connection: %q", msg)
	}

	// A binary that expects a newer schema than the database has is not ready.
	stale := servertest.New(t, servertest.Config{Options: server.Options{SchemaVersion: 999999}})
	r := stale.Do(servertest.Request{Method: http.MethodGet, Path: "/readyz"})
	wantEnvelopeOutsideV1(t, stale, r, http.StatusServiceUnavailable, "internal_error")
	if !strings.Contains(decodeEnv(t, r).Message, "999999") {
		t.Fatalf("message does not say which version is expected: %s", r.Body)
	}
	// It is still alive.
	wantOK(t, stale.Do(servertest.Request{Method: http.MethodGet, Path: "/healthz"}), nil)
}

// specSummary lists "METHOD /path operationId" for every operation of a document.
func specSummary(doc *openapi3.T) []string {
	var out []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			out = append(out, method+" "+path+" "+op.OperationID)
		}
	}
	sort.Strings(out)
	return out
}

func TestHTTPPublishedSpec(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	loaded, err := server.LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	if len(specSummary(loaded)) < 6 {
		t.Fatalf("the loaded spec has too few operations: %v", specSummary(loaded))
	}

	// No key needed; a bad key is ignored on public paths.
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer garbage"}} {
		y := env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/openapi.yaml", Header: h})
		if y.Status != http.StatusOK || !bytes.Equal(y.Body, openapi.YAML) || !strings.Contains(y.Header.Get("Content-Type"), "yaml") {
			t.Fatalf("openapi.yaml: %d %q", y.Status, y.Header.Get("Content-Type"))
		}

		j := env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/openapi.json", Header: h})
		if j.Status != http.StatusOK || !strings.HasPrefix(j.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("openapi.json: %d %q", j.Status, j.Header.Get("Content-Type"))
		}
		if !json.Valid(j.Body) {
			t.Fatal("openapi.json is not JSON")
		}
		published, err := openapi3.NewLoader().LoadFromData(j.Body)
		if err != nil {
			t.Fatalf("openapi.json does not load: %v", err)
		}
		if err := published.Validate(t.Context()); err != nil {
			t.Fatalf("openapi.json does not validate: %v", err)
		}
		if got, want := specSummary(published), specSummary(loaded); !reflect.DeepEqual(got, want) {
			t.Fatalf("openapi.json operations %v, want %v", got, want)
		}
		if !reflect.DeepEqual(jsonValue(t, j.Body), specValue(t, loaded)) {
			t.Fatal("openapi.json differs from openapi.yaml")
		}
	}
}

func jsonValue(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func specValue(t testing.TB, doc *openapi3.T) any {
	t.Helper()
	b, err := doc.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return jsonValue(t, b)
}

// The spec passes kin-openapi's document validation, and the code in gen/ was generated from
// the current openapi.yaml (run `go generate ./openapi` when this fails). oapi-codegen embeds
// the document with operation ids capitalised (pruning is off: skip-prune, so the webhook event
// schemas reach SDK users too); everything else must be identical.
func TestSpecValidAndGeneratedCodeCurrent(t *testing.T) {
	t.Parallel()
	loaded, err := server.LoadSpec()
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	generated, err := gen.GetSpec()
	if err != nil {
		t.Fatalf("gen.GetSpec: %v", err)
	}
	if err := generated.Validate(t.Context()); err != nil {
		t.Fatalf("gen/ spec does not validate: %v", err)
	}
	opID := func(id string) string { return strings.ToLower(strings.ReplaceAll(id, "_", "")) }
	normalize := func(doc *openapi3.T) map[string]any {
		m := specValue(t, doc).(map[string]any)
		for _, item := range m["paths"].(map[string]any) {
			for _, op := range item.(map[string]any) {
				if o, ok := op.(map[string]any); ok && o["operationId"] != nil {
					o["operationId"] = opID(o["operationId"].(string))
				}
			}
		}
		return m
	}
	g, w := normalize(generated), normalize(loaded)
	if got, want := specSummary(generated), specSummary(loaded); len(got) != len(want) {
		t.Fatalf("gen/ has operations %v, openapi.yaml has %v: regenerate", got, want)
	}

	gs := g["components"].(map[string]any)["schemas"].(map[string]any)
	ws := w["components"].(map[string]any)["schemas"].(map[string]any)
	// Schemas in gen/ are exactly those of openapi.yaml.
	for name, schema := range gs {
		if !reflect.DeepEqual(schema, ws[name]) {
			t.Errorf("schema %s differs between gen/ and openapi.yaml: regenerate", name)
		}
	}
	// A schema only in openapi.yaml must be one nothing generated refers to (pruned).
	var pruned []string
	for name := range ws {
		if _, ok := gs[name]; !ok {
			pruned = append(pruned, name)
		}
	}
	if len(pruned) > 0 {
		t.Errorf("schemas %v are in openapi.yaml but not in gen/: regenerate (skip-prune is on)", pruned)
	}
	// References from extensions (x-webhooks) do not count: oapi-codegen neither follows nor
	// generates them.
	wOthers := map[string]any{}
	for k, v := range w {
		if !strings.HasPrefix(k, "x-") {
			wOthers[k] = v
		}
	}
	wComponents := map[string]any{}
	for k, v := range w["components"].(map[string]any) {
		wComponents[k] = v
	}
	wOthers["components"] = wComponents
	kept := map[string]any{}
	for name, schema := range ws {
		if _, ok := gs[name]; ok {
			kept[name] = schema
		}
	}
	wComponents["schemas"] = kept
	wJSON, err := json.Marshal(wOthers)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range pruned {
		ref := `"#/components/schemas/` + name + `"`
		if strings.Contains(string(wJSON), ref) {
			t.Errorf("schema %s is referenced but missing from gen/: regenerate", name)
		}
	}
	// Everything else (paths, responses, parameters, security, info) is identical.
	delete(g["components"].(map[string]any), "schemas")
	delete(w["components"].(map[string]any), "schemas")
	for k := range w {
		if !reflect.DeepEqual(g[k], w[k]) {
			t.Errorf("gen/ differs from openapi.yaml in %q: regenerate (go generate ./openapi)", k)
		}
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			t.Errorf("gen/ has %q, openapi.yaml does not: regenerate", k)
		}
	}
}

// A panic anywhere in a request becomes the 500 envelope with a generic message, the cause and
// the stack are logged with the request id, and the server keeps serving. The panic is real:
// a server wired without a store dereferences it on the first key lookup.
func TestHTTPPanicIsInternalError(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")

	var logs syncBuffer
	srv, err := server.New(server.Options{}, server.Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	broken := *env // the same contract checks, against the broken server
	broken.URL = hs.URL

	for i := 0; i < 2; i++ { // twice: the first panic did not take the server down
		r := broken.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/me", Key: a.Live})
		b := wantFailure(t, r, http.StatusInternalServerError, "internal_error")
		for _, leak := range []string{"nil pointer", "runtime error", "panic", "goroutine", ".go:"} {
			if strings.Contains(strings.ToLower(string(r.Body)), leak) {
				t.Fatalf("the 500 leaks internals: %s", r.Body)
			}
		}
		if !strings.Contains(b.Message, "X-Request-Id") {
			t.Fatalf("message %q does not tell the client to quote the request id", b.Message)
		}
		id := r.Header.Get("X-Request-Id")
		out := logs.String()
		panicLogged := false
		for _, line := range strings.Split(out, "\n") {
			panicLogged = panicLogged || (strings.Contains(line, "msg=panic ") && strings.Contains(line, " request_id="+id))
		}
		if !panicLogged || !strings.Contains(out, "nil pointer dereference") {
			t.Fatalf("panic not logged with its request id %s:\n%s", id, out)
		}
		if !strings.Contains(out, "goroutine") || !strings.Contains(out, "gateway/store") {
			t.Fatalf("panic logged without a stack:\n%s", out)
		}
	}
	// Public paths that need no store still work on the broken server.
	wantOK(t, broken.Do(servertest.Request{Method: http.MethodGet, Path: "/healthz"}), nil)
}
