package servertest

import (
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// The finder reports an optional field that every object carried, through allOf and arrays, and
// not one that some object lacked or one that is required.
func TestAlwaysPresentOptional(t *testing.T) {
	doc := []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{
	  "Item":{"type":"object","required":["id"],"properties":{"id":{"type":"integer"},"note":{"type":"string"},"tag":{"type":"string"}}},
	  "Env":{"allOf":[{"type":"object","properties":{"ok":{"type":"boolean"}}},
	    {"type":"object","required":["data"],"properties":{"data":{"type":"array","items":{"$ref":"#/components/schemas/Item"}}}}]}}}}`)
	spec, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		t.Fatal(err)
	}
	fieldsMu.Lock()
	saved := fields
	fields = map[string]*fieldStats{}
	walkFields("op 200 ", spec.Components.Schemas["Env"].Value, map[string]any{"ok": true, "data": []any{
		map[string]any{"id": 1.0, "note": "a", "tag": "x"},
		map[string]any{"id": 2.0, "note": ""},
	}})
	fieldsMu.Unlock()
	got := AlwaysPresentOptional()
	fieldsMu.Lock()
	fields = saved
	fieldsMu.Unlock()
	if want := []string{"op 200 data[].note", "op 200 ok"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
