package eventhook

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// newLoopbackSender returns a Sender allowed to reach the loopback test
// servers.
func newLoopbackSender(t testing.TB, cfg SenderConfig) *Sender {
	t.Helper()
	cfg.AllowPrivate = true
	s := NewSender(cfg)
	t.Cleanup(s.CloseIdleConnections)
	return s
}

// deliveryTo returns a valid attempt aimed at url.
func deliveryTo(url string) Request {
	return Request{
		URL:        url,
		Secret:     "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
		Event:      "message.status",
		EventID:    "evt_1",
		DeliveryID: "dlv_1",
		Attempt:    1,
		Timestamp:  time.Unix(1772368496, 0),
		Body:       []byte(`{"id":"evt_1","event":"message.status","created_at":"2026-03-01T12:34:56+00:00","data":{}}`),
	}
}

func TestSendStatus(t *testing.T) {
	for _, tc := range []struct {
		status   int
		ok, gone bool
	}{
		{200, true, false},
		{204, true, false},
		{299, true, false},
		{400, false, false},
		{410, false, true},
		{500, false, false},
		{503, false, false},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				if tc.status != 204 {
					fmt.Fprintf(w, "answer %d", tc.status)
				}
			}))
			defer srv.Close()
			res := newLoopbackSender(t, SenderConfig{}).Send(context.Background(), deliveryTo(srv.URL))
			if res.Err != nil {
				t.Fatalf("Err = %v", res.Err)
			}
			if res.StatusCode != tc.status || res.OK() != tc.ok || res.Gone() != tc.gone {
				t.Errorf("StatusCode %d OK %v Gone %v, want %d %v %v", res.StatusCode, res.OK(), res.Gone(), tc.status, tc.ok, tc.gone)
			}
			if tc.status != 204 && string(res.Body) != fmt.Sprintf("answer %d", tc.status) {
				t.Errorf("Body = %q", res.Body)
			}
			if res.Latency <= 0 {
				t.Errorf("Latency = %v, want > 0", res.Latency)
			}
		})
	}
}

func TestSendDoesNotFollowRedirects(t *testing.T) {
	var targetHits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		targetHits.Add(1)
	}))
	defer target.Close()
	for _, status := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL+"/elsewhere", status)
			}))
			defer srv.Close()
			res := newLoopbackSender(t, SenderConfig{}).Send(context.Background(), deliveryTo(srv.URL))
			if res.Err != nil {
				t.Fatalf("Err = %v", res.Err)
			}
			if res.StatusCode != status || res.OK() {
				t.Errorf("StatusCode %d OK %v, want %d and not OK", res.StatusCode, res.OK(), status)
			}
		})
	}
	if n := targetHits.Load(); n != 0 {
		t.Errorf("the redirect target was hit %d times", n)
	}
}

// TestSendURLCredentials checks that credentials written in an endpoint's URL are sent as
// Basic authentication, and that an error names the URL without the password.
func TestSendURLCredentials(t *testing.T) {
	var user, password string
	var ok bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, password, ok = r.BasicAuth()
	}))
	defer srv.Close()
	s := newLoopbackSender(t, SenderConfig{})
	u, _ := url.Parse(srv.URL)
	u.User = url.UserPassword("hooks", "s3cr:et")
	res := s.Send(context.Background(), deliveryTo(u.String()))
	if res.Err != nil || !res.OK() {
		t.Fatalf("Err %v, StatusCode %d", res.Err, res.StatusCode)
	}
	if !ok || user != "hooks" || password != "s3cr:et" {
		t.Errorf("Basic auth %q %q %v, want hooks s3cr:et", user, password, ok)
	}

	srv.Close()
	res = s.Send(context.Background(), deliveryTo(u.String()))
	if res.Err == nil {
		t.Fatal("a closed server answered")
	}
	msg := res.Err.Error()
	if strings.Contains(msg, "s3cr") || !strings.HasPrefix(msg, `Post "http://hooks:***@127.0.0.1:`) {
		t.Errorf("error %q, want it to start Post \"http://hooks:***@127.0.0.1:… and hide the password", msg)
	}
}

func TestSendCapsResponseBody(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 100<<10/16) // 100 KiB
	for _, declared := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if declared {
				w.Header().Set("Content-Length", fmt.Sprint(len(big)))
			}
			w.Write(big)
		}))
		res := newLoopbackSender(t, SenderConfig{}).Send(context.Background(), deliveryTo(srv.URL))
		srv.Close()
		if res.Err != nil || !res.OK() {
			t.Fatalf("declared length %v: Err %v, StatusCode %d", declared, res.Err, res.StatusCode)
		}
		if len(res.Body) != MaxResponseBytes || !bytes.Equal(res.Body, big[:MaxResponseBytes]) {
			t.Errorf("declared length %v: Body has %d bytes, want the first %d", declared, len(res.Body), MaxResponseBytes)
		}
	}
}

