package server_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/getkin/kin-openapi/routers/gorillamux"

	"gateway/server"
	"gateway/server/servertest"
)

// The spec lists the relative /v1 first and an absolute http://{host}/v1 second. The route
// lookup (kin-openapi's gorillamux router, which the server's route table matches exactly:
// TestRouteTableMatchesGorillamux) still finds every operation whatever Host the request names,
// and still refuses paths outside /v1.
func TestServersRouting(t *testing.T) {
	t.Parallel()
	spec, err := server.LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Servers) != 2 || spec.Servers[0].URL != "/v1" || spec.Servers[1].Variables["host"] == nil ||
		spec.Servers[1].Variables["host"].Default != "127.0.0.1:8080" {
		t.Fatalf("servers: want /v1 then http://{host}/v1 with host defaulting to 127.0.0.1:8080, got %+v", spec.Servers)
	}
	router, err := gorillamux.NewRouter(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"http://127.0.0.1:8080/v1/me", "http://gateway.example.com/v1/me", "http://10.1.2.3:9999/v1/me", "/v1/me"} {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		route, _, err := router.FindRoute(req)
		if err != nil || route.Operation.OperationID != "getMe" {
			t.Errorf("%s: route %v, %v", target, route, err)
		}
	}
	for _, target := range []string{"http://127.0.0.1:8080/me", "http://127.0.0.1:8080/v2/me"} {
		if _, _, err := router.FindRoute(httptest.NewRequest(http.MethodGet, target, nil)); err == nil {
			t.Errorf("%s: routed, want no route", target)
		}
	}

	// Through the running server, with a Host header that is neither the listener's address nor
	// the variable's default.
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	req, err := http.NewRequest(http.MethodGet, env.URL+"/v1/me", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "api.gateway.example"
	req.Header.Set("Authorization", "Bearer "+a.Test)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/me with Host api.gateway.example: %d", resp.StatusCode)
	}
}
