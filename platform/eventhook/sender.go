package eventhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// MaxResponseBytes is how much of a receiver's response body is kept in
// Result.Body (and in the delivery log).
const MaxResponseBytes = 20 << 10

// Defaults of SenderConfig.
const (
	DefaultTimeout         = 3 * time.Second
	DefaultMaxConnsPerHost = 8
)

const (
	// maxDrainBytes is how much of a response beyond MaxResponseBytes is read
	// and discarded so that the connection can be reused; a longer response
	// closes the connection instead.
	maxDrainBytes = 64 << 10
	// maxResponseHeaderBytes bounds the response header a receiver may send.
	maxResponseHeaderBytes = 64 << 10
	// maxIdleConns bounds idle connections across all endpoints.
	maxIdleConns = 1024
	// idleConnTimeout closes connections idle for longer.
	idleConnTimeout = 90 * time.Second
	// minDialTimeout is the least time one address of several gets to connect
	// (as net.Dialer does), unless the attempt's deadline is nearer.
	minDialTimeout = 2 * time.Second
)

// Resolver resolves a host name to IP addresses; *net.Resolver implements it.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// SenderConfig configures NewSender. The zero value is the production
// configuration: 3 s timeout, private destinations refused, 8 connections per
// endpoint host, the system resolver.
type SenderConfig struct {
	// Timeout bounds a whole attempt: connecting, sending, waiting for the
	// status and reading the kept part of the body. Zero or negative means
	// DefaultTimeout (3 s; success is a 2xx within 3 s).
	Timeout time.Duration
	// AllowPrivate turns the address guard off (local development and tests,
	// GATEWAY_WEBHOOK_ALLOW_PRIVATE=true).
	AllowPrivate bool
	// MaxConnsPerHost bounds the connections, and so the parallel attempts,
	// per endpoint host. Zero means DefaultMaxConnsPerHost; negative means no
	// bound.
	MaxConnsPerHost int
	// Resolver resolves endpoint host names; nil means net.DefaultResolver.
	Resolver Resolver
}

// Sender POSTs webhook deliveries over kept-alive HTTP/1.1 connections. It
// never follows redirects and, unless AllowPrivate is set, refuses at dial
// time every destination for which checkAddr fails. It is safe for
// concurrent use; make one per process and reuse it.
type Sender struct {
	transport    *http.Transport
	timeout      time.Duration
	allowPrivate bool
	resolver     Resolver
	// dial connects to one vetted "ip:port"; tests replace it to prove that
	// no connection is attempted.
	dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// NewSender returns a Sender configured by cfg (see SenderConfig for the
// defaults). It cannot fail.
func NewSender(cfg SenderConfig) *Sender {
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	maxConns := cfg.MaxConnsPerHost
	switch {
	case maxConns == 0:
		maxConns = DefaultMaxConnsPerHost
	case maxConns < 0:
		maxConns = 0 // no bound in http.Transport
	}
	idlePerHost := maxConns
	if idlePerHost == 0 {
		idlePerHost = 256
	}
	resolver := cfg.Resolver
	if resolver == nil {
		resolver = net.DefaultResolver
	}

	s := &Sender{
		timeout:      timeout,
		allowPrivate: cfg.AllowPrivate,
		resolver:     resolver,
	}
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if !cfg.AllowPrivate {
		dialer.Control = controlAddr
	}
	s.dial = dialer.DialContext

	var protocols http.Protocols
	protocols.SetHTTP1(true) // HTTP/1.1 only: MaxConnsPerHost then bounds parallel attempts
	s.transport = &http.Transport{
		Proxy:                  nil, // a proxy would be dialled instead of the vetted endpoint
		DialContext:            s.dialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		DisableCompression:     true, // keep the receiver's bytes as sent
		MaxIdleConns:           maxIdleConns,
		MaxIdleConnsPerHost:    idlePerHost,
		MaxConnsPerHost:        maxConns,
		IdleConnTimeout:        idleConnTimeout,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		Protocols:              &protocols,
	}
	return s
}

// CloseIdleConnections closes the Sender's idle kept-alive connections. The
// Sender stays usable. It cannot fail.
func (s *Sender) CloseIdleConnections() {
	s.transport.CloseIdleConnections()
}

// Result is the outcome of one attempt, as recorded in the delivery log.
type Result struct {
	// StatusCode is the receiver's HTTP status, or 0 when none was received.
	StatusCode int
	// Latency is the time from the start of the attempt to having read the
	// kept part of the response (or to the failure); zero when nothing was
	// sent because the Request was unusable.
	Latency time.Duration
	// Body holds the first MaxResponseBytes bytes of the response body.
	Body []byte
	// Err is a transport error, a timeout (context.DeadlineExceeded), a
	// refused destination (ErrForbiddenAddress) or an unusable Request
	// (ErrInvalidRequest, ErrMalformedSecret); nil when a response was read.
	Err error
}

// OK reports whether the attempt succeeded: a 2xx status, read in time, and
// no error. A 3xx is not a success: redirects are never followed.
func (r Result) OK() bool {
	return r.Err == nil && r.StatusCode >= 200 && r.StatusCode <= 299
}

// Gone reports whether the receiver answered 410 Gone, which disables the
// endpoint at once.
func (r Result) Gone() bool {
	return r.StatusCode == http.StatusGone
}

// TimedOut reports whether the attempt failed because it ran past the
// Sender's Timeout (or the caller's deadline).
func (r Result) TimedOut() bool {
	if r.Err == nil {
		return false
	}
	if errors.Is(r.Err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(r.Err, &ne) && ne.Timeout()
}

// Send POSTs r.Body with r.Headers() to r.URL and reports the outcome. It
// never follows redirects (a 3xx is a failed attempt with its status), keeps
// at most MaxResponseBytes of the response body, discards a bounded rest so
// the connection can be reused, and bounds the whole attempt, reading
// included, by the configured Timeout. It never returns an error of its own:
// an unusable Request (ErrInvalidRequest, ErrMalformedSecret), a refused
// destination (ErrForbiddenAddress), a transport failure, a timeout or the
// cancellation of ctx is reported in Result.Err, and no request is sent in
// the first two cases.
func (s *Sender) Send(ctx context.Context, r Request) Result {
	h, err := r.Headers()
	if err != nil {
		return Result{Err: err}
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return Result{Err: fmt.Errorf("%w: URL: %v", ErrInvalidRequest, err)}
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return Result{Err: fmt.Errorf("%w: URL scheme %q is not http or https", ErrInvalidRequest, req.URL.Scheme)}
	}
	if req.URL.Hostname() == "" {
		return Result{Err: fmt.Errorf("%w: URL has no host", ErrInvalidRequest)}
	}
	req.Header = h
	if u := req.URL.User; u != nil {
		// As http.Client does: credentials in the URL become Basic authentication.
		password, _ := u.Password()
		req.SetBasicAuth(u.Username(), password)
	}

	// The Transport, not an http.Client: a Client would copy every header for the redirects
	// it never follows here. Its errors read as a Client's do.
	resp, err := s.transport.RoundTrip(req)
	if err != nil {
		return Result{Latency: time.Since(start), Err: &url.Error{Op: "Post", URL: redactedURL(req.URL), Err: err}}
	}
	defer resp.Body.Close()
	res := Result{StatusCode: resp.StatusCode}
	res.Body, err = readKept(resp)
	res.Latency = time.Since(start)
	if err != nil {
		res.Err = fmt.Errorf("webhook: read response body: %w", err)
		return res
	}
	// Best effort: a short rest is read so the connection goes back to the
	// pool; a longer one, or a failure here, only costs the connection.
	_, _ = io.CopyN(io.Discard, resp.Body, maxDrainBytes)
	return res
}

// readKept reads the first MaxResponseBytes of a response body: nothing is allocated for an
// empty one (the usual 204, or a 200 without a body), exactly the kept length for a declared
// one.
func readKept(resp *http.Response) ([]byte, error) {
	switch n := resp.ContentLength; {
	case n == 0:
		return nil, nil
	case n > 0:
		buf := make([]byte, min(n, MaxResponseBytes))
		k, err := io.ReadFull(resp.Body, buf)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // a body shorter than declared
		}
		return buf[:k], err
	}
	return io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes))
}

