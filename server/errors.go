package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"gateway/gen"
	"gateway/server/domain"
	"gateway/server/refusal"
)

// apiError is a failure that renders as the error envelope with its status and code. Middleware
// returns it; the send returns a *domain.SendError, which fromSendError turns into one.
type apiError struct {
	Status  int
	Code    gen.ErrorCode
	Message string
	Errors  gen.FieldErrors
	Header  http.Header
	// MessageID and OutcomeUnknown mark a send whose outcome is unknown (502, or 409 on a retry):
	// the message it recorded, which the platform may have accepted.
	MessageID      int64
	OutcomeUnknown bool
	// WindowClosedAt is when the customer's service window closed, on a 409 window_closed.
	WindowClosedAt *time.Time
	cause          error
}

func (e *apiError) Error() string {
	if e.cause != nil {
		return e.Message + ": " + e.cause.Error()
	}
	return e.Message
}

func (e *apiError) Unwrap() error { return e.cause }

// invalid is a 422 naming the offending fields: the API renders fe as its errors object.
func invalid(fe refusal.Fields) *apiError {
	return &apiError{Status: http.StatusUnprocessableEntity, Code: gen.ErrorCodeValidationFailed,
		Message: "Invalid request: " + strings.Join(fe.Paths(), ", "), Errors: fe.ByPath()}
}

// sendStatus is the HTTP status of each kind of the domain's send errors.
var sendStatus = map[domain.ErrorKind]int{
	domain.KindInvalid:        http.StatusUnprocessableEntity,
	domain.KindNotFound:       http.StatusNotFound,
	domain.KindConflict:       http.StatusConflict,
	domain.KindUpstream:       http.StatusBadGateway,
	domain.KindOutcomeUnknown: http.StatusBadGateway,
}

// fromSendError is the one mapping of the domain's send errors to the API's: the status of
// their kind, their code and message, the broken rules as the errors object, the message of
// an unknown outcome, and Retry-After when the error has one.
func fromSendError(se *domain.SendError) *apiError {
	status, ok := sendStatus[se.Kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	ae := &apiError{Status: status, Code: gen.ErrorCode(se.Code), Message: se.Message, cause: se.Unwrap()}
	if se.Kind == domain.KindInvalid {
		ae.Errors = se.Fields.ByPath()
	}
	ae.WindowClosedAt = se.WindowClosedAt
	if se.Kind == domain.KindOutcomeUnknown {
		ae.MessageID, ae.OutcomeUnknown = se.MessageID, true
	}
	if se.RetryAfter > 0 {
		ae.Header = http.Header{"Retry-After": {strconv.Itoa(int((se.RetryAfter + time.Second - 1) / time.Second))}}
	}
	return ae
}

func newAPIError(status int, code gen.ErrorCode, msg string) *apiError {
	return &apiError{Status: status, Code: code, Message: msg}
}

// errorEnvelope builds the body every failure carries.
func errorEnvelope(code gen.ErrorCode, msg string) gen.ErrorEnvelope {
	return gen.ErrorEnvelope{Success: false, Message: msg, Code: code}
}

// renderError is Echo's HTTPErrorHandler: the one place that turns any error — from Echo's
// router, the body limit, the validator, a handler, or a recovered panic — into the envelope.
// Unexpected errors become a generic 500 whose cause is logged with the request id.
func (s *Server) renderError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	ae := s.classify(err, c)
	s.logRefusal(c, ae)
	for k, vs := range ae.Header {
		for _, v := range vs {
			c.Response().Header().Add(k, v)
		}
	}
	env := errorEnvelope(ae.Code, ae.Message)
	if ae.OutcomeUnknown {
		env.MessageId, env.OutcomeUnknown = &ae.MessageID, &ae.OutcomeUnknown
	}
	if ae.WindowClosedAt != nil {
		at := ae.WindowClosedAt.UTC()
		env.WindowClosedAt = &at
	}
	var body any = env
	if ae.Errors != nil {
		body = gen.ValidationErrorEnvelope{Success: false, Message: ae.Message, Code: ae.Code, Errors: ae.Errors}
	}
	writeJSON(c, ae.Status, body)
}

func (s *Server) classify(err error, c echo.Context) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	if se := domain.AsSendError(err); se != nil {
		return fromSendError(se)
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return newAPIError(http.StatusNotFound, gen.ErrorCodeNotFound, "No such endpoint: "+c.Request().Method+" "+c.Request().URL.Path)
		case http.StatusMethodNotAllowed:
			return newAPIError(http.StatusMethodNotAllowed, gen.ErrorCodeMethodNotAllowed, "Method "+c.Request().Method+" is not allowed on "+c.Request().URL.Path)
		case http.StatusRequestEntityTooLarge:
			return newAPIError(http.StatusRequestEntityTooLarge, gen.ErrorCodePayloadTooLarge, fmt.Sprintf("Request body is larger than %d MiB", bodyLimitOf(c)>>20))
		case http.StatusBadRequest, http.StatusUnsupportedMediaType:
			// Echo's binder and the generated path-parameter parsing; the validator normally
			// catches these first.
			return &apiError{Status: http.StatusUnprocessableEntity, Code: gen.ErrorCodeValidationFailed,
				Message: "Invalid request", Errors: gen.FieldErrors{"body": {messageOf(he)}}}
		}
	}
	s.log.ErrorContext(c.Request().Context(), "request failed",
		"method", c.Request().Method, "path", c.Request().URL.Path, "error", err.Error())
	return newAPIError(http.StatusInternalServerError, gen.ErrorCodeInternalError, "Internal server error; quote the X-Request-Id header to support")
}

func messageOf(he *echo.HTTPError) string {
	if m, ok := he.Message.(string); ok {
		return m
	}
	return http.StatusText(he.Code)
}

// writeJSON writes v as the response body.
func writeJSON(c echo.Context, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"success":false,"message":"Internal server error","code":"internal_error"}`)
		status = http.StatusInternalServerError
	}
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	c.Response().WriteHeader(status)
	c.Response().Write(b)
}

// logRefusal records a refused call of an authenticated key in its workspace's API error log
// (the dashboard's "API errors" page): method, path without the query, status, code, key. Calls
// refused before a key was read are not a workspace's, and 429s are left out so that a flood the
// rate limit stops does not turn into writes. A failure to record is logged, never answered.
func (s *Server) logRefusal(c echo.Context, ae *apiError) {
	r, ok := apiRequestFrom(c.Request().Context())
	if !ok || s.store == nil || r.principal.AccountID == 0 || ae.Status < 400 || ae.Status == http.StatusTooManyRequests {
		return
	}
	req := c.Request()
	if err := s.store.RecordAPIError(req.Context(), r.principal.AccountID, r.principal.KeyID, req.Method, req.URL.Path, ae.Status, string(ae.Code)); err != nil {
		s.log.WarnContext(req.Context(), "api error log", "error", err.Error())
	}
}
