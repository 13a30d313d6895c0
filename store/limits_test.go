package store_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

// Concurrent creates cannot take an account past its limits (the count and the insert are one
// step); another account's rows do not count; revoked keys do not count; a missing account is
// still ErrNotFound.
func TestLimitsHoldUnderConcurrentCreates(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	s.SetLimits(store.Limits{WebhookEndpoints: 3, ActiveAPIKeys: 4})
	a, b := whAccount(t, s, "alpha"), whAccount(t, s, "beta")
	if _, err := s.CreateWebhookEndpoint(ctx, b.ID, "https://example.com/b", "whsec_c2VjcmV0"); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	var made, refused int
	var other []error
	record := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		var le *store.LimitError
		switch {
		case err == nil:
			made++
		case errors.Is(err, store.ErrLimitReached) && errors.As(err, &le) && le.Max == 3:
			refused++
		default:
			other = append(other, err)
		}
	}
	for i := range 12 {
		wg.Go(func() {
			_, err := s.CreateWebhookEndpoint(ctx, a.ID, fmt.Sprintf("https://example.com/%d", i), "whsec_c2VjcmV0")
			record(err)
		})
	}
	wg.Wait()
	if made != 3 || refused != 9 || len(other) != 0 {
		t.Fatalf("endpoints: %d made, %d refused, other errors %v", made, refused, other)
	}

	key := func(i int) error {
		h := sha256.Sum256(fmt.Appendf(nil, "key-%d", i))
		_, err := s.CreateNamedAPIKey(ctx, a.ID, "k", "test", h[:], "svc_test_", "abcd")
		return err
	}
	for i := range 4 {
		if err := key(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := key(4); !errors.Is(err, store.ErrLimitReached) || err.Error() != "the account already has 4 active API keys, the most it may have" {
		t.Fatalf("fifth key: %v", err)
	}
	ks, err := s.APIKeysByAccount(ctx, a.ID)
	if err != nil || len(ks) != 4 {
		t.Fatalf("%d keys (%v)", len(ks), err)
	}
	if _, err := s.RevokeAccountAPIKey(ctx, a.ID, ks[0].ID); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte("key-plain"))
	if _, err := s.CreateAPIKey(ctx, a.ID, "live", h[:], "svc_live_"); err != nil {
		t.Fatalf("a key after a revocation: %v", err)
	}
	if _, err := s.CreateAPIKey(ctx, 999999, "live", h[:], "svc_live_"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing account: %v", err)
	}
}
