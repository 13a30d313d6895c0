package eventhook

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"
)

func TestCheckAddr(t *testing.T) {
	forbidden := []string{
		"127.0.0.1", "127.255.255.254", "::1",
		"10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "169.254.0.1", "fe80::1", "fe80::1%eth0",
		"0.0.0.0", "0.1.2.3", "::",
		"224.0.0.1", "239.255.255.250", "ff02::1", "ff05::2",
		"100.64.0.1", "100.100.100.200", "100.127.255.255",
		"192.0.0.1", "192.0.0.192",
		"198.18.0.1", "198.19.255.255",
		"192.0.2.1", "198.51.100.7", "203.0.113.9", "240.0.0.1", "255.255.255.255",
		"fc00::1", "fd00:ec2::254", "fec0::1",
		"2001:db8::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "100::1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:0.0.0.0",
		"::127.0.0.1",       // IPv4-compatible (deprecated)
		"64:ff9b::a00:1",    // NAT64 of 10.0.0.1
		"64:ff9b::7f00:1",   // NAT64 of 127.0.0.1
		"64:ff9b:1::1",      // local-use NAT64
		"2002:a00:1::1",     // 6to4 of 10.0.0.1
		"2002:a9fe:a9fe::1", // 6to4 of 169.254.169.254
	}
	for _, s := range forbidden {
		if err := checkAddr(netip.MustParseAddr(s)); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("checkAddr(%s) = %v, want ErrForbiddenAddress", s, err)
		}
	}
	if err := checkAddr(netip.Addr{}); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("checkAddr(invalid) = %v, want ErrForbiddenAddress", err)
	}
	allowed := []string{
		"93.184.216.34", "8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.0",
		"100.63.255.255", "100.128.0.0", "198.17.255.255", "198.20.0.0", "192.0.1.1",
		"169.253.255.255", "11.0.0.1",
		"2606:2800:220:1:248:1893:25c8:1946", "2a00:1450:4001:80b::200e",
		"::ffff:93.184.216.34",
		"64:ff9b::5db8:d822", // NAT64 of 93.184.216.34
		"2002:5db8:d822::1",  // 6to4 of 93.184.216.34
	}
	for _, s := range allowed {
		if err := checkAddr(netip.MustParseAddr(s)); err != nil {
			t.Errorf("checkAddr(%s) = %v, want nil", s, err)
		}
	}
}

func TestCheckHostName(t *testing.T) {
	for _, h := range []string{
		"localhost", "LOCALHOST.", "app.localhost", "metadata", "metadata.google.internal",
		"Metadata.Google.Internal.", "metadata.goog", "instance-data", "instance-data.ec2.internal",
	} {
		if err := checkHostName(h); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("checkHostName(%q) = %v, want ErrForbiddenAddress", h, err)
		}
	}
	for _, h := range []string{"example.com", "hooks.localhost.example.com", "metadata.example.com"} {
		if err := checkHostName(h); err != nil {
			t.Errorf("checkHostName(%q) = %v, want nil", h, err)
		}
	}
}

// TestSendRefusesForbiddenDestinations sends to refused destinations with
// the guard on. The connect step is replaced (recordDials), so a broken guard
// would show up as a recorded dial, never as real traffic.
func TestSendRefusesForbiddenDestinations(t *testing.T) {
	for _, tc := range []struct {
		url        string
		wantLookup []string // names the resolver must have been asked
	}{
		{url: "http://127.0.0.1:8080/hook"},
		{url: "http://10.0.0.1/hook"},
		{url: "http://169.254.169.254/latest/meta-data/"},
		{url: "http://[::1]:8080/hook"},
		{url: "http://[::ffff:127.0.0.1]/"},
		{url: "http://[::ffff:a9fe:a9fe]/"},
		{url: "http://0.0.0.0:80/"},
		{url: "https://[fe80::1%25eth0]/"},
		{url: "http://private.test/hook", wantLookup: []string{"private.test"}},
		{url: "http://mixed.test/hook", wantLookup: []string{"mixed.test"}},
		{url: "http://mixed-private-first.test/hook", wantLookup: []string{"mixed-private-first.test"}},
		{url: "http://mapped.test/hook", wantLookup: []string{"mapped.test"}},
		{url: "http://metadata.google.internal/computeMetadata/v1/"},
		{url: "https://localhost/"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			resolver := &fakeResolver{answers: map[string][]string{
				"private.test":             {"10.1.2.3"},
				"mixed.test":               {"93.184.216.34", "10.0.0.5"},
				"mixed-private-first.test": {"192.168.0.10", "93.184.216.34"},
				"mapped.test":              {"::ffff:169.254.169.254"},
				"metadata.google.internal": {"93.184.216.34"}, // refused by name whatever DNS says
				"localhost":                {"93.184.216.34"},
			}}
			s := NewSender(SenderConfig{Resolver: resolver})
			dialed := recordDials(s)
			res := s.Send(context.Background(), deliveryTo(tc.url))
			if !errors.Is(res.Err, ErrForbiddenAddress) {
				t.Errorf("Err = %v, want ErrForbiddenAddress", res.Err)
			}
			if res.OK() || res.StatusCode != 0 {
				t.Errorf("OK %v StatusCode %d", res.OK(), res.StatusCode)
			}
			if d := dialed(); len(d) != 0 {
				t.Errorf("dialled %v; the guard must refuse before connecting", d)
			}
			if got := resolver.names(); !slices.Equal(got, tc.wantLookup) {
				t.Errorf("resolver asked %v, want %v", got, tc.wantLookup)
			}
		})
	}
}

