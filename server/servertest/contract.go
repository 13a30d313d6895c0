package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"gateway/server"
)

// The contract check: every exchange against openapi.yaml (status, headers and body), for an
// Env's gateway or one running elsewhere (Contract), and the record of which documented
// (operation, status) pairs the tests received.

// Validate checks one exchange against the spec.
func (e *Env) Validate(r Request, resp *Response) error {
	return validateExchange(e.Spec, e.router, e.URL, r, resp)
}

func validateExchange(spec *openapi3.T, router routers.Router, base string, r Request, resp *Response) error {
	if resp.Header.Get("X-Request-Id") == "" {
		return fmt.Errorf("no X-Request-Id header")
	}
	if !strings.HasPrefix(r.Path, "/v1/") || strings.HasPrefix(r.Path, "/v1/openapi.") {
		return nil
	}
	req, err := newRequest(base, r)
	if err != nil {
		return err
	}
	// The router matches on the server URL /v1 and the host-less path.
	req.URL.Host, req.URL.Scheme, req.Host = "", "", ""
	route, params, err := router.FindRoute(req)
	if err != nil {
		if resp.Status != http.StatusNotFound && resp.Status != http.StatusMethodNotAllowed {
			return fmt.Errorf("unrouted request answered %d", resp.Status)
		}
		if resp.Status == http.StatusMethodNotAllowed {
			// components/responses/MethodNotAllowed: the Allow header and the code of a 405.
			if resp.Header.Get("Allow") == "" {
				return fmt.Errorf("405 without an Allow header")
			}
			return ValidateSchema(spec, "MethodNotAllowedEnvelope", resp.Body)
		}
		return ValidateSchema(spec, "NotFoundEnvelope", resp.Body)
	}
	Cover(route.Operation.OperationID, resp.Status)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status:  resp.Status,
		Header:  resp.Header,
		Body:    io.NopCloser(bytes.NewReader(resp.Body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return err
	}
	recordFields(route.Operation, resp)
	return nil
}

// Contract sends requests to a gateway running elsewhere (for example the built binary) and
// checks every response against openapi.yaml, as Env.Do does.
type Contract struct {
	Spec   *openapi3.T
	Base   string
	router routers.Router
	client *http.Client
}

// loadSpec loads openapi.yaml and its router.
func loadSpec(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	spec, err := server.LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	router, err := gorillamux.NewRouter(spec)
	if err != nil {
		t.Fatal(err)
	}
	return spec, router
}

// NewContract returns a Contract for the gateway at base (e.g. http://127.0.0.1:8080).
func NewContract(t testing.TB, base string) *Contract {
	t.Helper()
	spec, router := loadSpec(t)
	return &Contract{Spec: spec, Base: base, router: router, client: &http.Client{Timeout: 30 * time.Second}}
}

// Do sends the request and validates the response; transport and contract failures are errors.
func (c *Contract) Do(r Request) (*Response, error) {
	out, err := sendRequest(c.client, c.Base, r)
	if err != nil {
		return nil, err
	}
	if err := validateExchange(c.Spec, c.router, c.Base, r, out); err != nil {
		return out, fmt.Errorf("contract: %s %s → %d %s: %w", r.Method, r.Path, out.Status, out.Body, err)
	}
	return out, nil
}

// ValidateSchema checks a JSON document against a named schema of components/schemas.
func (e *Env) ValidateSchema(name string, doc []byte) error {
	return ValidateSchema(e.Spec, name, doc)
}

// ValidateSchema checks a JSON document against a named schema of the spec's components.
func ValidateSchema(spec *openapi3.T, name string, doc []byte) error {
	ref, ok := spec.Components.Schemas[name]
	if !ok {
		return fmt.Errorf("no schema %q", name)
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return ref.Value.VisitJSON(v, openapi3.MultiErrors())
}

var (
	coverMu sync.Mutex
	covered = map[string]bool{}
)

// Cover records that a test received status for the operation.
func Cover(operationID string, status int) {
	coverMu.Lock()
	covered[fmt.Sprintf("%s %d", operationID, status)] = true
	coverMu.Unlock()
}

// Uncovered lists the (operation, status) pairs the spec documents that no test received.
func Uncovered(spec *openapi3.T) []string {
	coverMu.Lock()
	defer coverMu.Unlock()
	var out []string
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			for status := range op.Responses.Map() {
				k := op.OperationID + " " + status
				if !covered[k] {
					out = append(out, k)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
