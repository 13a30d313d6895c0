package whatsapp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultTimeout is the per-call deadline a new Client applies when the caller's
// context has none sooner.
const DefaultTimeout = 10 * time.Second

// maxResponseBytes caps how much of a response body the client reads.
const maxResponseBytes = 1 << 20

// ErrUnavailable is wrapped by every error that means the platform could not be
// reached or did not answer in time: dial and TLS failures, connection resets,
// deadline expiry and cancellation. The request may or may not have been acted on.
var ErrUnavailable = errors.New("whatsapp: platform unavailable")

// ErrInvalidArgument is wrapped by errors for arguments rejected before any request
// is made (an empty token or id, a malformed recipient, an unusable base URL).
var ErrInvalidArgument = errors.New("whatsapp: invalid argument")

// ErrMalformedResponse is wrapped by errors for a 2xx answer the client cannot use:
// a body that is not the documented JSON, lacks the message id, or exceeds 1 MiB.
// For a send it means the platform probably accepted the message.
var ErrMalformedResponse = errors.New("whatsapp: malformed platform response")

// Client calls the Cloud API. It is safe for concurrent use; the access token is
// passed per call because each connected number has its own.
type Client struct {
	base    string   // Graph root including the version, without a trailing slash
	baseURL *url.URL // base parsed; nil when base does not parse
	httpc   *http.Client
	timeout atomic.Int64 // time.Duration
}

// NewClient returns a Client for baseURL, the Graph root including the version
// (for example "https://graph.facebook.com/v23.0"; a trailing slash is tolerated).
// A nil httpc gets a client tuned for many concurrent calls to one host, with no
// global timeout and no redirect following. NewClient never fails: an unusable
// baseURL makes every call return an error wrapping ErrInvalidArgument.
func NewClient(baseURL string, httpc *http.Client) *Client {
	if httpc == nil {
		httpc = newHTTPClient()
	}
	c := &Client{base: strings.TrimRight(baseURL, "/"), httpc: httpc}
	if u, err := url.Parse(c.base); err == nil && u.Scheme != "" && u.Host != "" {
		c.baseURL = u
	}
	c.timeout.Store(int64(DefaultTimeout))
	return c
}

// SetTimeout sets the per-call deadline applied when the caller's context has none
// sooner (default 10 s). For ListTemplates it applies to each page's request.
// A d <= 0 removes the client-side deadline, leaving only the context's.
func (c *Client) SetTimeout(d time.Duration) {
	c.timeout.Store(int64(d))
}

func newHTTPClient() *http.Client {
	var t *http.Transport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		t = dt.Clone()
	} else {
		t = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		}
	}
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 256
	t.IdleConnTimeout = 90 * time.Second
	return &http.Client{
		Transport: t,
		// The Graph API does not redirect; a redirect is answered as a non-2xx *Error.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// endpoint joins the base URL and escaped path segments.
func (c *Client) endpoint(segments ...string) (string, error) {
	if c.baseURL == nil {
		return "", fmt.Errorf("%w: base URL %q is not an absolute URL", ErrInvalidArgument, c.base)
	}
	var b strings.Builder
	b.WriteString(c.base)
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String(), nil
}

func checkToken(token string) error {
	if token == "" {
		return fmt.Errorf("%w: empty access token", ErrInvalidArgument)
	}
	for i := 0; i < len(token); i++ {
		if token[i] < 0x20 || token[i] == 0x7f {
			return fmt.Errorf("%w: access token contains control characters", ErrInvalidArgument)
		}
	}
	return nil
}

func checkID(what, id string) error {
	if strings.TrimSpace(id) == "" {
		return fmt.Errorf("%w: empty %s", ErrInvalidArgument, what)
	}
	return nil
}

// do performs one request and returns the body of a 2xx answer. A non-2xx answer
// becomes *Error; transport failures wrap ErrUnavailable.
func (c *Client) do(ctx context.Context, method, rawURL, token string, body []byte) ([]byte, error) {
	if d := time.Duration(c.timeout.Load()); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d) // keeps ctx's deadline when it is sooner
		defer cancel()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	resp, err := c.roundTrip(ctx, method, rawURL, token, "application/json", rd)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return readAnswer(resp)
}

// roundTrip sends one request with the bearer token (when not empty) and returns the response
// whatever its status; a transport failure wraps ErrUnavailable.
func (c *Client) roundTrip(ctx context.Context, method, rawURL, token, contentType string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, rawURL, body)
	if err != nil {
		return nil, fmt.Errorf("%w: build request: %v", ErrInvalidArgument, err)
	}
	if token != "" { // empty only for the code exchange, which authenticates with the app secret
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.httpc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return resp, nil
}

// readAnswer reads at most 1 MiB of a response: the body of a 2xx answer, or the *Error of
// any other.
func readAnswer(resp *http.Response) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read response: %w", ErrUnavailable, err)
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	if len(data) > maxResponseBytes {
		if ok {
			return nil, fmt.Errorf("%w: body exceeds %d bytes", ErrMalformedResponse, maxResponseBytes)
		}
		data = data[:maxResponseBytes]
	}
	if !ok {
		return nil, decodeError(resp.StatusCode, resp.Header, data)
	}
	return data, nil
}

// IsTimeout reports whether err comes from an expired deadline (the caller's
// context, the client's timeout) or a network timeout. It returns false for nil.
func IsTimeout(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// lenientUnmarshal decodes data into v, ignoring values of an unexpected JSON type
// (encoding/json skips those fields and completes the rest). Syntax errors are returned.
func lenientUnmarshal(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return nil
	}
	return err
}
