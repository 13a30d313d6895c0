package server

import (
	"bufio"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// specRouteTable is openapi.yaml and the server's route table built from it.
func specRouteTable(t *testing.T) (*openapi3.T, *routeTable) {
	t.Helper()
	spec, err := LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	table, err := newRouteTable(spec)
	if err != nil {
		t.Fatal(err)
	}
	return spec, table
}

// The route table answers every request as kin-openapi's gorillamux router does: the same
// operation (path, method, server, operation), the same escaped path variables, the same
// ErrMethodNotAllowed and ErrPathNotFound. Requests are built from the spec's own paths with
// their variables replaced by awkward segments, cut short, lengthened, with other methods and
// hosts, and from unrelated paths.
func TestRouteTableMatchesGorillamux(t *testing.T) {
	spec, got := specRouteTable(t)
	want, err := gorillamux.NewRouter(spec)
	if err != nil {
		t.Fatal(err)
	}
	segments := []string{"42", "0", "-1", "abc", "template", "examples", "%2F", "a%20b", "%E2%82%AC", "x.y", "%", "",
		"me", "messages", "v1", "9223372036854775808", "%zz", ";", "a;b=c", "{id}", "%7Bid%7D"}
	methods := []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "get", "TRACE", "CONNECT"}
	hosts := []string{"", "http://127.0.0.1:8080", "http://gateway.example.com"}
	rng := rand.New(rand.NewPCG(1, 2))
	var targets []string
	for _, p := range spec.Paths.InMatchingOrder() {
		for range 60 {
			parts := strings.Split("/v1"+p, "/")
			for i, s := range parts {
				if strings.HasPrefix(s, "{") || rng.IntN(8) == 0 && i > 0 {
					parts[i] = segments[rng.IntN(len(segments))]
				}
			}
			switch rng.IntN(6) {
			case 0:
				parts = parts[:len(parts)-1]
			case 1:
				parts = append(parts, segments[rng.IntN(len(segments))])
			case 2:
				parts[1] = []string{"v2", "V1", "", "v1"}[rng.IntN(4)]
			}
			targets = append(targets, strings.Join(parts, "/"))
		}
	}
	targets = append(targets, "/", "/v1", "/v1/", "//v1/me", "/v1//me", "/v1/me/", "/me", "/v1/messages", "/v1/messages/")
	checked := map[string]int{}
	for _, target := range targets {
		for _, method := range methods {
			host := hosts[rng.IntN(len(hosts))]
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			if err := setTarget(req, host+target); err != nil {
				continue // not a request net/http would accept
			}
			req.Method = method
			wr, wv, werr := want.FindRoute(req)
			gr, gv, gerr := got.FindRoute(req)
			if !errors.Is(gerr, werr) && gerr != werr {
				t.Fatalf("%s %s: error %v, gorillamux %v", method, target, gerr, werr)
			}
			switch {
			case werr != nil:
				checked[werr.Error()]++
			case gr.Path != wr.Path || gr.Method != wr.Method || gr.Operation != wr.Operation ||
				gr.Server != wr.Server || gr.PathItem != wr.PathItem || gr.Spec != wr.Spec:
				t.Fatalf("%s %s: route %s %s, gorillamux %s %s", method, target, gr.Method, gr.Path, wr.Method, wr.Path)
			case !reflect.DeepEqual(gv, wv):
				t.Fatalf("%s %s: variables %q, gorillamux %q", method, target, gv, wv)
			default:
				checked["found"]++
			}
		}
	}
	// The comparison covered all three answers, many times each.
	for _, k := range []string{"found", routers.ErrMethodNotAllowed.Error(), routers.ErrPathNotFound.Error()} {
		if checked[k] < 50 {
			t.Errorf("only %d requests answered %q: %v", checked[k], k, checked)
		}
	}
}

// setTarget parses target as a request line would and puts it on req.
func setTarget(req *http.Request, target string) error {
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET " + target + " HTTP/1.1\r\nHost: gateway.test\r\n\r\n")))
	if err != nil {
		return err
	}
	req.URL, req.Host = r.URL, r.Host
	return nil
}
