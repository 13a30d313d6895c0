package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// A second rotation while the first one's overlap runs is refused (ErrRotationInProgress, with
// when it ends): it would drop at once the secret receivers were promised 24 hours with. The
// original and the first new secret keep signing; once the overlap has ended, rotating again
// is allowed.
func TestRotateWebhookSecretTwice(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	a := whAccount(t, s, "alpha")
	e, _ := s.CreateWebhookEndpoint(ctx, a.ID, "https://example.com/1", "whsec_b3JpZ2luYWw=")
	if _, err := s.RotateWebhookSecret(ctx, a.ID, e.ID, "whsec_Zmlyc3Q=", 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	_, err := s.RotateWebhookSecret(ctx, a.ID, e.ID, "whsec_c2Vjb25k", 24*time.Hour)
	var inProgress *store.RotationInProgressError
	if !errors.Is(err, store.ErrRotationInProgress) || !errors.As(err, &inProgress) ||
		inProgress.Until.Before(time.Now().Add(23*time.Hour)) || inProgress.Until.After(time.Now().Add(25*time.Hour)) {
		t.Fatalf("a second rotation during the overlap: %v", err)
	}
	if _, err := s.SendTestEvent(ctx, a.ID, e.ID, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	cs, err := s.ClaimDueDeliveries(ctx, time.Now(), 10, time.Minute, nil, nil)
	if err != nil || len(cs) != 1 || cs[0].Secret != "whsec_Zmlyc3Q=" || cs[0].PreviousSecret != "whsec_b3JpZ2luYWw=" {
		t.Fatalf("after the refused rotation: %+v, %v", cs, err)
	}
	// The overlap ends.
	if _, err := s.DB().Exec(`UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RotateWebhookSecret(ctx, a.ID, e.ID, "whsec_c2Vjb25k", 24*time.Hour); err != nil {
		t.Fatalf("a rotation after the overlap: %v", err)
	}
	if _, err := s.RotateWebhookSecret(ctx, a.ID, 999999, "whsec_eA==", time.Hour); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("rotation of an unknown endpoint: %v", err)
	}
}
