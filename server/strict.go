package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"gateway/gen"
)

// Strict input (I-JSON, RFC 7493). PostgreSQL refuses U+0000 in text and
// jsonb, and encoding/json silently turns invalid UTF-8 and lone surrogate escapes into U+FFFD
// and keeps the last of duplicate keys. So before kin-openapi decodes anything, the request is
// scanned once: path and header parameters, query values and every string of a JSON body (keys
// included, at any depth). A NUL character, invalid UTF-8, an unpaired surrogate escape or a
// duplicate object key is a 422 naming the field the way schema failures do (firstname,
// body_variables.0, query.search, path.id, header.Idempotency-Key).

// Reasons of strict-input failures.
const (
	reasonNUL       = "must not contain the NUL character (U+0000)"
	reasonUTF8      = "must be valid UTF-8"
	reasonSurrogate = "must not contain an unpaired UTF-16 surrogate escape"
	reasonDuplicate = "duplicate key in a JSON object"
)

// strictInput checks the request's parameters and JSON body. It returns the field errors (nil
// when the request is clean) and the body it read, which the caller puts back for validation;
// err is the body's read error (the body limit's 413, a timeout, a broken connection).
func strictInput(req *http.Request, route *routers.Route, pathParams map[string]string) (gen.FieldErrors, []byte, error) {
	out := gen.FieldErrors{}
	for name, v := range pathParams {
		if r := badText(v); r != "" {
			addReason(out, "path."+name, r)
		}
	}
	// The raw query is decoded here as kin-openapi will decode it; a malformed escape is left
	// to the validator.
	if q, err := parseQuery(req.URL.RawQuery); err == nil {
		for name, vs := range q {
			key := "query." + name
			if r := badText(name); r != "" {
				key = "query"
			}
			for _, v := range append([]string{name}, vs...) {
				if r := badText(v); r != "" {
					addReason(out, key, r)
					break
				}
			}
		}
	}
	if route != nil && route.Operation != nil {
		for _, p := range route.Operation.Parameters {
			if p.Value == nil || p.Value.In != "header" {
				continue
			}
			for _, v := range req.Header.Values(p.Value.Name) {
				if r := badText(v); r != "" {
					addReason(out, "header."+p.Value.Name, r)
				}
			}
		}
	}
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, nil, err
		}
		scanJSON(body, out)
	}
	if len(out) == 0 {
		return nil, body, nil
	}
	return out, body, nil
}

// strictRequest runs strictInput for apiMiddleware: a refused request is the 422 envelope, a
// body that could not be read is its read error; otherwise the body is put back for the
// validator.
func (s *Server) strictRequest(req *http.Request, route *routers.Route, pathParams map[string]string) error {
	fe, body, err := strictInput(req, route, pathParams)
	if err != nil {
		return s.bodyReadFailed(req, err)
	}
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	if len(fe) > 0 {
		return &apiError{Status: http.StatusUnprocessableEntity, Code: gen.ErrorCodeValidationFailed,
			Message: "Invalid request: " + strings.Join(sortedKeys(fe), ", "), Errors: fe}
	}
	return nil
}

// bodyReadFailed handles a request body that could not be read: the body limit's 413 is
// returned as is; anything else (the read deadline passed on a client trickling its body, or
// the client went away) aborts the connection without an answer, since the client is not
// reading one: net/http closes it and logs nothing, so this logs one line.
func (s *Server) bodyReadFailed(req *http.Request, err error) error {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return he
	}
	s.log.InfoContext(req.Context(), "request body not received; connection closed", "path", req.URL.Path,
		"remote", req.RemoteAddr, "error", err.Error())
	panic(http.ErrAbortHandler)
}

// badText returns the reason s is refused, or "" when it is acceptable text.
func badText(s string) string {
	if !utf8.ValidString(s) {
		return reasonUTF8
	}
	if strings.IndexByte(s, 0) >= 0 {
		return reasonNUL
	}
	return ""
}

