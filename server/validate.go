package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"gateway/gen"
	"gateway/store"
)

// apiRequest is what apiMiddleware learned about a request, put on its context as one value.
type apiRequest struct {
	principal Principal
	ahead     *store.Message // the polled message, read with the key (readahead.go); nil if none
}

type apiRequestKey struct{}

// apiRequestFrom returns what apiMiddleware put on ctx; ok is false outside the API.
func apiRequestFrom(ctx context.Context) (r *apiRequest, ok bool) {
	r, ok = ctx.Value(apiRequestKey{}).(*apiRequest)
	return r, ok
}

// apiMiddleware guards every /v1 operation, in order: route lookup on the spec (404/405),
// authentication (401/403), the demo key's rate limit (429), then request validation against
// the spec (422). On success the request context carries the principal and, for a poll of a
// message, the message read with the key (readahead.go). Validation puts the body it read
// back on the same request (kin-openapi's KeepValidatedValue), the one the handler gets.
func (s *Server) apiMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		route, pathParams, err := s.router.FindRoute(req)
		if err != nil {
			if errors.Is(err, routers.ErrMethodNotAllowed) {
				c.Response().Header().Set("Allow", s.allowedMethods(req))
				return echo.NewHTTPError(http.StatusMethodNotAllowed)
			}
			return echo.NewHTTPError(http.StatusNotFound)
		}
		ctx := req.Context()
		p, ahead, err := s.authenticate(ctx, req, aheadMessageID(route, pathParams))
		if err != nil {
			return err
		}
		if p.limited {
			if err := s.demoLimit(c, route); err != nil {
				return err
			}
		}
		ctx = context.WithValue(ctx, apiRequestKey{}, &apiRequest{principal: p, ahead: ahead})
		// From here on the request's log lines carry the account, failures included.
		req = req.WithContext(ctx)
		c.SetRequest(req)
		streamed := streamedBody(route)
		if streamed {
			if err := s.streamedRequest(req, route, pathParams); err != nil {
				return err
			}
		} else if err := s.strictRequest(req, route, pathParams); err != nil {
			return err
		}
		in := &openapi3filter.RequestValidationInput{
			Request:    req,
			PathParams: pathParams,
			Route:      route,
			Options: &openapi3filter.Options{
				MultiError:         true,
				KeepValidatedValue: true,
				ExcludeRequestBody: streamed,
				AuthenticationFunc: func(_ context.Context, ai *openapi3filter.AuthenticationInput) error {
					if ai.SecuritySchemeName != p.Scheme {
						return errors.New("credential sent in another form")
					}
					return nil
				},
				SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.DisableSchemaErrorDetails()},
			},
		}
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			// A body cut off by the body limit (one sent without Content-Length) is a 413, not a
			// malformed body.
			var he *echo.HTTPError
			if errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge {
				return he
			}
			fe := fieldErrors(err)
			if len(fe) == 0 {
				return err
			}
			return &apiError{Status: http.StatusUnprocessableEntity, Code: gen.ErrorCodeValidationFailed,
				Message: "Invalid request: " + strings.Join(sortedKeys(fe), ", "), Errors: fe, cause: err}
		}
		return next(c)
	}
}

// allowedMethods lists the methods the spec defines for the request's path, for the Allow header
// a 405 must carry.
func (s *Server) allowedMethods(req *http.Request) string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := req.Clone(req.Context())
		probe.Method = m
		if _, _, err := s.router.FindRoute(probe); err == nil {
			allow = append(allow, m)
		}
	}
	return strings.Join(allow, ", ")
}

// fieldErrors flattens a validation error into reasons keyed by field path: body fields by their
// JSON path joined with dots (body_variables.0), parameters as <in>.<name> (query.limit,
// path.id, header.Idempotency-Key, as openapi.yaml documents), anything about the body as a
// whole under "body". Security errors are ignored (authentication ran first).
func fieldErrors(err error) gen.FieldErrors {
	out := gen.FieldErrors{}
	var walk func(err error, param string)
	walk = func(err error, param string) {
		switch e := err.(type) {
		case openapi3.MultiError:
			for _, x := range e {
				walk(x, param)
			}
		case *openapi3filter.SecurityRequirementsError:
		case *openapi3filter.RequestError:
			if e.Parameter != nil {
				name := e.Parameter.In + "." + e.Parameter.Name
				if e.Err == nil {
					out[name] = append(out[name], e.Reason)
					return
				}
				var se *openapi3.SchemaError
				if errors.As(e.Err, &se) || isMulti(e.Err) {
					walk(e.Err, name)
					return
				}
				var pe *openapi3filter.ParseError
				if errors.As(e.Err, &pe) {
					out[name] = append(out[name], "must be "+describeKind(pe))
					return
				}
				out[name] = append(out[name], e.Err.Error())
				return
			}
			if e.Err == nil {
				out["body"] = append(out["body"], e.Reason)
				return
			}
			var pe *openapi3filter.ParseError
			if errors.As(e.Err, &pe) {
				out["body"] = append(out["body"], "malformed JSON: "+pe.Error())
				return
			}
			var se *openapi3.SchemaError
			if errors.As(e.Err, &se) || isMulti(e.Err) {
				walk(e.Err, "")
				return
			}
			out["body"] = append(out["body"], e.Err.Error())
		case *openapi3.SchemaError:
			key := strings.Join(e.JSONPointer(), ".")
			reason := e.Reason
			// A field whose schema says what a valid value looks like (x-invalid-message) gets
			// that sentence instead of the raw pattern or length rule.
			if msg, ok := e.Schema.Extensions["x-invalid-message"].(string); ok && e.SchemaField != "type" {
				reason = msg
			}
			if key == "" && strings.HasPrefix(reason, "property \"") && strings.HasSuffix(reason, "\" is unsupported") {
				key = strings.TrimSuffix(strings.TrimPrefix(reason, "property \""), "\" is unsupported")
				reason = "unknown field"
			}
			switch {
			case param != "" && key != "":
				key = param + "." + key
			case param != "":
				key = param
			case key == "":
				key = "body"
			}
			out[key] = append(out[key], reason)
		default:
			if err != nil {
				out["body"] = append(out["body"], err.Error())
			}
		}
	}
	walk(err, "")
	return out
}

func isMulti(err error) bool {
	_, ok := err.(openapi3.MultiError)
	return ok
}

func describeKind(pe *openapi3filter.ParseError) string {
	if pe.Kind == openapi3filter.KindInvalidFormat {
		return fmt.Sprintf("a valid value (%s)", pe.Reason)
	}
	return "of the documented type: " + pe.Reason
}

func sortedKeys(m gen.FieldErrors) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
