// Package refusal is the vocabulary of a refused request that the API and the dashboard share.
// Each broken rule is a Field: the path of the field it is about, exactly as the API's 422
// "errors" object keys it (a body field's JSON path joined with dots, such as body_variables.1,
// header_media.link or button_variables.0.value), and the reason in the words the API answers
// with. The code that checks a rule produces its Field once; the API renders the list as its
// errors object (ByPath) and the dashboard shows each reason next to the form input for its
// path, so neither reads the other's text.
//
// The package imports nothing of ours: it is data, not behaviour.
package refusal

import (
	"slices"
	"strings"
)

// NoButton is Field.Button of a reason about no particular template button.
const NoButton = -1

// Field is one broken rule.
type Field struct {
	Path   string
	Reason string
	// Button is the template button the reason is about, by its index among the template's
	// buttons, or NoButton. The path alone does not say it: a button_variables entry is
	// named by its position in the request's list, and a button missing its value has no
	// entry at all (its reason is about button_variables as a whole).
	Button int
}

// Fields are the broken rules of one request, in the order they were checked.
type Fields []Field

// One is a single broken rule about path.
func One(path, reason string) Fields {
	return Fields{{Path: path, Reason: reason, Button: NoButton}}
}

// Add records a broken rule about path.
func (fs *Fields) Add(path, reason string) {
	*fs = append(*fs, Field{Path: path, Reason: reason, Button: NoButton})
}

// AddButton records a broken rule about path that concerns the template's button with that
// index.
func (fs *Fields) AddButton(path string, button int, reason string) {
	*fs = append(*fs, Field{Path: path, Reason: reason, Button: button})
}

// Has reports whether a rule about path is recorded.
func (fs Fields) Has(path string) bool {
	return slices.ContainsFunc(fs, func(f Field) bool { return f.Path == path })
}

// Without is fs without the rules about path.
func (fs Fields) Without(path string) Fields {
	return slices.DeleteFunc(slices.Clone(fs), func(f Field) bool { return f.Path == path })
}

// ByPath is the reasons keyed by path, each path's in the order they were recorded: the API's
// errors object. It is nil when fs is empty.
func (fs Fields) ByPath() map[string][]string {
	if len(fs) == 0 {
		return nil
	}
	m := make(map[string][]string, len(fs))
	for _, f := range fs {
		m[f.Path] = append(m[f.Path], f.Reason)
	}
	return m
}

// Paths is the distinct paths of fs, sorted.
func (fs Fields) Paths() []string {
	ps := make([]string, 0, len(fs))
	for _, f := range fs {
		ps = append(ps, f.Path)
	}
	slices.Sort(ps)
	return slices.Compact(ps)
}

// Sorted is fs ordered by path, the reasons of each path in the order they were recorded: the
// order the API's errors object lists them in.
func (fs Fields) Sorted() Fields {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, func(a, b Field) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// FromMap is the rules of an errors object built by other means (the schema validator, the
// strict input checks), by path, about no particular button.
func FromMap(m map[string][]string) Fields {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var fs Fields
	for _, k := range keys {
		for _, r := range m[k] {
			fs.Add(k, r)
		}
	}
	return fs
}
