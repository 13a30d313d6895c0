package refusal

import (
	"reflect"
	"testing"
)

// The errors object keeps each path's reasons in the order they were recorded, lists each
// path once, sorted; Sorted orders the rules the same way; FromMap reads an errors object back.
func TestFieldsAsErrorsObject(t *testing.T) {
	var fs Fields
	fs.Add("header_media", "the template's header is an IMAGE")
	fs.AddButton("button_variables", 1, "button 1 needs a value")
	fs.Add("body_variables", "takes 2 variables")
	fs.Add("header_media", "give exactly one of link and id")
	fs.AddButton("button_variables", 0, "button 0 needs a value")

	want := map[string][]string{
		"header_media":     {"the template's header is an IMAGE", "give exactly one of link and id"},
		"button_variables": {"button 1 needs a value", "button 0 needs a value"},
		"body_variables":   {"takes 2 variables"},
	}
	if got := fs.ByPath(); !reflect.DeepEqual(got, want) {
		t.Fatalf("ByPath = %v, want %v", got, want)
	}
	if got := fs.Paths(); !reflect.DeepEqual(got, []string{"body_variables", "button_variables", "header_media"}) {
		t.Fatalf("Paths = %v", got)
	}
	sorted := fs.Sorted()
	var order []string
	for _, f := range sorted {
		order = append(order, f.Reason)
	}
	if !reflect.DeepEqual(order, []string{"takes 2 variables", "button 1 needs a value", "button 0 needs a value",
		"the template's header is an IMAGE", "give exactly one of link and id"}) {
		t.Fatalf("Sorted reasons %q", order)
	}
	if sorted[1].Button != 1 || sorted[2].Button != 0 || sorted[0].Button != NoButton {
		t.Fatalf("Sorted lost the buttons: %+v", sorted)
	}
	if got := FromMap(want).ByPath(); !reflect.DeepEqual(got, want) {
		t.Fatalf("FromMap(...).ByPath() = %v", got)
	}
	if !fs.Has("body_variables") || fs.Without("header_media").Has("header_media") || !fs.Has("header_media") {
		t.Fatal("Has/Without")
	}
	if Fields(nil).ByPath() != nil {
		t.Fatal("an empty list has no errors object")
	}
}
