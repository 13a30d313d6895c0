package domain

import (
	"errors"
	"fmt"
	"time"

	"gateway/store"
)

// PlatformOutcome is what a failed platform call came to.
type PlatformOutcome int

const (
	// PlatformRejected: the platform answered with an error (Code, HTTPStatus, Title, Reason).
	PlatformRejected PlatformOutcome = iota + 1
	// PlatformBadArgument: our own client refused to make the call; nothing was sent.
	PlatformBadArgument
	// PlatformUnreadable: the platform answered, but not readably; the outcome is unknown.
	PlatformUnreadable
	// PlatformTimeout: the platform did not answer in time; the outcome is unknown.
	PlatformTimeout
	// PlatformUnreachable: the platform could not be reached; the outcome is unknown.
	PlatformUnreachable
)

// PlatformError is a failed platform call as the Messenger reports it.
type PlatformError struct {
	Outcome    PlatformOutcome
	Code       int    // the platform's error code (PlatformRejected; 0 when the answer was no Graph error)
	HTTPStatus int    // the answer's HTTP status (PlatformRejected)
	Title      string // the error's title, for the message row
	Reason     string // the error's cause for the API's users: its details, else its message
	Details    string // the error's details, for the message row
	Cause      error  // the client's error, for logs
}

func (e *PlatformError) Error() string {
	if e.Cause != nil {
		return e.Cause.Error()
	}
	return fmt.Sprintf("platform error %d: %s", e.Code, e.Reason)
}

func (e *PlatformError) Unwrap() error { return e.Cause }

// platformFailure maps a failed platform call to what the message row records and the
// KindUpstream error the caller sees; fail is nil for errors that are ours (an argument the
// client refused).
func platformFailure(err error, timeout time.Duration) (store.SendFailure, *SendError) {
	var pe *PlatformError
	if !errors.As(err, &pe) {
		// A failure the Messenger did not classify: the platform could not be reached.
		pe = &PlatformError{Outcome: PlatformUnreachable, Cause: err}
	}
	unavailable := func(msg string) *SendError {
		return &SendError{Kind: KindUpstream, Code: CodePlatformUnavailable, Message: msg}
	}
	switch pe.Outcome {
	case PlatformRejected:
		code := pe.Code
		f := store.SendFailure{Code: &code, Title: pe.Title, Details: pe.Details}
		where := fmt.Sprintf("code %d", pe.Code)
		if pe.Code == 0 {
			where = fmt.Sprintf("HTTP %d", pe.HTTPStatus)
		}
		return f, &SendError{Kind: KindUpstream, Code: CodePlatformRejected,
			Message: fmt.Sprintf("The platform rejected the send: %s (%s)", pe.Reason, where)}
	case PlatformBadArgument:
		return store.SendFailure{Title: "Not sent", Details: pe.Error()}, nil
	case PlatformUnreadable:
		return store.SendFailure{Title: "Platform answer unreadable", Details: "platform answered with an unreadable body; the outcome is unknown"},
			unavailable("The messaging platform's answer could not be read; the message may or may not have been sent")
	case PlatformTimeout:
		return store.SendFailure{Title: "Platform unavailable", Details: "platform did not answer; the outcome is unknown"},
			unavailable("The messaging platform did not answer within " + seconds(timeout) + "; the message may or may not have been sent")
	default:
		return store.SendFailure{Title: "Platform unavailable", Details: "platform could not be reached; the outcome is unknown"},
			unavailable("The messaging platform could not be reached; the message may or may not have been sent")
	}
}

// seconds renders a timeout for people: "10 seconds", "1 second", "250ms".
func seconds(d time.Duration) string {
	switch {
	case d == time.Second:
		return "1 second"
	case d%time.Second == 0:
		return fmt.Sprintf("%d seconds", d/time.Second)
	}
	return d.String()
}
