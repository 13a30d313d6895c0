package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

func count(t testing.TB, st *store.Store, q string, args ...any) int {
	t.Helper()
	var n int
	if err := st.DB().Get(&n, q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func sendIn(mobile, name, campaign string) store.SendInput {
	return store.SendInput{Mobile: mobile, Name: name, CampaignName: campaign, TemplateID: 7, TemplateName: "welcome",
		Content: json.RawMessage(`{"language":"en_US"}`)}
}

func TestBeginSendAndRecord(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	b := newAccount(t, st, "beta")

	r1, err := st.BeginSend(ctx, a.ID, sendIn("15551234567", "Ana", "API"))
	if err != nil {
		t.Fatal(err)
	}
	if !r1.ContactCreated || r1.Blocked || r1.MessageID == 0 || r1.ConversationID == 0 || r1.CampaignID == 0 {
		t.Fatalf("first send %+v", r1)
	}
	r2, err := st.BeginSend(ctx, a.ID, sendIn("15551234567", "Other", "API"))
	if err != nil {
		t.Fatal(err)
	}
	if r2.ContactCreated || r2.ContactID != r1.ContactID || r2.ConversationID != r1.ConversationID || r2.CampaignID != r1.CampaignID ||
		r2.MessageID == r1.MessageID {
		t.Fatalf("second send %+v, first %+v", r2, r1)
	}
	// The same number for another account is another contact.
	rb, _ := st.BeginSend(ctx, b.ID, sendIn("15551234567", "Ana", "API"))
	if !rb.ContactCreated || rb.ContactID == r1.ContactID || rb.CampaignID == r1.CampaignID {
		t.Fatalf("B's send %+v", rb)
	}
	if n := count(t, st, `SELECT count(*) FROM contacts WHERE account_id = $1 AND name = 'Ana'`, a.ID); n != 1 {
		t.Fatalf("name: %d", n)
	}
	if n := count(t, st, `SELECT count(*) FROM messages WHERE account_id = $1 AND status = 'pending'`, a.ID); n != 2 {
		t.Fatalf("%d pending", n)
	}
	if n := count(t, st, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'contact.created'`, a.ID); n != 1 {
		t.Fatalf("%d contact.created", n)
	}

	// Recording: the pending message becomes sent, once; another account cannot record it.
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	if err := st.RecordSent(ctx, b.ID, r1.MessageID, "wamid.X", "", at); err != store.ErrNotFound {
		t.Fatalf("B records A's message: %v", err)
	}
	if err := st.RecordSent(ctx, a.ID, r1.MessageID, "wamid.A1", "15551234567", at); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordSent(ctx, a.ID, r1.MessageID, "wamid.A1b", "", at); err != store.ErrNotFound {
		t.Fatalf("second record: %v", err)
	}
	m, err := st.MessageByID(ctx, a.ID, r1.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != "sent" || m.PlatformMessageID != "wamid.A1" || m.SentAt == nil || !m.SentAt.Equal(at) ||
		len(m.History) != 1 || m.History[0].Status != "sent" || !m.History[0].At.Equal(at) {
		t.Fatalf("recorded %+v", m)
	}
	if n := count(t, st, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'message.sent'`, a.ID); n != 1 {
		t.Fatalf("%d message.sent", n)
	}
	// The same wa_id as the destination adds no alias; a different one does.
	if err := st.RecordSent(ctx, a.ID, r2.MessageID, "wamid.A2", "115551234567", at); err != nil {
		t.Fatal(err)
	}
	if n := count(t, st, `SELECT count(*) FROM contact_aliases WHERE account_id = $1 AND contact_id = $2`, a.ID, r1.ContactID); n != 1 {
		t.Fatalf("%d aliases", n)
	}

	// A failure closes a pending send without events; a sent one cannot fail that way.
	r3, _ := st.BeginSend(ctx, a.ID, sendIn("15557654321", "", "Launch"))
	code := 131026
	if err := st.RecordSendFailure(ctx, a.ID, r3.MessageID, store.SendFailure{Code: &code, Title: "Message undeliverable", Details: "d"}, at); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordSendFailure(ctx, a.ID, r1.MessageID, store.SendFailure{Title: "x"}, at); err != store.ErrNotFound {
		t.Fatalf("failing a sent message: %v", err)
	}
	m, _ = st.MessageByID(ctx, a.ID, r3.MessageID)
	if m.Status != "failed" || m.ErrorCode == nil || *m.ErrorCode != code || *m.ErrorTitle != "Message undeliverable" ||
		len(m.History) != 1 || m.History[0].Status != "failed" || m.PlatformMessageID != "" {
		t.Fatalf("failed %+v", m)
	}
	if n := count(t, st, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'message.sent'`, a.ID); n != 2 {
		t.Fatalf("%d message.sent", n)
	}
	if _, err := st.MessageByID(ctx, b.ID, r1.MessageID); err != store.ErrNotFound {
		t.Fatalf("B reads A's message: %v", err)
	}
}

func TestBeginSendBlocked(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	if _, _, err := st.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "15551234567"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetContactBlocked(ctx, a.ID, "15551234567", true); err != nil {
		t.Fatal(err)
	}
	r, err := st.BeginSend(ctx, a.ID, sendIn("15551234567", "Ana", "New campaign"))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Blocked || r.ContactCreated || r.MessageID != 0 || r.ConversationID != 0 || r.CampaignID != 0 || r.ContactID == 0 {
		t.Fatalf("blocked %+v", r)
	}
	for _, q := range []string{`SELECT count(*) FROM messages WHERE account_id = $1`, `SELECT count(*) FROM campaigns WHERE account_id = $1`,
		`SELECT count(*) FROM conversations WHERE account_id = $1`} {
		if n := count(t, st, q, a.ID); n != 0 {
			t.Fatalf("%s = %d", q, n)
		}
	}
}

func TestBeginSendConcurrentNewContact(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	const n = 16
	var wg sync.WaitGroup
	recs := make([]store.SendRecord, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs[i], errs[i] = st.BeginSend(ctx, a.ID, sendIn("15551234567", "Ana", "Launch"))
		}()
	}
	wg.Wait()
	created := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if recs[i].ContactID != recs[0].ContactID || recs[i].ConversationID != recs[0].ConversationID || recs[i].CampaignID != recs[0].CampaignID ||
			recs[i].MessageID == 0 {
			t.Fatalf("send %d %+v, send 0 %+v", i, recs[i], recs[0])
		}
		if recs[i].ContactCreated {
			created++
		}
	}
	if created != 1 || count(t, st, `SELECT count(*) FROM events WHERE account_id = $1`, a.ID) != 1 {
		t.Fatalf("%d creations", created)
	}
}

func TestSandboxAndTestSends(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	now := time.Now()
	since := now.Add(-24 * time.Hour)
	c, err := st.ClaimSandboxDelivery(ctx, a.ID, "447700900123", since, 2)
	if err != nil || c != (store.SandboxClaim{}) {
		t.Fatalf("not joined: %+v %v", c, err)
	}
	if _, err := st.JoinSandbox(ctx, a.JoinCode, "447700900123", now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		c, _ = st.ClaimSandboxDelivery(ctx, a.ID, "447700900123", since, 2)
		if !c.Joined || !c.Active || !c.Claimed || c.RealSent != i {
			t.Fatalf("claim %d: %+v", i, c)
		}
	}
	c, _ = st.ClaimSandboxDelivery(ctx, a.ID, "447700900123", since, 2)
	if !c.Active || c.Claimed || c.RealSent != 2 {
		t.Fatalf("over the limit: %+v", c)
	}
	c, _ = st.ClaimSandboxDelivery(ctx, a.ID, "447700900123", now, 10)
	if !c.Joined || c.Active || c.Claimed {
		t.Fatalf("window over: %+v", c)
	}
	b := newAccount(t, st, "beta")
	if c, _ := st.ClaimSandboxDelivery(ctx, b.ID, "447700900123", since, 10); c.Joined {
		t.Fatalf("B sees A's participant: %+v", c)
	}

	tm, err := st.RecordTestSend(ctx, a.ID, store.TestSendInput{Destination: "447700900123", TemplateName: "sandbox_welcome",
		Delivery: "simulated", PlatformMessageID: "wamid.test.x", CreatedAt: now, ConversationID: 1, ContactID: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.TestMessageByID(ctx, a.ID, tm.ID)
	if err != nil || got.Delivery != "simulated" || got.CreatedAt.Sub(now).Abs() > time.Microsecond {
		t.Fatalf("test message %+v %v", got, err)
	}
	if _, err := st.TestMessageByID(ctx, b.ID, tm.ID); err != store.ErrNotFound {
		t.Fatalf("B reads A's test message: %v", err)
	}
	if n := count(t, st, `SELECT count(*) FROM events WHERE account_id = $1 AND test AND type = 'message.sent'`, a.ID); n != 1 {
		t.Fatalf("%d test events", n)
	}
	if _, err := st.RecordTestSend(ctx, a.ID, store.TestSendInput{Delivery: "bogus", CreatedAt: now}); err == nil {
		t.Fatal("a bad delivery was stored")
	}
}

// Status history keeps one precision, the platform's whole seconds, and is ordered by time,
// ties broken by rank: our accepted time (12:00:00.700) and the platform's delivered and read
// (12:00:00) come out sent, delivered, read, and sent_at agrees with the history. Before the fix
// our clock kept its microseconds, so sent (12:00:00.700) came after the delivered it preceded.
func TestStatusHistoryOnePrecision(t *testing.T) {
	t.Parallel()
	st, a, r := beganSend(t)
	ctx := context.Background()
	sec := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	if err := st.RecordSent(ctx, a.ID, r.MessageID, "wamid.H1", "", sec.Add(700*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"read", "delivered"} {
		if _, err := st.ApplyStatus(ctx, a.ID, store.StatusReport{PlatformMessageID: "wamid.H1", Status: s, OccurredAt: sec}); err != nil {
			t.Fatal(err)
		}
	}
	// A failed that arrives last but happened first sorts first: oldest first.
	if _, err := st.ApplyStatus(ctx, a.ID, store.StatusReport{PlatformMessageID: "wamid.H1", Status: "failed", OccurredAt: sec.Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	m, err := st.MessageByID(ctx, a.ID, r.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range m.History {
		got = append(got, h.Status+"@"+h.At.UTC().Format("15:04:05.000"))
	}
	want := "[failed@11:59:59.000 sent@12:00:00.000 delivered@12:00:00.000 read@12:00:00.000]"
	if s := fmt.Sprint(got); s != want {
		t.Fatalf("history %s, want %s", s, want)
	}
	if m.SentAt == nil || !m.SentAt.Equal(sec) {
		t.Fatalf("sent_at %v, want %v", m.SentAt, sec)
	}
}
