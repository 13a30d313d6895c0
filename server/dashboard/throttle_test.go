package dashboard_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"testing"

	"gateway/server"
	"gateway/server/dashboard"
	"gateway/server/servertest"
)

// proxiedEnv is a gateway whose dashboard trusts loopback as a proxy, so that a test can speak
// from several client addresses through X-Forwarded-For.
func proxiedEnv(t *testing.T, signupOpen bool) *servertest.Env {
	return servertest.New(t, servertest.Config{Options: server.Options{
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
	}, Dashboard: dashboard.Options{Development: true, SignupOpen: signupOpen}})
}

// from posts a form as the client at addr.
func (u *user) from(addr, path string, form url.Values) page {
	u.t.Helper()
	return u.do("POST", path, form, map[string]string{"Sec-Fetch-Site": "same-origin", "X-Forwarded-For": addr})
}

// Thirty wrong passwords for one email sent at once: each is counted before its password is
// checked, so no more than the limit are checked and the rest are refused with 429.
func TestSignInThrottleCountsBeforeChecking(t *testing.T) {
	env := newEnv(t, true)
	signUp(t, env, "Acme", "owner@acme.example")
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[int]int{}
	start := make(chan struct{})
	for range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := newUser(t, env)
			<-start
			p := u.post("/dashboard/signin", url.Values{"email": {"owner@acme.example"}, "password": {"wrong password!"}})
			mu.Lock()
			got[p.Status]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	if got[http.StatusUnauthorized] > 5 || got[http.StatusUnauthorized]+got[http.StatusTooManyRequests] != 30 {
		t.Fatalf("30 concurrent wrong passwords: %v; want at most 5 checked (401), the rest 429", got)
	}
}

// A stranger at another address who guesses the user's password until refused does not lock
// the user out: the lockout is per email and address. The stranger's own address stays
// locked, even with the right password.
func TestSignInLockoutIsPerEmailAndAddress(t *testing.T) {
	env := proxiedEnv(t, true)
	signUp(t, env, "Acme", "owner@acme.example")
	stranger := newUser(t, env)
	statuses := map[int]int{}
	for range 25 {
		p := stranger.from("203.0.113.7", "/dashboard/signin", url.Values{"email": {"owner@acme.example"}, "password": {"wrong password!"}})
		statuses[p.Status]++
	}
	if statuses[http.StatusUnauthorized] != 5 || statuses[http.StatusTooManyRequests] != 20 {
		t.Fatalf("the stranger's 25 guesses: %v, want 5 checked and 20 refused", statuses)
	}
	right := url.Values{"email": {"owner@acme.example"}, "password": {"correct horse battery"}}
	if p := newUser(t, env).from("198.51.100.20", "/dashboard/signin", right); p.Status != http.StatusSeeOther {
		t.Fatalf("the real user at their own address: %d, want 303 (locked out by a stranger)", p.Status)
	}
	if p := newUser(t, env).from("203.0.113.7", "/dashboard/signin", right); p.Status != http.StatusTooManyRequests {
		t.Fatalf("the right password from the stranger's address: %d, want 429", p.Status)
	}
	// Guesses from many addresses reach the email's ceiling (100 failures) and lock it.
	for i := range 20 {
		for range 5 {
			newUser(t, env).from(fmt.Sprintf("192.0.2.%d", i+1), "/dashboard/signin", url.Values{"email": {"owner@acme.example"}, "password": {"wrong password!"}})
		}
	}
	if p := newUser(t, env).from("198.51.100.21", "/dashboard/signin", right); p.Status != http.StatusTooManyRequests {
		t.Fatalf("after 105 failures from 21 addresses: %d, want 429", p.Status)
	}
}

// With sign-up closed, a made-up invitation and a sign-up without one are refused before any
// password is hashed; sign-up is throttled per client address; a real invitation still
// signs up (one hash).
func TestSignUpChecksBeforeHashingAndIsThrottled(t *testing.T) {
	hashes := dashboard.CountHashes(t)
	env := proxiedEnv(t, false)
	form := func(invite, email string) url.Values {
		return url.Values{"invite": {invite}, "email": {email}, "workspace": {"X"}, "password": {"another good password"}}
	}
	u := newUser(t, env)
	if p := u.from("203.0.113.7", "/dashboard/signup", form("made-up", "a@x.example")); p.Status != http.StatusNotFound {
		t.Fatalf("a made-up invitation: %d, want 404", p.Status)
	}
	if p := u.from("203.0.113.7", "/dashboard/signup", form("", "a@x.example")); p.Status != http.StatusForbidden {
		t.Fatalf("sign-up closed: %d, want 403", p.Status)
	}
	if n := hashes.Load(); n != 0 {
		t.Fatalf("%d password hashes for refused sign-ups, want 0", n)
	}
	for range 8 {
		u.from("203.0.113.7", "/dashboard/signup", form("made-up", "a@x.example"))
	}
	p := u.from("203.0.113.7", "/dashboard/signup", form("made-up", "a@x.example"))
	if p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" {
		t.Fatalf("the 11th sign-up from one address: %d, want 429 with Retry-After", p.Status)
	}
	// Another address is not throttled, and a real invitation signs up.
	owner := newUser(t, env)
	acct, _ := env.Store.CreateAccount(t.Context(), "Acme", "owner@acme.example", "abcd-efgh")
	hash, _ := dashboard.HashPassword("correct horse battery")
	if _, err := env.Store.CreateUser(t.Context(), acct.ID, "owner@acme.example", hash, "owner"); err != nil {
		t.Fatal(err)
	}
	if p := owner.from("198.51.100.1", "/dashboard/signin", url.Values{"email": {"owner@acme.example"}, "password": {"correct horse battery"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("owner sign-in: %d", p.Status)
	}
	tok := mustInviteToken(t, owner.from("198.51.100.1", "/dashboard/invite", url.Values{"email": {"dev@acme.example"}, "role": {"developer"}}).Body)
	if p := newUser(t, env).from("198.51.100.2", "/dashboard/signup", form(tok, "dev@acme.example")); p.Status != http.StatusSeeOther {
		t.Fatalf("a real invitation from another address: %d\n%s", p.Status, p.Body)
	}
	if n := hashes.Load(); n != 1 {
		t.Fatalf("%d password hashes, want 1 (the accepted invitation)", n)
	}
}
