package dashboard_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gateway/store"
)

// An invitation is accepted only with the email it was made for (compared case-insensitively):
// someone else who holds the link cannot sign up with it, and a signed-in member of another
// workspace cannot join through it; both get a refusal that says why, and the invitation still
// works for the invited email.
func TestInvitationBoundToEmail(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme", "owner@acme.example")
	bobSignedIn := signUp(t, env, "Beta", "bob@beta.example")
	acme := accountOf(t, env.Store, "owner@acme.example")
	tok := mustInviteToken(t, owner.post("/dashboard/invite", url.Values{"email": {"alice@acme.example"}, "role": {"owner"}}).Body)

	// Opened by a signed-in user of another email, the link says at once that it is not theirs.
	for _, path := range []string{"/dashboard/signin?invite=", "/dashboard/signup?invite="} {
		p := bobSignedIn.get(path + tok)
		if p.Status != http.StatusForbidden || !strings.Contains(p.Body, "This invitation was made for alice@acme.example") ||
			!strings.Contains(p.Body, "You are signed in as bob@beta.example") {
			t.Fatalf("%s opened by bob, signed in: %d\n%s", path, p.Status, p.Body)
		}
	}

	page := newUser(t, env).get("/dashboard/signup?invite=" + tok)
	if !strings.Contains(page.Body, "only an account with that email can accept it") || !strings.Contains(page.Body, "alice@acme.example") {
		t.Fatalf("the invitation page does not say what binds it:\n%s", page.Body)
	}

	mallory := newUser(t, env)
	p := mallory.post("/dashboard/signup", url.Values{"invite": {tok}, "email": {"mallory@evil.example"}, "password": {"another good password"}})
	if p.Status != http.StatusForbidden || !strings.Contains(p.Body, "This invitation was made for alice@acme.example") {
		t.Fatalf("sign-up with another email: %d\n%s", p.Status, p.Body)
	}
	if _, err := env.Store.UserByEmail(context.Background(), "mallory@evil.example"); err == nil {
		t.Fatal("the refused sign-up created a user")
	}

	bob := newUser(t, env)
	p = bob.post("/dashboard/signin", url.Values{"invite": {tok}, "email": {"bob@beta.example"}, "password": {"correct horse battery"}})
	if p.Status != http.StatusForbidden || !strings.Contains(p.Body, "This invitation was made for alice@acme.example") {
		t.Fatalf("a member of another workspace signing in through it: %d\n%s", p.Status, p.Body)
	}
	bobUser, _ := env.Store.UserByEmail(context.Background(), "bob@beta.example")
	ms, _ := env.Store.MembershipsByUser(context.Background(), bobUser.ID)
	if len(ms) != 1 || ms[0].AccountID == acme {
		t.Fatalf("bob's memberships after the refusal: %+v", ms)
	}

	alice := newUser(t, env)
	p = alice.post("/dashboard/signup", url.Values{"invite": {tok}, "email": {"Alice@ACME.example"}, "password": {"another good password"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("the invited email in other case: %d\n%s", p.Status, p.Body)
	}
	aliceUser, _ := env.Store.UserByEmail(context.Background(), "alice@acme.example")
	ms, _ = env.Store.MembershipsByUser(context.Background(), aliceUser.ID)
	if len(ms) != 1 || ms[0].AccountID != acme || ms[0].Role != store.RoleOwner {
		t.Fatalf("alice's memberships: %+v", ms)
	}
}

// The store refuses an invitation accepted with another email even when the caller did not
// check first (AcceptInvitation and JoinInvitation).
func TestStoreInvitationBoundToEmail(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme", "owner@acme.example")
	signUp(t, env, "Beta", "bob@beta.example")
	tok := mustInviteToken(t, owner.post("/dashboard/invite", url.Values{"email": {"carol@acme.example"}, "role": {"owner"}}).Body)
	h := sha256Of(tok)
	if _, _, err := env.Store.AcceptInvitation(context.Background(), h, "dave@acme.example", "x"); err == nil {
		t.Fatal("AcceptInvitation with another email succeeded")
	}
	bob, _ := env.Store.UserByEmail(context.Background(), "bob@beta.example")
	if _, _, err := env.Store.JoinInvitation(context.Background(), h, bob.ID); err == nil {
		t.Fatal("JoinInvitation by a user of another email succeeded")
	}
	if _, err := env.Store.InvitationByToken(context.Background(), h); err != nil {
		t.Fatalf("the invitation after the refusals: %v", err)
	}
}

func sha256Of(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
