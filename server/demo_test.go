package server_test

import (
	"net/http"
	"testing"
	"time"

	"gateway/server/domain"
	"gateway/server/servertest"
)

// The public demo key is limited per client IP: a burst of 20, refilled at 60 a minute; the
// 21st call in the same instant is a 429 with Retry-After and RateLimit headers, and a second
// later one more call is allowed. A live key of the same server is never limited.
func TestDemoKeyRateLimit(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	env := servertest.New(t, servertest.Config{Clock: clock.Now})
	a := env.NewTenant("Demo Co")
	demo, _ := env.NewKey(a.Account.ID, domain.ModeDemo)

	for i := 0; i < 20; i++ {
		if r := env.Do(servertest.Request{Method: "GET", Path: "/v1/me", Key: demo}); r.Status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	r := env.Do(servertest.Request{Method: "GET", Path: "/v1/me", Key: demo})
	if r.Status != http.StatusTooManyRequests || r.Code(t) != "rate_limited" {
		t.Fatalf("21st call: %d %s", r.Status, r.Body)
	}
	if r.Header.Get("Retry-After") != "1" || r.Header.Get("RateLimit") == "" || r.Header.Get("RateLimit-Policy") == "" {
		t.Fatalf("headers %v", r.Header)
	}
	// Other endpoints share the bucket.
	if r := env.Do(servertest.Request{Method: "GET", Path: "/v1/templates", Key: demo}); r.Status != http.StatusTooManyRequests {
		t.Fatalf("templates while limited: %d", r.Status)
	}
	clock.Advance(time.Second)
	if r := env.Do(servertest.Request{Method: "GET", Path: "/v1/contacts", Key: demo}); r.Status != http.StatusOK {
		t.Fatalf("after a second: %d %s", r.Status, r.Body)
	}
	for i := 0; i < 30; i++ {
		if r := env.Do(servertest.Request{Method: "GET", Path: "/v1/me", Key: a.Live}); r.Status != http.StatusOK {
			t.Fatalf("live key limited: %d", r.Status)
		}
	}
}

// Sends on the demo key have their own, smaller bucket: 10, then 429.
func TestDemoKeySendLimit(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	env := servertest.New(t, servertest.Config{Clock: clock.Now})
	a := env.NewTenant("Demo Co")
	demo, _ := env.NewKey(a.Account.ID, domain.ModeDemo)
	body := map[string]any{"destination": "15551234567", "template_name": "sandbox_welcome"}
	for i := 0; i < 10; i++ {
		if r := env.Do(servertest.Request{Method: "POST", Path: "/v1/messages/template", Key: demo, Body: body}); r.Status != http.StatusOK {
			t.Fatalf("send %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	r := env.Do(servertest.Request{Method: "POST", Path: "/v1/messages/template", Key: demo, Body: body})
	if r.Status != http.StatusTooManyRequests || r.Code(t) != "rate_limited" {
		t.Fatalf("11th send: %d %s", r.Status, r.Body)
	}
}
