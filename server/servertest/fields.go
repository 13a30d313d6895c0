package servertest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// Which optional fields do the responses always carry? Every JSON body the harness validates is
// walked along its response schema; for each object position (operation, status and JSON path,
// with the oneOf member chosen in parentheses) it counts the objects seen and, per optional
// property the schema declares, how many carried it. A property present in every object seen
// should be `required` in openapi.yaml, so that generated clients type it as always there.

type fieldStats struct {
	seen     int
	present  map[string]int
	optional map[string]bool
}

var (
	fieldsMu sync.Mutex
	fields   = map[string]*fieldStats{}
)

func recordFields(op *openapi3.Operation, resp *Response) {
	ref := op.Responses.Status(resp.Status)
	if ref == nil || ref.Value == nil {
		return
	}
	mt := ref.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return
	}
	var v any
	if err := json.Unmarshal(resp.Body, &v); err != nil {
		return
	}
	fieldsMu.Lock()
	defer fieldsMu.Unlock()
	walkFields(fmt.Sprintf("%s %d ", op.OperationID, resp.Status), mt.Schema.Value, v)
}

// flatten merges a schema's allOf parts, and the oneOf/anyOf member the value matches, into one
// set of properties with their required names; member names the chosen oneOf member's schema.
func flatten(s *openapi3.Schema, v any) (props map[string]*openapi3.Schema, required map[string]bool, member string) {
	props, required = map[string]*openapi3.Schema{}, map[string]bool{}
	var visit func(s *openapi3.Schema)
	visit = func(s *openapi3.Schema) {
		for name, p := range s.Properties {
			if p.Value != nil {
				if _, ok := props[name]; !ok || len(p.Value.Properties) > 0 || p.Value.Items != nil {
					props[name] = p.Value
				}
			}
		}
		for _, r := range s.Required {
			required[r] = true
		}
		for _, part := range s.AllOf {
			visit(part.Value)
		}
		for _, alts := range [][]*openapi3.SchemaRef{s.OneOf, s.AnyOf} {
			for _, alt := range alts {
				if alt.Value.VisitJSON(v) == nil {
					member = strings.TrimPrefix(alt.Ref, "#/components/schemas/")
					visit(alt.Value)
					break
				}
			}
		}
	}
	visit(s)
	return props, required, member
}

func walkFields(path string, s *openapi3.Schema, v any) {
	switch x := v.(type) {
	case map[string]any:
		props, required, member := flatten(s, x)
		if member != "" {
			path += "(" + member + ")"
		}
		st := fields[path]
		if st == nil {
			st = &fieldStats{present: map[string]int{}, optional: map[string]bool{}}
			fields[path] = st
		}
		st.seen++
		for name, ps := range props {
			if !required[name] {
				st.optional[name] = true
			}
			if val, ok := x[name]; ok {
				if !required[name] {
					st.present[name]++
				}
				sep := "."
				if strings.HasSuffix(path, " ") {
					sep = ""
				}
				walkFields(path+sep+name, ps, val)
			}
		}
	case []any:
		if s.Items != nil && s.Items.Value != nil {
			for _, item := range x {
				walkFields(path+"[]", s.Items.Value, item)
			}
		}
	}
}

// AlwaysPresentOptional lists, as "operation status path.field", the optional fields that
// every response the tests received carried at that position.
func AlwaysPresentOptional() []string {
	fieldsMu.Lock()
	defer fieldsMu.Unlock()
	var out []string
	for path, st := range fields {
		for name := range st.optional {
			if st.present[name] == st.seen {
				sep := "."
				if strings.HasSuffix(path, " ") {
					sep = ""
				}
				out = append(out, path+sep+name)
			}
		}
	}
	sort.Strings(out)
	return out
}
