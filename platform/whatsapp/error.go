package whatsapp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Error is a non-2xx answer from the platform, decoded from the Graph error shape
// {"error":{message,type,code,error_subcode,error_user_title,error_user_msg,
// is_transient,error_data:{details},fbtrace_id}}. A body that is not a Graph error
// still yields an Error, with Code 0 and Message "platform answered HTTP <n>".
type Error struct {
	HTTPStatus  int    // HTTP status of the answer
	Code        int    // error.code; branch on this (0 when the body was not a Graph error)
	Subcode     int    // error.error_subcode; deprecated by Meta, often 0
	Type        string // error.type, e.g. "OAuthException"
	Message     string // error.message, e.g. "(#132001) Template name does not exist in the translation"
	Title       string // error.error_user_title
	UserMessage string // error.error_user_msg
	Details     string // error.error_data.details, or error_data itself when it is a string
	FBTraceID   string // error.fbtrace_id, else the x-fb-trace-id header
	Transient   bool   // error.is_transient
}

// Error returns a one-line description with the HTTP status, code, subcode,
// message and details. It never returns an empty string.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "whatsapp: platform error (HTTP %d", e.HTTPStatus)
	if e.Code != 0 {
		fmt.Fprintf(&b, ", code %d", e.Code)
	}
	if e.Subcode != 0 {
		fmt.Fprintf(&b, ", subcode %d", e.Subcode)
	}
	b.WriteString("): ")
	msg := e.Message
	if msg == "" {
		msg = fmt.Sprintf("platform answered HTTP %d", e.HTTPStatus)
	}
	b.WriteString(msg)
	if e.Details != "" && e.Details != msg {
		b.WriteString(": ")
		b.WriteString(e.Details)
	}
	return b.String()
}

// Reason returns the human-readable cause to show our API users: Details when
// present, else Message, else "platform answered HTTP <n>". It is never empty.
func (e *Error) Reason() string {
	switch {
	case e.Details != "":
		return e.Details
	case e.Message != "":
		return e.Message
	default:
		return fmt.Sprintf("platform answered HTTP %d", e.HTTPStatus)
	}
}

type graphErrorEnvelope struct {
	Error *struct {
		Message     string          `json:"message"`
		Type        string          `json:"type"`
		Code        flexInt         `json:"code"`
		Subcode     flexInt         `json:"error_subcode"`
		UserTitle   string          `json:"error_user_title"`
		UserMsg     string          `json:"error_user_msg"`
		IsTransient bool            `json:"is_transient"`
		ErrorData   json.RawMessage `json:"error_data"`
		FBTraceID   string          `json:"fbtrace_id"`
	} `json:"error"`
}

// decodeError turns a non-2xx answer into *Error; it never fails.
func decodeError(status int, h http.Header, body []byte) *Error {
	e := &Error{HTTPStatus: status}
	var env graphErrorEnvelope
	if lenientUnmarshal(body, &env) == nil && env.Error != nil {
		g := env.Error
		e.Code, e.Subcode = int(g.Code), int(g.Subcode)
		e.Type, e.Message = g.Type, g.Message
		e.Title, e.UserMessage = g.UserTitle, g.UserMsg
		e.Transient, e.FBTraceID = g.IsTransient, g.FBTraceID
		e.Details = errorDataDetails(g.ErrorData)
	}
	if e.Message == "" && e.Code == 0 {
		e.Message = fmt.Sprintf("platform answered HTTP %d", status)
	}
	if e.FBTraceID == "" && h != nil {
		e.FBTraceID = h.Get("x-fb-trace-id")
	}
	return e
}

// errorDataDetails reads error_data, which is an object with "details" or a plain string.
func errorDataDetails(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case '{':
		var d struct {
			Details string `json:"details"`
		}
		if lenientUnmarshal(raw, &d) == nil {
			return d.Details
		}
	}
	return ""
}
