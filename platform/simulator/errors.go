package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// errorHref is the link Meta puts in status-level errors.
const errorHref = "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/"

// graphError is one Graph API error response.
type graphError struct {
	status    int    // HTTP status
	typ       string // "OAuthException" or "GraphMethodException"
	code      int
	subcode   int    // 0 = omitted
	message   string // the whole "message" value
	title     string // the bare title (for status-level errors)
	details   string // error_data.details
	noData    bool   // omit error_data (generic Graph errors carry none)
	transient bool   // add "is_transient": true
}

// errorInfo is a row of Meta's error-code table.
type errorInfo struct {
	status    int
	title     string
	details   string
	transient bool
}

// errorTable holds the HTTP status, title and a realistic default detail for
// the codes a template gateway meets (reference §2.2).
var errorTable = map[int]errorInfo{
	0:      {http.StatusUnauthorized, "AuthException", "We were unable to authenticate the app user.", false},
	1:      {http.StatusBadRequest, "API Unknown", "Invalid request or possible server error.", false},
	2:      {http.StatusServiceUnavailable, "API Service", "Temporary due to downtime or due to being overloaded.", true},
	3:      {http.StatusInternalServerError, "API Method", "Capability or permissions issue.", false},
	4:      {http.StatusBadRequest, "Application request limit reached", "The app has reached its API call rate limit.", true},
	10:     {http.StatusForbidden, "Permission denied", "Permission is either not granted or has been removed.", false},
	33:     {http.StatusBadRequest, "Parameter value is not valid", "The business phone number has been deleted.", false},
	100:    {http.StatusBadRequest, "Invalid parameter", "The request included one or more unsupported or misspelled parameters.", false},
	190:    {http.StatusUnauthorized, "Access token has expired", "Your access token has expired.", false},
	368:    {http.StatusForbidden, "Temporarily blocked for policies violations", "The WhatsApp Business Account associated with the app has been restricted or disabled for violating a platform policy.", false},
	80007:  {http.StatusBadRequest, "Rate limit issues", "The WhatsApp Business Account has reached its rate limit.", false},
	130429: {http.StatusBadRequest, "Rate limit hit", "Cloud API message throughput has been reached.", false},
	130472: {http.StatusBadRequest, "User's number is part of an experiment", "Failed to send message because this user's phone number is part of an experiment.", false},
	130497: {http.StatusForbidden, "Business account is restricted from messaging users in this country", "The WhatsApp Business Account is restricted from messaging users in this country.", false},
	131000: {http.StatusInternalServerError, "Something went wrong", "Message failed to send due to an unknown error.", false},
	131005: {http.StatusForbidden, "Access denied", "Permission is either not granted or has been removed.", false},
	131008: {http.StatusBadRequest, "Required parameter is missing", "The request is missing a required parameter.", false},
	131009: {http.StatusBadRequest, "Parameter value is not valid", "One or more parameter values are invalid.", false},
	131016: {http.StatusInternalServerError, "Service unavailable", "A service is temporarily unavailable.", false},
	131021: {http.StatusBadRequest, "Recipient cannot be sender", "Sender and recipient phone number is the same.", false},
	131026: {http.StatusBadRequest, "Message undeliverable", "Message Undeliverable.", false},
	131030: {http.StatusBadRequest, "Recipient phone number not in allowed list", "Recipient phone number not in allowed list: Add recipient phone number to recipient list and try again.", false},
	131031: {http.StatusForbidden, "Account has been locked", "The WhatsApp Business Account associated with the app has been restricted or disabled for violating a platform policy.", false},
	131042: {http.StatusBadRequest, "Business eligibility payment issue", "Message failed to send because there were one or more errors related to your payment method.", false},
	131045: {http.StatusInternalServerError, "Incorrect certificate", "Message failed to send due to a phone number registration error.", false},
	131047: {http.StatusBadRequest, "Re-engagement message", "Message failed to send because more than 24 hours have passed since the customer last replied to this number.", false},
	131048: {http.StatusBadRequest, "Spam rate limit hit", "Message failed to send because there are restrictions on how many messages can be sent from this phone number. This may be because too many previous messages were blocked or flagged as spam.", false},
	131049: {http.StatusBadRequest, "This message was not delivered to maintain healthy ecosystem engagement.", "In order to maintain a healthy ecosystem engagement, the message failed to be delivered.", false},
	131050: {http.StatusBadRequest, "Unable to deliver the message. This recipient has chosen to stop receiving marketing messages on WhatsApp from your business.", "This recipient has chosen to stop receiving marketing messages on WhatsApp from your business.", false},
	131051: {http.StatusBadRequest, "Unsupported message type", "Unsupported message type.", false},
	131052: {http.StatusBadRequest, "Media download error", "Unable to download the media sent by the user.", false},
	131053: {http.StatusBadRequest, "Media upload error", "Unable to upload the media used in the message.", false},
	131056: {http.StatusBadRequest, "(Business Account, Consumer Account) pair rate limit hit", "Message failed to send because there were too many messages sent from this phone number to the same phone number in a short period of time.", false},
	131057: {http.StatusInternalServerError, "Account in maintenance mode", "Business Account is in maintenance mode.", false},
	132000: {http.StatusBadRequest, "Number of parameters does not match the expected number of params", "The number of variable parameter values included in the request did not match the number of variable parameters defined in the template.", false},
	132001: {http.StatusNotFound, "Template name does not exist in the translation", "The template does not exist in the specified language or the template has not been approved.", false},
	132005: {http.StatusBadRequest, "Translated text too long", "Translated text is too long.", false},
	132007: {http.StatusBadRequest, "Template Format Character Policy Violated", "Template content violates a WhatsApp policy.", false},
	132012: {http.StatusBadRequest, "Parameter format does not match format in the created template", "Variable parameter values formatted incorrectly.", false},
	132015: {http.StatusBadRequest, "Template is Paused", "Template is paused due to low quality so it cannot be sent in a template message.", false},
	132016: {http.StatusBadRequest, "Template is Disabled", "Template has been paused too many times due to low quality and is now permanently disabled.", false},
	133004: {http.StatusServiceUnavailable, "Server temporarily unavailable", "Server is temporarily unavailable.", false},
	133005: {http.StatusBadRequest, "Two step verification PIN Mismatch", "Verify that the two-step verification PIN included in the request is correct.", false},
	133010: {http.StatusBadRequest, "Account not registered", "Phone number not registered on the WhatsApp Business Platform.", false},
	133016: {http.StatusBadRequest, "Account register deregister rate limit exceeded", "Registration or Deregistration failed because there were too many attempts for this phone number in a short period of time.", false},
	135000: {http.StatusBadRequest, "Generic user error", "Message failed to send because of an unknown error with your request parameters.", false},
}