// TestSendReusesConnections checks keep-alive, including after a response
// longer than MaxResponseBytes that is drained.
func TestSendReusesConnections(t *testing.T) {
	var newConns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write(bytes.Repeat([]byte("x"), 30<<10))
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			newConns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	s := newLoopbackSender(t, SenderConfig{})
	for range 20 {
		if res := s.Send(context.Background(), deliveryTo(srv.URL)); !res.OK() {
			t.Fatalf("StatusCode %d, Err %v", res.StatusCode, res.Err)
		}
	}
	if n := newConns.Load(); n != 1 {
		t.Errorf("20 sequential attempts opened %d connections, want 1", n)
	}
}

func TestSendBoundsConnectionsPerHost(t *testing.T) {
	const limit = 2
	var inFlight, peak atomic.Int32
	var newConns atomic.Int32
	arrived := make(chan struct{}, 6)
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		inFlight.Add(-1)
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			newConns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	s := newLoopbackSender(t, SenderConfig{MaxConnsPerHost: limit})
	if s.transport.MaxConnsPerHost != limit || s.transport.MaxIdleConnsPerHost < limit {
		t.Fatalf("transport MaxConnsPerHost %d MaxIdleConnsPerHost %d, want %d and at least %d",
			s.transport.MaxConnsPerHost, s.transport.MaxIdleConnsPerHost, limit, limit)
	}
	var wg sync.WaitGroup
	results := make([]Result, 6)
	for i := range results {
		wg.Go(func() { results[i] = s.Send(context.Background(), deliveryTo(srv.URL)) })
	}
	// Wait until the limit is reached, then let everything through.
	for range limit {
		<-arrived
	}
	close(release)
	wg.Wait()
	for i, res := range results {
		if !res.OK() {
			t.Errorf("attempt %d: StatusCode %d, Err %v", i, res.StatusCode, res.Err)
		}
	}
	if p, n := peak.Load(), newConns.Load(); p > limit || n > limit {
		t.Errorf("peak parallel attempts %d, connections %d; want at most %d", p, n, limit)
	}
}

func TestSendTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	t.Run("slow status", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The one slow receiver: past Timeout, or until the sender gives up
			// (reading the body first lets the server notice the client leaving).
			io.Copy(io.Discard, r.Body)
			select {
			case <-time.After(5 * timeout):
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		res := newLoopbackSender(t, SenderConfig{Timeout: timeout}).Send(context.Background(), deliveryTo(srv.URL))
		if res.Err == nil || !res.TimedOut() || !errors.Is(res.Err, context.DeadlineExceeded) || res.OK() {
			t.Fatalf("Err = %v, TimedOut %v, OK %v; want a timeout", res.Err, res.TimedOut(), res.OK())
		}
		if res.StatusCode != 0 {
			t.Errorf("StatusCode = %d, want 0", res.StatusCode)
		}
		if res.Latency < timeout || res.Latency > 4*timeout {
			t.Errorf("Latency = %v, want about %v", res.Latency, timeout)
		}
	})
	t.Run("slow body", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(200)
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			<-r.Context().Done() // the body never ends
		}))
		defer srv.Close()
		res := newLoopbackSender(t, SenderConfig{Timeout: timeout}).Send(context.Background(), deliveryTo(srv.URL))
		if !res.TimedOut() || res.OK() {
			t.Fatalf("Err = %v, OK %v; a 2xx whose body is not read in time is a timeout", res.Err, res.OK())
		}
		if res.StatusCode != 200 || string(res.Body) != "partial" {
			t.Errorf("StatusCode %d Body %q, want 200 and the part read", res.StatusCode, res.Body)
		}
	})
}

func TestSendCallerCancellation(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := newLoopbackSender(t, SenderConfig{}).Send(ctx, deliveryTo(srv.URL))
	if !errors.Is(res.Err, context.Canceled) || res.OK() {
		t.Errorf("Err = %v, want context.Canceled", res.Err)
	}
}

func TestSendHeadersAndBodyReceived(t *testing.T) {
	type received struct {
		method, host string
		header       http.Header
		body         []byte
	}
	got := make(chan received, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{r.Method, r.Host, r.Header.Clone(), body}
		w.WriteHeader(204)
	}))
	defer srv.Close()
	req := deliveryTo(srv.URL + "/hooks?x=1")
	res := newLoopbackSender(t, SenderConfig{}).Send(context.Background(), req)
	if !res.OK() {
		t.Fatalf("StatusCode %d, Err %v", res.StatusCode, res.Err)
	}
	rcv := <-got
	if rcv.method != http.MethodPost || !bytes.Equal(rcv.body, req.Body) {
		t.Errorf("method %s body %q, want POST and the request body", rcv.method, rcv.body)
	}
	want, err := req.Headers()
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range want {
		if g := rcv.header.Values(name); len(g) != 1 || g[0] != values[0] {
			t.Errorf("received %s = %q, want %q", name, g, values[0])
		}
	}
	if g := rcv.header.Get("Content-Length"); g != fmt.Sprint(len(req.Body)) {
		t.Errorf("Content-Length = %q, want %d", g, len(req.Body))
	}
	if rcv.header.Get("Accept-Encoding") != "" {
		t.Errorf("Accept-Encoding = %q, want none", rcv.header.Get("Accept-Encoding"))
	}
	// The receiver's check of rule 1 of the spec.
	if rcv.header.Get("X-Service-Signature") != Signature(req.Secret, rcv.body) {
		t.Error("the received signature does not match the received body")
	}
}