// TestSendDialsVettedAddressOnly checks that after resolution the sender
// connects to the vetted IP, not to the name again (DNS rebinding), without
// sending any traffic: the connect step is recorded and fails.
func TestSendDialsVettedAddressOnly(t *testing.T) {
	resolver := &fakeResolver{answers: map[string][]string{"public.test": {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"}}}
	s := NewSender(SenderConfig{Resolver: resolver})
	dialed := recordDials(s)
	res := s.Send(context.Background(), deliveryTo("http://public.test/hook"))
	if res.Err == nil || errors.Is(res.Err, ErrForbiddenAddress) {
		t.Errorf("Err = %v, want the recorded dial failure", res.Err)
	}
	want := []string{"93.184.216.34:80", "[2606:2800:220:1:248:1893:25c8:1946]:80"}
	if d := dialed(); !slices.Equal(d, want) {
		t.Errorf("dialled %v, want %v", d, want)
	}
	if got := resolver.names(); !slices.Equal(got, []string{"public.test"}) {
		t.Errorf("resolver asked %v, want public.test once", got)
	}
}

// TestSendRefusesLoopbackWithoutConnecting uses the real dialer against a
// loopback listener and proves that no connection reached it.
func TestSendRefusesLoopbackWithoutConnecting(t *testing.T) {
	ln := listenLoopback(t)
	s := NewSender(SenderConfig{})
	res := s.Send(context.Background(), deliveryTo("http://"+ln.Addr().String()+"/hook"))
	if !errors.Is(res.Err, ErrForbiddenAddress) {
		t.Errorf("Err = %v, want ErrForbiddenAddress", res.Err)
	}
	assertNoConnection(t, ln)
}

// TestDialerControlRefuses checks the second layer on its own: the Sender's
// own connect step (net.Dialer with Control) refuses a loopback address even
// when the first layer is bypassed.
func TestDialerControlRefuses(t *testing.T) {
	ln := listenLoopback(t)
	s := NewSender(SenderConfig{})
	conn, err := s.dial(context.Background(), "tcp", ln.Addr().String())
	if err == nil {
		conn.Close()
	}
	if !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("dial err = %v, want ErrForbiddenAddress", err)
	}
	assertNoConnection(t, ln)

	for _, tc := range []struct{ network, address string }{
		{"tcp4", "10.0.0.1:443"},
		{"tcp4", "169.254.169.254:80"},
		{"tcp6", "[::1]:80"},
		{"tcp6", "[::ffff:127.0.0.1]:80"},
		{"udp4", "93.184.216.34:53"},
		{"tcp4", "not-an-address:80"},
	} {
		if err := controlAddr(tc.network, tc.address, nil); !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("controlAddr(%s, %s) = %v, want ErrForbiddenAddress", tc.network, tc.address, err)
		}
	}
	if err := controlAddr("tcp4", "93.184.216.34:443", nil); err != nil {
		t.Errorf("controlAddr(public) = %v, want nil", err)
	}
}

func TestSendResolverFailure(t *testing.T) {
	s := NewSender(SenderConfig{Resolver: &fakeResolver{}})
	dialed := recordDials(s)
	res := s.Send(context.Background(), deliveryTo("https://unknown.test/"))
	var dnsErr *net.DNSError
	if !errors.As(res.Err, &dnsErr) || errors.Is(res.Err, ErrForbiddenAddress) {
		t.Errorf("Err = %v, want the resolver's DNS error", res.Err)
	}
	if d := dialed(); len(d) != 0 {
		t.Errorf("dialled %v", d)
	}
}

func listenLoopback(t *testing.T) *net.TCPListener {
	t.Helper()
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// assertNoConnection connects to ln itself and checks that its connection is
// the first in the accept queue, so nothing connected before.
func assertNoConnection(t *testing.T, ln *net.TCPListener) {
	t.Helper()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ln.SetDeadline(time.Now().Add(5 * time.Second))
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.RemoteAddr().String() != c.LocalAddr().String() {
		t.Errorf("a connection from %s reached the listener before the probe", a.RemoteAddr())
	}
}
