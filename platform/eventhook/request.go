package eventhook

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// UserAgent is the User-Agent of every delivery.
const UserAgent = "MessagingGateway-Webhooks/1"

// Header names of a delivery, in Go's canonical form. HTTP header names are
// case-insensitive; the Standard Webhooks spec writes the last three in lower
// case (webhook-id, webhook-timestamp, webhook-signature).
const (
	HeaderEvent     = "X-Service-Event"
	HeaderDelivery  = "X-Service-Delivery"
	HeaderSignature = "X-Service-Signature"
	HeaderEventID   = "X-Service-Event-Id"
	HeaderAttempt   = "X-Service-Attempt"
	HeaderTimestamp = "X-Service-Timestamp"
	// HeaderTimestampSignature signs X-Service-Timestamp with the body (TimestampSignature):
	// the replay-resistant form of X-Service-Signature.
	HeaderTimestampSignature = "X-Service-Timestamp-Signature"
	// HeaderSignaturePrevious is X-Service-Signature made with the previous secret, sent
	// only during a rotation's overlap.
	HeaderSignaturePrevious = "X-Service-Signature-Previous"
	HeaderWebhookID         = "Webhook-Id"
	HeaderWebhookTimestamp  = "Webhook-Timestamp"
	HeaderWebhookSignature  = "Webhook-Signature"
)

const (
	headerContentType = "Content-Type"
	headerUserAgent   = "User-Agent"
	contentTypeJSON   = "application/json"
	// maxHeaderValueBytes bounds Event, EventID and DeliveryID.
	maxHeaderValueBytes = 1024
)

// ErrInvalidRequest is returned (wrapped) by Request.Headers, and put in
// Result.Err by Sender.Send, when a Request is unusable: an empty or
// malformed Event, EventID or DeliveryID, an Attempt below 1, a zero
// Timestamp, or a URL that is not an absolute http or https URL. Such an
// attempt is never sent; it is a bug in the caller, not a receiver failure.
var ErrInvalidRequest = errors.New("webhook: invalid request")

// Request is one delivery attempt of one event to one endpoint.
type Request struct {
	// URL is the endpoint registered by the customer (http or https).
	URL string
	// Secret is the endpoint's signing secret, "whsec_..." as made by NewSecret.
	Secret string
	// PreviousSecret, when set, is the secret a rotation replaced, still valid during the
	// overlap: Webhook-Signature and X-Service-Timestamp-Signature then carry a second
	// signature made with it, after the first and separated by a space (Standard Webhooks
	// allows several), and X-Service-Signature-Previous is X-Service-Signature made with it.
	// X-Service-Signature itself is made with Secret only: its format has room for one.
	PreviousSecret string
	// Event is the event name, such as "message.sent".
	Event string
	// EventID is the event's id, the "id" field of the body.
	EventID string
	// DeliveryID identifies the event × endpoint pair; it is stable across
	// retries and doubles as the Standard Webhooks webhook-id.
	DeliveryID string
	// Attempt is the 1-based number of this attempt.
	Attempt int
	// Timestamp is when this attempt is signed; it is sent in unix seconds.
	Timestamp time.Time
	// Body is the raw JSON body, signed and sent byte for byte.
	Body []byte
}

// Headers returns every header of the attempt: Content-Type
// (application/json), User-Agent, X-Service-Event, X-Service-Delivery,
// X-Service-Signature, X-Service-Event-Id, X-Service-Attempt,
// X-Service-Timestamp (unix seconds), X-Service-Timestamp-Signature, the
// Standard Webhooks Webhook-Id (= DeliveryID), Webhook-Timestamp and
// Webhook-Signature, and, when PreviousSecret is set, X-Service-Signature-Previous
// (with two space-separated signatures in Webhook-Signature and
// X-Service-Timestamp-Signature). It returns an error wrapping
// ErrMalformedSecret for a bad secret, or ErrInvalidRequest for an empty or
// non-printable Event, EventID or DeliveryID, an Attempt below 1, or a zero
// Timestamp.
func (r Request) Headers() (http.Header, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	key, err := standardKey(r.Secret)
	if err != nil {
		return nil, err
	}
	unix := r.Timestamp.Unix()
	ts := strconv.FormatInt(unix, 10)
	sig := standardSignature(key, r.DeliveryID, unix, r.Body)
	tsSig := timestampSignature(r.Secret, unix, r.Body)
	n := 12
	if r.PreviousSecret != "" {
		prev, err := standardKey(r.PreviousSecret)
		if err != nil {
			return nil, err
		}
		sig += " " + standardSignature(prev, r.DeliveryID, unix, r.Body)
		tsSig += " " + timestampSignature(r.PreviousSecret, unix, r.Body)
		n++
	}
	// One array holds every value (one allocation, not one per header).
	v := &[...]string{contentTypeJSON, UserAgent, r.Event, r.DeliveryID, Signature(r.Secret, r.Body),
		r.EventID, strconv.Itoa(r.Attempt), ts, tsSig, r.DeliveryID, ts, sig, ""}
	names := [len(v)]string{headerContentType, headerUserAgent, HeaderEvent, HeaderDelivery, HeaderSignature,
		HeaderEventID, HeaderAttempt, HeaderTimestamp, HeaderTimestampSignature, HeaderWebhookID, HeaderWebhookTimestamp,
		HeaderWebhookSignature, HeaderSignaturePrevious}
	if r.PreviousSecret != "" {
		v[12] = Signature(r.PreviousSecret, r.Body)
	}
	h := make(http.Header, n)
	for i := range n {
		h[names[i]] = v[i : i+1 : i+1]
	}
	return h, nil
}

// validate checks the fields that become header values.
func (r Request) validate() error {
	for _, f := range [...]struct{ name, value string }{
		{"Event", r.Event},
		{"EventID", r.EventID},
		{"DeliveryID", r.DeliveryID},
	} {
		if err := checkHeaderValue(f.value); err != nil {
			return fmt.Errorf("%w: %s %v", ErrInvalidRequest, f.name, err)
		}
	}
	if r.Attempt < 1 {
		return fmt.Errorf("%w: Attempt %d is below 1", ErrInvalidRequest, r.Attempt)
	}
	if r.Timestamp.IsZero() {
		return fmt.Errorf("%w: zero Timestamp", ErrInvalidRequest)
	}
	return nil
}

// checkHeaderValue accepts non-empty printable ASCII without leading or
// trailing space, so that a value can neither split a header nor be changed
// by a receiver trimming it (the signature covers the id).
func checkHeaderValue(v string) error {
	switch {
	case v == "":
		return errors.New("is empty")
	case len(v) > maxHeaderValueBytes:
		return fmt.Errorf("is longer than %d bytes", maxHeaderValueBytes)
	case v[0] == ' ' || v[len(v)-1] == ' ':
		return errors.New("has leading or trailing space")
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return fmt.Errorf("has a byte 0x%02x outside printable ASCII", c)
		}
	}
	return nil
}
