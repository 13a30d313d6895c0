package dashboard

import (
	"errors"
	"net/http"
)

// formBodyLimit bounds the body of every dashboard request but a file upload's: a form of
// text never needs more (the API's own bound is the same 1 MiB).
const formBodyLimit = 1 << 20

// boundedBody bounds each request's body before next reads it: by formBodyLimit, unless mux
// routes it to an upload (d.uploads), whose handler bounds it by what it takes. The dashboard
// bounds its bodies itself, so that an oversized one gets its pages, not the API's.
func (d *Dashboard) boundedBody(mux *http.ServeMux, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); !d.uploads[pattern] {
			r.Body = http.MaxBytesReader(w, r.Body, formBodyLimit)
		}
		next.ServeHTTP(w, r)
	})
}

// tooLarge reports whether err is a body read past its bound (http.MaxBytesReader).
func tooLarge(err error) bool {
	var mb *http.MaxBytesError
	return errors.As(err, &mb)
}
