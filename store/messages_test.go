package store_test

import (
	"context"
	"crypto/sha256"
	"reflect"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// beganSend is a store over a fresh database with account "acme" and one message it began to
// send to 15551234567.
func beganSend(t *testing.T) (*store.Store, store.Account, store.SendRecord) {
	t.Helper()
	st := storetest.New(t)
	a := newAccount(t, st, "acme")
	r, err := st.BeginSend(context.Background(), a.ID, sendIn("15551234567", "Ana", "API"))
	if err != nil {
		t.Fatal(err)
	}
	return st, a, r
}

// MessageByID lists the history in rank order whatever the arrival order and timestamps, and
// returns only the account's outbound messages.
func TestMessageByID(t *testing.T) {
	t.Parallel()
	st, a, r := beganSend(t)
	ctx := context.Background()
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

// A message is read with its campaign's name (kept per account and campaign after the first
// read) and the language its template was sent in, from its content; two accounts' campaigns
// are told apart, and a message without a campaign names none.
func TestMessageByIDCampaignAndLanguage(t *testing.T) {
	t.Parallel()
	st, a, r := beganSend(t)
	ctx := context.Background()
	b := newAccount(t, st, "beta")
	rb, err := st.BeginSend(ctx, b.ID, sendIn("15551234567", "Bea", "Spring sale"))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second read finds the names kept
		for _, c := range []struct {
			account, id int64
			campaign    string
		}{{a.ID, r.MessageID, "API"}, {b.ID, rb.MessageID, "Spring sale"}} {
			m, err := st.MessageByID(ctx, c.account, c.id)
			if err != nil || m.CampaignName != c.campaign || m.TemplateLanguage != "en_US" || m.RecipientMobile != "15551234567" {
				t.Fatalf("account %d: %+v %v", c.account, m, err)
			}
		}
	}
	if _, err := st.DB().Exec(`UPDATE messages SET campaign_id = NULL WHERE account_id = $1 AND id = $2`, a.ID, r.MessageID); err != nil {
		t.Fatal(err)
	}
	if m, err := st.MessageByID(ctx, a.ID, r.MessageID); err != nil || m.CampaignID != nil || m.CampaignName != "" {
		t.Fatalf("no campaign: %+v %v", m, err)
	}
}

// MessageByID's scan, written by hand, reads every column where sqlx's reflection over the db
// tags puts it: as sent (most nullable columns NULL) and with every column set.
func TestMessageScanMatchesColumns(t *testing.T) {
	t.Parallel()
	st, a, r := beganSend(t)
	ctx := context.Background()
	var campaign int64
	if err := st.DB().Get(&campaign, `INSERT INTO campaigns (account_id, name) VALUES ($1, 'c') RETURNING id`, a.ID); err != nil {
		t.Fatal(err)
	}
	compare := func(what string) {
		t.Helper()
		got, err := st.MessageByID(ctx, a.ID, r.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		want, err := st.MessageByIDReflect(ctx, a.ID, r.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: MessageByID %+v\nwant %+v", what, got, want)
		}
	}
	compare("as sent")
	if _, err := st.DB().Exec(`UPDATE messages SET campaign_id = $3, template_id = NULL, platform_message_id = 'wamid.s1',
		status = 'failed', error_code = 131026, error_title = 'Undeliverable', error_details = 'no WhatsApp',
		sent_at = '2026-03-01T10:00:00Z', client_reference = 'order-7', outcome_unknown = true,
		delivered_at = '2026-03-01T10:00:01Z', read_at = '2026-03-01T10:00:02Z', failed_at = '2026-03-01T10:00:03Z'
		WHERE account_id = $1 AND id = $2`, a.ID, r.MessageID, campaign); err != nil {
		t.Fatal(err)
	}
	compare("every column set")
	m, _ := st.MessageByID(ctx, a.ID, r.MessageID)
	if m.CampaignID == nil || *m.CampaignID != campaign || m.ErrorCode == nil || *m.ErrorCode != 131026 || !m.OutcomeUnknown ||
		m.ClientReference == nil || *m.ClientReference != "order-7" || len(m.History) != 4 {
		t.Fatalf("every column set: %+v", m)
	}
}

// PrincipalWithMessage reads what PrincipalByKeyHash and MessageByID read, in one statement,
// revoked keys included; ErrNotFound for an unknown hash and for a message the key's account
// did not send (another account's, an inbound one, a missing id).
func TestPrincipalWithMessage(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a, b := newAccount(t, st, "acme"), newAccount(t, st, "other")
	hashA, hashB := sha256.Sum256([]byte("acme key")), sha256.Sum256([]byte("other key"))
	keyA, err := st.CreateAPIKey(ctx, a.ID, "live", hashA[:], "wak_live_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateAPIKey(ctx, b.ID, "live", hashB[:], "wak_live_b"); err != nil {
		t.Fatal(err)
	}
	r, err := st.BeginSend(ctx, a.ID, sendIn("15551234567", "Ana", "API"))
	if err != nil {
		t.Fatal(err)
	}
	sent := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	if err := st.RecordSent(ctx, a.ID, r.MessageID, "wamid.p1", "", sent); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ApplyStatus(ctx, a.ID, store.StatusReport{PlatformMessageID: "wamid.p1", Status: "delivered",
		OccurredAt: sent.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}

	check := func() {
		t.Helper()
		wantP, err := st.PrincipalByKeyHash(ctx, hashA[:])
		if err != nil {
			t.Fatal(err)
		}
		wantM, err := st.MessageByID(ctx, a.ID, r.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		p, m, err := st.PrincipalWithMessage(ctx, hashA[:], r.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p, wantP) {
			t.Fatalf("principal %+v, want %+v", p, wantP)
		}
		if !reflect.DeepEqual(m, wantM) {
			t.Fatalf("message %+v, want %+v", m, wantM)
		}
	}
	check()
	if _, err := st.RevokeAPIKey(ctx, keyA.ID); err != nil {
		t.Fatal(err)
	}
	check() // the revoked key is read as such, for the caller to refuse

	var in int64
	if err := st.DB().Get(&in, `INSERT INTO messages (account_id, contact_id, conversation_id, direction, type, destination, status)
		VALUES ($1, $2, $3, 'in', 'text', '15550000000', 'received') RETURNING id`, a.ID, r.ContactID, r.ConversationID); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		hash []byte
		id   int64
	}{
		"another account's message": {hashB[:], r.MessageID},
		"an inbound message":        {hashA[:], in},
		"a missing message":         {hashA[:], r.MessageID + 100},
		"an unknown key":            {[]byte("no such hash"), r.MessageID},
	} {
		if _, _, err := st.PrincipalWithMessage(ctx, c.hash, c.id); err != store.ErrNotFound {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
}