// TestSendDialsResolvedAddress sends to a name that only the injected
// Resolver knows: the connection goes to the resolved address and the Host
// header keeps the name.
func TestSendDialsResolvedAddress(t *testing.T) {
	hosts := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts <- r.Host
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	resolver := &fakeResolver{answers: map[string][]string{"receiver.test": {"127.0.0.1"}}}
	s := newLoopbackSender(t, SenderConfig{Resolver: resolver})
	res := s.Send(context.Background(), deliveryTo("http://receiver.test:"+port+"/"))
	if !res.OK() {
		t.Fatalf("StatusCode %d, Err %v", res.StatusCode, res.Err)
	}
	if h := <-hosts; h != "receiver.test:"+port {
		t.Errorf("Host = %q, want receiver.test:%s", h, port)
	}
}

// TestSendHTTPSVerifiesHostName dials the resolved loopback address but
// verifies the certificate against the URL's host name (httptest's
// certificate is valid for example.com).
func TestSendHTTPSVerifiesHostName(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	resolver := &fakeResolver{answers: map[string][]string{
		"example.com": {"127.0.0.1"},
		"other.test":  {"127.0.0.1"},
	}}
	s := newLoopbackSender(t, SenderConfig{Resolver: resolver})
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	s.transport.TLSClientConfig.RootCAs = roots

	if res := s.Send(context.Background(), deliveryTo("https://example.com:"+port+"/")); !res.OK() {
		t.Errorf("example.com: StatusCode %d, Err %v", res.StatusCode, res.Err)
	}
	res := s.Send(context.Background(), deliveryTo("https://other.test:"+port+"/"))
	var hostErr x509.HostnameError
	if !errors.As(res.Err, &hostErr) {
		t.Errorf("other.test: Err = %v, want a certificate host name error", res.Err)
	}
}

func TestSendInvalidRequest(t *testing.T) {
	s := NewSender(SenderConfig{}) // refuses private addresses; nothing is dialled anyway
	dialed := recordDials(s)
	for _, u := range []string{
		"ftp://example.com/",
		"file:///etc/passwd",
		"gopher://example.com/",
		"example.com/hook",
		"http:///nohost",
		"http://exa mple.com/",
		"",
	} {
		res := s.Send(context.Background(), deliveryTo(u))
		if !errors.Is(res.Err, ErrInvalidRequest) {
			t.Errorf("URL %q: Err = %v, want ErrInvalidRequest", u, res.Err)
		}
	}
	bad := deliveryTo("https://example.com/")
	bad.Secret = "plain"
	if res := s.Send(context.Background(), bad); !errors.Is(res.Err, ErrMalformedSecret) {
		t.Errorf("bad secret: Err = %v, want ErrMalformedSecret", res.Err)
	}
	if d := dialed(); len(d) != 0 {
		t.Errorf("dialled %v", d)
	}
}

// BenchmarkSend measures deliveries per second to a loopback receiver that
// answers 204, over kept-alive connections (64 parallel senders, the default
// 8 connections per host).
func BenchmarkSend(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(204)
	}))
	defer srv.Close()
	s := newLoopbackSender(b, SenderConfig{})
	req := deliveryTo(srv.URL)
	req.Body = bytes.Repeat([]byte("a"), 1024)
	var failed atomic.Int64
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0))) // about 64 goroutines
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !s.Send(context.Background(), req).OK() {
				failed.Add(1)
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d deliveries failed", n, b.N)
	}
}

// fakeResolver answers from a fixed table and records the names asked.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][]string
	asked   []string
}

func (f *fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, host)
	ips, ok := f.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]net.IPAddr, len(ips))
	for i, s := range ips {
		out[i] = net.IPAddr{IP: net.ParseIP(s)}
	}
	return out, nil
}

func (f *fakeResolver) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...)
}

// recordDials replaces the Sender's connect step with one that records the
// address and fails, so a test can never reach a non-loopback address even
// if the guard were broken. It returns the addresses dialled so far.
func recordDials(s *Sender) func() []string {
	var mu sync.Mutex
	var dialed []string
	s.dial = func(_ context.Context, network, address string) (net.Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		dialed = append(dialed, address)
		return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("test: dialling is disabled")}
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), dialed...)
	}
}
