package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
)

// routeTable finds a request's operation in openapi.yaml exactly as kin-openapi's gorillamux
// router does (the spec's paths in InMatchingOrder under the first server's base, matched
// against the escaped path, each {variable} one non-empty segment, kept escaped; a matched
// path without the method is ErrMethodNotAllowed) without its per-request regular expressions
// and route copies: the routes are built once and shared, read-only. TestRouteTableMatchesGorillamux
// compares the two on generated requests.
type routeTable struct {
	paths []tablePath
}

// tablePath is one spec path: its segments under the base ("" where a variable stands) and
// its routes by method.
type tablePath struct {
	segments []string
	vars     []string // the variable of each segment, "" for a literal one
	methods  map[string]*routers.Route
}

// newRouteTable builds the table. It fails when the first server's URL is not a plain path
// (gorillamux would then match hosts or schemes, which the table does not) or a path
// template puts a variable inside a segment.
func newRouteTable(spec *openapi3.T) (*routeTable, error) {
	if len(spec.Servers) == 0 || !strings.HasPrefix(spec.Servers[0].URL, "/") || strings.ContainsAny(spec.Servers[0].URL, "{}") {
		return nil, fmt.Errorf("route table: the first server must be a plain path, not %q", serverURL(spec))
	}
	base := strings.TrimSuffix(spec.Servers[0].URL, "/")
	t := &routeTable{}
	for _, p := range spec.Paths.InMatchingOrder() {
		item := spec.Paths.Value(p)
		tp := tablePath{methods: map[string]*routers.Route{}}
		for _, seg := range strings.Split(base+p, "/") {
			name, isVar := strings.CutPrefix(seg, "{")
			if isVar {
				name, isVar = strings.CutSuffix(name, "}")
			}
			if (isVar && strings.ContainsAny(name, "{}:")) || (!isVar && strings.ContainsAny(seg, "{}")) {
				return nil, fmt.Errorf("route table: path %q: a variable must be a whole segment", p)
			}
			if isVar {
				tp.segments, tp.vars = append(tp.segments, ""), append(tp.vars, name)
			} else {
				tp.segments, tp.vars = append(tp.segments, seg), append(tp.vars, "")
			}
		}
		for method, op := range item.Operations() {
			tp.methods[method] = &routers.Route{Spec: spec, Server: spec.Servers[0], Path: p, PathItem: item,
				Method: method, Operation: op}
		}
		t.paths = append(t.paths, tp)
	}
	return t, nil
}

func serverURL(spec *openapi3.T) string {
	if len(spec.Servers) == 0 {
		return ""
	}
	return spec.Servers[0].URL
}

// FindRoute returns the request's route and its path variables (still escaped), or
// routers.ErrPathNotFound, or routers.ErrMethodNotAllowed when the path is known and the
// method is not. The route is shared: callers must not change it.
func (t *routeTable) FindRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	path := req.URL.EscapedPath()
	n := strings.Count(path, "/") + 1
	for i := range t.paths {
		tp := &t.paths[i]
		if len(tp.segments) != n || !tp.matches(path) {
			continue
		}
		route := tp.methods[req.Method]
		if route == nil {
			return nil, nil, routers.ErrMethodNotAllowed
		}
		vars := make(map[string]string, len(tp.vars))
		rest := path
		for j := range tp.segments {
			seg, after, _ := strings.Cut(rest, "/")
			rest = after
			if tp.vars[j] != "" {
				vars[tp.vars[j]] = seg
			}
		}
		return route, vars, nil
	}
	return nil, nil, routers.ErrPathNotFound
}

// matches reports whether path (with as many segments as tp) fits tp: every literal segment
// equal, every variable segment non-empty.
func (tp *tablePath) matches(path string) bool {
	rest := path
	for j, want := range tp.segments {
		seg, after, _ := strings.Cut(rest, "/")
		rest = after
		if tp.vars[j] == "" && seg != want || tp.vars[j] != "" && seg == "" {
			return false
		}
	}
	return true
}

var _ routers.Router = (*routeTable)(nil)
