package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// whAccount creates an account with a unique join code.
func whAccount(t *testing.T, s *store.Store, name string) store.Account {
	t.Helper()
	a, err := s.CreateAccount(context.Background(), name, name+"@example.com", fmt.Sprintf("%s-%d", name, time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestWebhookEndpoints(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	a, b := whAccount(t, s, "alpha"), whAccount(t, s, "beta")

	w1, err := s.CreateWebhookEndpoint(ctx, a.ID, "https://example.com/hook", "whsec_c2VjcmV0")
	if err != nil {
		t.Fatal(err)
	}
	if !w1.Enabled || w1.AccountID != a.ID || w1.URL != "https://example.com/hook" || w1.FailingSince != nil {
		t.Fatalf("created %+v", w1)
	}
	if _, err := s.CreateWebhookEndpoint(ctx, a.ID, "https://example.org/second", "whsec_c2VjcmV0"); err != nil {
		t.Fatal("a second endpoint for the same account:", err)
	}
	if _, err := s.CreateWebhookEndpoint(ctx, 999999, "https://example.com/x", "whsec_c2VjcmV0"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown account: %v", err)
	}

	// The secret is sealed at rest.
	var sealed []byte
	if err := s.DB().GetContext(ctx, &sealed, `SELECT secret FROM webhook_endpoints WHERE id = $1`, w1.ID); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("c2VjcmV0")) {
		t.Fatal("secret stored in clear")
	}

	list, err := s.WebhookEndpointsByAccount(ctx, a.ID)
	if err != nil || len(list) != 2 {
		t.Fatalf("list A: %v %+v", err, list)
	}
	if list, _ := s.WebhookEndpointsByAccount(ctx, b.ID); len(list) != 0 {
		t.Fatalf("B sees %+v", list)
	}

	// Every id-based operation is scoped to the account.
	if _, err := s.WebhookEndpointByID(ctx, b.ID, w1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("B reads A's endpoint: %v", err)
	}
	if _, err := s.DeleteWebhookEndpoint(ctx, b.ID, w1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("B deletes A's endpoint: %v", err)
	}
	if _, err := s.SetWebhookEndpointEnabled(ctx, b.ID, w1.ID, false, store.DisabledOperator); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("B disables A's endpoint: %v", err)
	}
	if acct, err := s.WebhookEndpointAccount(ctx, w1.ID); err != nil || acct != a.ID {
		t.Fatalf("owner: %d %v", acct, err)
	}

	w, err := s.SetWebhookEndpointEnabled(ctx, a.ID, w1.ID, false, store.DisabledOperator)
	if err != nil || w.Enabled || w.DisabledReason != store.DisabledOperator {
		t.Fatalf("disable: %v %+v", err, w)
	}
	w, err = s.SetWebhookEndpointEnabled(ctx, a.ID, w1.ID, true, "ignored")
	if err != nil || !w.Enabled || w.DisabledReason != "" {
		t.Fatalf("enable: %v %+v", err, w)
	}

	if _, err := s.DeleteWebhookEndpoint(ctx, a.ID, w1.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WebhookEndpointByID(ctx, a.ID, w1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if _, err := s.WebhookEndpointAccount(ctx, w1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("owner after delete: %v", err)
	}
}
