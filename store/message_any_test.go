package store_test

import (
	"context"
	"errors"
	"testing"

	"gateway/store"
)

// AnyMessageByID reads a message as MessageByID does, its campaign's name included, and only
// the account's.
func TestAnyMessageByIDCampaignName(t *testing.T) {
	t.Parallel()
	st, a, r := beganSend(t)
	ctx := context.Background()
	m, err := st.AnyMessageByID(ctx, a.ID, r.MessageID)
	if err != nil || m.CampaignID == nil || m.CampaignName != "API" || m.TemplateLanguage != "en_US" {
		t.Fatalf("%+v %v", m, err)
	}
	b := newAccount(t, st, "beta")
	if _, err := st.AnyMessageByID(ctx, b.ID, r.MessageID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another account's message: %v", err)
	}
}