// lookupError returns the table row for code, or a generic 400 row.
func lookupError(code int) errorInfo {
	if info, ok := errorTable[code]; ok {
		return info
	}
	return errorInfo{http.StatusBadRequest, "Something went wrong", "Message failed to send because of an unknown error.", false}
}

// waError builds a Cloud API error "(#code) Title" with error_data.details;
// an empty details uses the table's default text.
func waError(code int, details string) *graphError {
	info := lookupError(code)
	if details == "" {
		details = info.details
	}
	return &graphError{
		status:    info.status,
		typ:       "OAuthException",
		code:      code,
		message:   fmt.Sprintf("(#%d) %s", code, info.title),
		title:     info.title,
		details:   details,
		transient: info.transient,
	}
}

// paramError builds Graph's "(#100) <message>" error for a malformed request.
func paramError(message, details string) *graphError {
	return &graphError{
		status:  http.StatusBadRequest,
		typ:     "OAuthException",
		code:    100,
		message: "(#100) " + message,
		title:   "Invalid parameter",
		details: details,
	}
}

// tokenError is Graph's answer to a missing, unknown or foreign access token.
func tokenError() *graphError {
	return &graphError{
		status:  http.StatusUnauthorized,
		typ:     "OAuthException",
		code:    190,
		message: "Invalid OAuth access token - Cannot parse access token",
		title:   "Invalid OAuth access token",
		noData:  true,
	}
}

// unknownObjectError is Graph's answer for an id that does not exist or does
// not support the method (code 100, subcode 33).
func unknownObjectError(method, id string) *graphError {
	return &graphError{
		status:  http.StatusBadRequest,
		typ:     "GraphMethodException",
		code:    100,
		subcode: 33,
		message: fmt.Sprintf("Unsupported %s request. Object with ID '%s' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api", method, id),
		title:   "Unsupported request",
		noData:  true,
	}
}

// unknownPathError is Graph's answer for a path it cannot route (code 2500).
func unknownPathError(path string) *graphError {
	return &graphError{
		status:  http.StatusBadRequest,
		typ:     "OAuthException",
		code:    2500,
		message: "Unknown path components: " + path,
		title:   "Unknown path components",
		noData:  true,
	}
}

// errorBody is the JSON shape of a Graph error response.
type errorBody struct {
	Error errorFields `json:"error"`
}

type errorFields struct {
	Message     string     `json:"message"`
	Type        string     `json:"type"`
	Code        int        `json:"code"`
	Subcode     int        `json:"error_subcode,omitempty"`
	IsTransient bool       `json:"is_transient,omitempty"`
	ErrorData   *errorData `json:"error_data,omitempty"`
	FBTraceID   string     `json:"fbtrace_id"`
}

type errorData struct {
	MessagingProduct string `json:"messaging_product"`
	Details          string `json:"details"`
}

// body renders the error with the given trace id.
func (e *graphError) body(traceID string) errorBody {
	f := errorFields{
		Message:     e.message,
		Type:        e.typ,
		Code:        e.code,
		Subcode:     e.subcode,
		IsTransient: e.transient,
		FBTraceID:   traceID,
	}
	if !e.noData {
		f.ErrorData = &errorData{MessagingProduct: "whatsapp", Details: e.details}
	}
	return errorBody{Error: f}
}

// write sends the error as the HTTP response, with Graph's headers.
func (e *graphError) write(w http.ResponseWriter, traceID string) {
	if e.code == 190 {
		w.Header().Set("WWW-Authenticate", `OAuth "Facebook Platform" "invalid_token" "`+e.message+`"`)
	}
	writeGraphJSON(w, e.status, e.body(traceID))
}

// writeGraphJSON writes v as the JSON body with Graph's content type.
func writeGraphJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	// With its length the body goes out in one write, also when the send handler flushes it
	// before queueing the status webhooks; without, a flush made it chunked (a second write
	// for the last chunk, and a second read for the gateway).
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// statusError is the error object inside a failed status webhook (§2.3):
// title and href rather than type and fbtrace_id.
type statusError struct {
	Code      int             `json:"code"`
	Title     string          `json:"title"`
	Message   string          `json:"message"`
	ErrorData statusErrorData `json:"error_data"`
	Href      string          `json:"href"`
}

type statusErrorData struct {
	Details string `json:"details"`
}

// asyncError returns the status-level error for code.
func asyncError(code int) statusError {
	info := lookupError(code)
	return statusError{
		Code:      code,
		Title:     info.title,
		Message:   info.title,
		ErrorData: statusErrorData{Details: info.details},
		Href:      errorHref,
	}
}
