package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Rotating an endpoint's secret a second time while the first rotation's overlap runs is
// refused with a clear message (409) and shows no new secret: the original secret keeps
// signing for the 24 hours promised.
func TestRotateWebhookTwiceRefused(t *testing.T) {
	env := newEnv(t, true)
	a := signUp(t, env, "Acme", "owner@acme.example")
	accA := accountOf(t, env.Store, "owner@acme.example")
	first := find(t, reSecret, a.post("/dashboard/webhooks", url.Values{"url": {"http://127.0.0.1:9/hook"}}).Body)
	eps, _ := env.Store.WebhookEndpointsByAccount(context.Background(), accA)
	if len(eps) != 1 {
		t.Fatalf("%d endpoints", len(eps))
	}
	rotate := fmt.Sprintf("/dashboard/webhooks/%d/rotate", eps[0].ID)
	p := a.post(rotate, nil)
	second := find(t, reSecret, p.Body)
	if p.Status != http.StatusOK || second == first {
		t.Fatalf("first rotation: %d, secret %q (was %q)", p.Status, second, first)
	}
	p = a.post(rotate, nil)
	if p.Status != http.StatusConflict || !strings.Contains(p.Body, "already in progress") || reSecret.MatchString(p.Body) {
		t.Fatalf("second rotation: %d\n%s", p.Status, p.Body)
	}
}
