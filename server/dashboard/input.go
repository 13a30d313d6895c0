package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"gateway/store"
)

// storableInput refuses, before any handler runs, a request whose query or form holds text
// PostgreSQL cannot store: a NUL character or invalid UTF-8 (the rule the API applies to such
// input). The answer is a 400 page naming the field; every dashboard form and query goes
// through here, so no handler meets such text.
func (d *Dashboard) storableInput(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// ParseForm keeps the bytes as sent (no replacement of invalid UTF-8); a body it
		// cannot parse leaves the form empty, as the handlers would find it; one past its
		// bound (boundedBody) is refused.
		if err := r.ParseForm(); tooLarge(err) {
			d.render(w, r, http.StatusRequestEntityTooLarge, "refused", page{Title: "Not accepted",
				Error: "The form is larger than 1 MiB, more than any of this dashboard's forms holds. Go back and shorten it.", Data: r.URL.Path})
			return
		}
		if field := unstorableField(r.Form); field != "" {
			d.badRequest(w, r, nil, fmt.Sprintf("The field “%s” contains a NUL character or invalid UTF-8, which cannot be stored. Go back and correct it.",
				strings.ToValidUTF8(strings.ReplaceAll(field, "\x00", ""), "")))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// unstorableField returns the first field (by name, in order) whose name or one of whose values
// is not storable text, or "".
func unstorableField(v url.Values) string {
	var bad []string
	for k, vs := range v {
		ok := storable(k)
		for _, s := range vs {
			ok = ok && storable(s)
		}
		if !ok {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return slices.Min(bad)
}

// storable reports whether PostgreSQL can store s as text.
func storable(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }

// badRequest answers 400 with a page that says what was wrong (msg) and links back to the
// page's path.
func (d *Dashboard) badRequest(w http.ResponseWriter, r *http.Request, s *store.Session, msg string) {
	d.render(w, r, http.StatusBadRequest, "refused", page{Title: "Not accepted", Session: s, Error: msg, Data: r.URL.Path})
}

// badPageLink answers a page link whose cursor (the query field) is not one a page made.
func (d *Dashboard) badPageLink(w http.ResponseWriter, r *http.Request, s *store.Session, field string) {
	d.badRequest(w, r, s, fmt.Sprintf("This page link is not valid (its “%s” value is not one this page made). Start again from the first page.", field))
}
