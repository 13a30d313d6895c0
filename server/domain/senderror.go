package domain

import (
	"errors"
	"strings"
	"time"

	"gateway/server/refusal"
)

// ErrorKind is what kind of refusal or failure a SendError is; each UI turns it into its own
// answer (the API: server/errors.go, one status per kind; the dashboard: its send page).
type ErrorKind int

const (
	// KindInvalid: the request breaks a rule; Fields names each broken rule by the API's path.
	KindInvalid ErrorKind = iota + 1
	// KindNotFound: what the request names does not exist (a template).
	KindNotFound
	// KindConflict: the request cannot be done in the account's present state (no number
	// connected, a blocked contact, a form submitted twice).
	KindConflict
	// KindUpstream: the platform refused the send, or a test send through the sandbox failed.
	KindUpstream
	// KindOutcomeUnknown: the send may have reached the platform; MessageID is its message,
	// which the platform's status reports settle. It is never sent again for the same key.
	KindOutcomeUnknown
)

// The API's error codes a send answers with (openapi.yaml's ErrorCode; a test in package
// server holds them equal to the generated ones).
const (
	CodeValidationFailed    = "validation_failed"
	CodeTemplateNotFound    = "template_not_found"
	CodeNumberNotConnected  = "number_not_connected"
	CodeContactBlocked      = "contact_blocked"
	CodePlatformRejected    = "platform_rejected"
	CodePlatformUnavailable = "platform_unavailable"
	CodeIdempotencyConflict = "idempotency_conflict"
	CodeWindowClosed        = "window_closed"
)

// SendError is a send refused or failed in a way its caller can act on: the one error
// vocabulary of the send for the API and the dashboard. Any other error of a send is
// unexpected (the API answers 500).
type SendError struct {
	Kind    ErrorKind
	Code    string // the API's error code
	Message string
	// Fields are the broken rules of a KindInvalid refusal, by the API's field paths.
	Fields refusal.Fields
	// MessageID is the message a KindOutcomeUnknown send recorded.
	MessageID int64
	// RetryAfter, when not zero, is how long the caller should wait before trying again.
	RetryAfter time.Duration
	// WindowClosedAt is when the customer's service window closed, on a window_closed
	// refusal (nil when the customer never wrote or the platform said so).
	WindowClosedAt *time.Time
	cause          error
}

func (e *SendError) Error() string {
	if e.cause != nil {
		return e.Message + ": " + e.cause.Error()
	}
	return e.Message
}

func (e *SendError) Unwrap() error { return e.cause }

// AsSendError returns err's SendError, or nil when err is not one.
func AsSendError(err error) *SendError {
	var se *SendError
	if errors.As(err, &se) {
		return se
	}
	return nil
}

// Invalid is a KindInvalid refusal listing the broken rules fe.
func Invalid(fe refusal.Fields) *SendError {
	return &SendError{Kind: KindInvalid, Code: CodeValidationFailed,
		Message: "Invalid request: " + strings.Join(fe.Paths(), ", "), Fields: fe}
}

func templateNotFound(msg string) *SendError {
	return &SendError{Kind: KindNotFound, Code: CodeTemplateNotFound, Message: msg}
}

// errNotConnected is the refusal of a live send from an account without a connected number.
func errNotConnected() *SendError {
	return &SendError{Kind: KindConflict, Code: CodeNumberNotConnected, Message: "No number is connected to this account"}
}

// errBlocked is the refusal of a send to a contact who opted out.
func errBlocked() *SendError {
	return &SendError{Kind: KindConflict, Code: CodeContactBlocked, Message: "The contact has opted out and cannot be messaged"}
}

// errWindowClosed is the refusal of an answer outside the customer's service window (our
// record of it, or the platform's 131047); closedAt is when it closed, nil when unknown.
func errWindowClosed(closedAt *time.Time, cause error) *SendError {
	return &SendError{Kind: KindConflict, Code: CodeWindowClosed, Message: WindowClosedMessage(closedAt),
		WindowClosedAt: closedAt, cause: cause}
}