// parseQuery splits a raw query into decoded names and values without the replacement of
// invalid UTF-8 that would hide it (url.ParseQuery keeps bytes as they are, which is what is
// needed here).
func parseQuery(raw string) (map[string][]string, error) {
	out := map[string][]string{}
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		k, err1 := unescapeQuery(k)
		v, err2 := unescapeQuery(v)
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		out[k] = append(out[k], v)
	}
	return out, nil
}

func unescapeQuery(s string) (string, error) {
	s = strings.ReplaceAll(s, "+", " ")
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errors.New("malformed escape")
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", errors.New("malformed escape")
		}
		b.WriteByte(byte(n))
		i += 2
	}
	return b.String(), nil
}

// scanJSON walks a JSON document token by token and records, by field path, every string (key
// or value) that is not acceptable text and every duplicate key. A syntax error ends the scan
// quietly: the validator reports malformed JSON itself.
func scanJSON(doc []byte, out gen.FieldErrors) {
	type frame struct {
		object bool
		keys   map[string]bool
		key    string // an object's current key
		index  int    // an array's current index
		atKey  bool   // an object expects a key next
	}
	var stack []*frame
	// join names the field at the current position; without the top frame's own segment
	// (own=false) it names the container being filled.
	join := func(own bool) string {
		frames := stack
		if !own && len(frames) > 0 {
			frames = frames[:len(frames)-1]
		}
		parts := make([]string, 0, len(frames))
		for _, f := range frames {
			if f.object {
				parts = append(parts, f.key)
			} else {
				parts = append(parts, strconv.Itoa(f.index))
			}
		}
		if len(parts) == 0 {
			return "body"
		}
		return strings.Join(parts, ".")
	}
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		if top := stack[len(stack)-1]; top.object {
			top.atKey = true
		} else {
			top.index++
		}
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	prev := int64(0)
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		off := dec.InputOffset()
		raw := doc[prev:off]
		prev = off
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				stack = append(stack, &frame{object: t == '{', atKey: t == '{', keys: map[string]bool{}})
			case '}', ']':
				stack = stack[:len(stack)-1]
				valueDone()
			}
			continue
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].atKey {
				top := stack[n-1]
				top.atKey = false
				top.key = t
				if r := rawStringProblem(raw); r != "" {
					// The key is unusable as a name: the object it is in is named instead.
					addReason(out, join(false), r)
					continue
				}
				if top.keys[t] {
					addReason(out, join(true), reasonDuplicate)
				}
				top.keys[t] = true
				continue
			}
			if r := rawStringProblem(raw); r != "" {
				addReason(out, join(true), r)
			}
		}
		valueDone()
	}
}

// addReason adds reason to key's reasons once.
func addReason(out gen.FieldErrors, key, reason string) {
	for _, r := range out[key] {
		if r == reason {
			return
		}
	}
	out[key] = append(out[key], reason)
}

// rawStringProblem inspects the raw bytes of the JSON string that ends raw (the bytes the
// decoder consumed for one token: separators, then the quoted string) and returns why it is
// refused, or "". encoding/json would replace what it finds with U+FFFD, so the raw bytes and
// escapes are read here.
func rawStringProblem(raw []byte) string {
	start := bytes.IndexByte(raw, '"')
	if start < 0 || len(raw) < start+2 {
		return ""
	}
	s := raw[start+1 : len(raw)-1]
	if !utf8.Valid(s) {
		return reasonUTF8
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		i++ // the escaped character
		if i >= len(s) || s[i] != 'u' {
			continue
		}
		r, ok := hex4(s[i+1:])
		if !ok {
			continue
		}
		i += 4 // i is on the last hex digit
		switch {
		case r == 0:
			return reasonNUL
		case r >= 0xD800 && r < 0xDC00:
			// A high surrogate must be followed at once by an escaped low one.
			if i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if lo, ok := hex4(s[i+3:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 6
					continue
				}
			}
			return reasonSurrogate
		case r >= 0xDC00 && r <= 0xDFFF:
			return reasonSurrogate
		}
	}
	return ""
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(n), true
}