// redactedURL is u as an http.Client names it in its errors: the password, if any, replaced
// by "***".
func redactedURL(u *url.URL) string {
	if _, ok := u.User.Password(); ok {
		return strings.Replace(u.String(), u.User.String()+"@", u.User.Username()+":***@", 1)
	}
	return u.String()
}

// dialContext is the Transport's dialer: it resolves the host itself, refuses
// the destination if any address fails checkAddr (unless AllowPrivate), and
// then dials the vetted addresses one after the other, never the name again.
func (s *Sender) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("webhook: dial %q: %w", address, err)
	}
	ips, err := s.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var firstErr error
	for i, ip := range ips {
		dctx, cancel := partialDeadline(ctx, len(ips)-i)
		conn, err := s.dial(dctx, network, net.JoinHostPort(ip.String(), port))
		cancel()
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// resolve returns the addresses to dial for host: the literal address itself
// or what the Resolver answers, all of them vetted unless AllowPrivate.
func (s *Sender) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		if !s.allowPrivate {
			if err := checkAddr(ip); err != nil {
				return nil, err
			}
		}
		return []netip.Addr{ip.Unmap()}, nil
	}
	if !s.allowPrivate {
		if err := checkHostName(host); err != nil {
			return nil, err
		}
	}
	answers, err := s.resolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("webhook: resolve %q: %w", host, err)
	}
	if len(answers) == 0 {
		return nil, fmt.Errorf("webhook: resolve %q: no addresses", host)
	}
	ips := make([]netip.Addr, 0, len(answers))
	for _, a := range answers {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			return nil, fmt.Errorf("%w: %q resolved to an invalid address", ErrForbiddenAddress, host)
		}
		ip = ip.WithZone(a.Zone)
		if !s.allowPrivate {
			if err := checkAddr(ip); err != nil {
				return nil, fmt.Errorf("host %q: %w", host, err)
			}
		}
		ips = append(ips, ip.Unmap())
	}
	return ips, nil
}

// partialDeadline gives one of n remaining addresses its share of the time
// left, at least minDialTimeout, as net.Dialer does for several addresses.
func partialDeadline(ctx context.Context, n int) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok || n <= 1 {
		return ctx, func() {}
	}
	left := time.Until(deadline)
	share := left / time.Duration(n)
	if share < minDialTimeout {
		share = min(minDialTimeout, left)
	}
	return context.WithTimeout(ctx, share)
}

// controlAddr is net.Dialer.Control when private destinations are refused:
// a second check of the very address the socket is about to connect to.
func controlAddr(network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("%w: network %q", ErrForbiddenAddress, network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q is not an address: %v", ErrForbiddenAddress, address, err)
	}
	return checkAddr(ap.Addr())
}
