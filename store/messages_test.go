package store_test

import (
	"context"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// MessageByID lists the history in rank order whatever the arrival order and timestamps, and
// returns only the account's outbound messages.
func TestMessageByID(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	r, err := st.BeginSend(ctx, a.ID, sendIn("15551234567", "Ana", "API"))
	if err != nil {
		t.Fatal(err)
	}
	// Still pending: readable by the store (the API hides it), no history yet.
	m, err := st.MessageByID(ctx, a.ID, r.MessageID)
	if err != nil || m.Status != "pending" || len(m.History) != 0 || m.PlatformMessageID != "" || m.SentAt != nil ||
		m.Destination != "15551234567" || m.TemplateName != "welcome" || m.CampaignID == nil || *m.CampaignID != r.CampaignID {
		t.Fatalf("pending %+v %v", m, err)
	}
	sent := time.Date(2026, 3, 1, 10, 0, 0, 500_000_000, time.UTC)
	if err := st.RecordSent(ctx, a.ID, r.MessageID, "wamid.1", "", sent); err != nil {
		t.Fatal(err)
	}
	// The platform's timestamps have whole seconds: delivered can look earlier than our sent.
	for _, rep := range []store.StatusReport{
		{PlatformMessageID: "wamid.1", Status: "read", OccurredAt: sent.Add(3 * time.Second)},
		{PlatformMessageID: "wamid.1", Status: "delivered", OccurredAt: sent.Truncate(time.Second)},
	} {
		if _, err := st.ApplyStatus(ctx, a.ID, rep); err != nil {
			t.Fatal(err)
		}
	}
	m, err = st.MessageByID(ctx, a.ID, r.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != "read" || len(m.History) != 3 || m.History[0].Status != "sent" || m.History[1].Status != "delivered" ||
		m.History[2].Status != "read" || !m.History[1].At.Equal(sent.Truncate(time.Second)) {
		t.Fatalf("history %+v", m)
	}
	// Inbound messages are not returned.
	var in int64
	if err := st.DB().Get(&in, `INSERT INTO messages (account_id, contact_id, conversation_id, direction, type, destination, status)
		VALUES ($1, $2, $3, 'in', 'text', '15550000000', 'received') RETURNING id`, a.ID, r.ContactID, r.ConversationID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.MessageByID(ctx, a.ID, in); err != store.ErrNotFound {
		t.Fatalf("inbound message: %v", err)
	}
	if _, err := st.MessageByID(ctx, a.ID, r.MessageID+100); err != store.ErrNotFound {
		t.Fatalf("missing message: %v", err)
	}
}
