package server_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"gateway/server"
	"gateway/server/domain"
	"gateway/server/servertest"
)

// The demo limiter keys on the connection's address: a made-up X-Forwarded-For or X-Real-IP
// from a client that is not a trusted proxy changes nothing, so the 21st call is a 429 however
// the headers vary.
func TestDemoLimitIgnoresUntrustedForwardedFor(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	env := servertest.New(t, servertest.Config{Clock: clock.Now})
	a := env.NewTenant("Demo Co")
	demo, _ := env.NewKey(a.Account.ID, domain.ModeDemo)
	for i := 0; i < 20; i++ {
		h := map[string]string{"X-Forwarded-For": fmt.Sprintf("203.0.113.%d", i), "X-Real-IP": fmt.Sprintf("198.51.100.%d", i)}
		if r := env.Do(servertest.Request{Method: "GET", Path: "/v1/me", Key: demo, Header: h}); r.Status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	h := map[string]string{"X-Forwarded-For": "203.0.113.250", "X-Real-IP": "198.51.100.250"}
	if r := env.Do(servertest.Request{Method: "GET", Path: "/v1/me", Key: demo, Header: h}); r.Status != http.StatusTooManyRequests {
		t.Fatalf("21st call with a made-up X-Forwarded-For: %d", r.Status)
	}
}

// Behind a trusted proxy (GATEWAY_TRUSTED_PROXIES) the client is the rightmost untrusted
// address of X-Forwarded-For (else X-Real-IP): each client has its own bucket, and IPv6
// clients share one per /64.
func TestDemoLimitBehindTrustedProxy(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	env := servertest.New(t, servertest.Config{Clock: clock.Now,
		Options: server.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")}}})
	a := env.NewTenant("Demo Co")
	demo, _ := env.NewKey(a.Account.ID, domain.ModeDemo)
	call := func(h map[string]string) int {
		return env.Do(servertest.Request{Method: "GET", Path: "/v1/me", Key: demo, Header: h}).Status
	}
	// Client 203.0.113.7 through a second trusted hop (10.0.0.2): its own bucket, whatever it
	// claims to the left.
	for i := 0; i < 20; i++ {
		if s := call(map[string]string{"X-Forwarded-For": fmt.Sprintf("1.2.3.%d, 203.0.113.7, 10.0.0.2", i)}); s != http.StatusOK {
			t.Fatalf("client A call %d: %d", i+1, s)
		}
	}
	if s := call(map[string]string{"X-Forwarded-For": "203.0.113.7"}); s != http.StatusTooManyRequests {
		t.Fatalf("client A's 21st call: %d", s)
	}
	if s := call(map[string]string{"X-Forwarded-For": "203.0.113.8"}); s != http.StatusOK {
		t.Fatalf("client B: %d", s)
	}
	if s := call(map[string]string{"X-Real-IP": "203.0.113.9"}); s != http.StatusOK {
		t.Fatalf("client C by X-Real-IP: %d", s)
	}
	// IPv6: twenty calls from addresses of one /64 exhaust it; another /64 is a new client.
	for i := 0; i < 20; i++ {
		if s := call(map[string]string{"X-Forwarded-For": fmt.Sprintf("2001:db8:1:2::%x", i+1)}); s != http.StatusOK {
			t.Fatalf("v6 call %d: %d", i+1, s)
		}
	}
	if s := call(map[string]string{"X-Forwarded-For": "2001:db8:1:2:ffff:ffff:ffff:ffff"}); s != http.StatusTooManyRequests {
		t.Fatalf("same /64: %d", s)
	}
	if s := call(map[string]string{"X-Forwarded-For": "2001:db8:1:3::1"}); s != http.StatusOK {
		t.Fatalf("another /64: %d", s)
	}
}
