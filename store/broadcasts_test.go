package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

func newBroadcast(t *testing.T, s *store.Store, accountID int64, n int) store.Broadcast {
	t.Helper()
	rs := make([]store.RecipientInput, n)
	for i := range rs {
		rs[i] = store.RecipientInput{Mobile: fmt.Sprintf("4477%08d", i)}
	}
	if n > 0 {
		rs = append(rs, rs[0]) // listed twice, stored once
	}
	b, err := s.CreateBroadcast(context.Background(), accountID, store.BroadcastInput{Name: "spring", PhoneNumberID: "1",
		TemplateName: "welcome", TemplateLanguage: "en_US", Params: []store.BroadcastParam{{Variable: "name"}}}, rs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The never-twice rule in the store: a claim's holder alone can mark a recipient sending, once;
// nobody can after a pause or a cancel; a lapsed claim goes to the next claimer and the old
// holder's mark fails; another account's broadcast is out of reach.
func TestBroadcastClaimAndMark(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	a := whAccount(t, s, "a")
	other := whAccount(t, s, "b")
	b := newBroadcast(t, s, a.ID, 3)
	if c, _ := s.BroadcastCounts(ctx, a.ID, b.ID); c[store.RecipientPending] != 3 {
		t.Fatalf("counts %v, want 3 pending (the duplicate merged)", c)
	}
	now := time.Now().Add(time.Second)
	c1, err := s.ClaimBroadcastRecipients(ctx, a.ID, b.ID, "", now, 2, time.Minute, 0)
	if err != nil || len(c1.Recipients) != 2 {
		t.Fatalf("claim: %v, %d recipients, want 2", err, len(c1.Recipients))
	}
	if c, _ := s.ClaimBroadcastRecipients(ctx, other.ID, b.ID, "", now, 10, time.Minute, 0); len(c.Recipients) != 0 {
		t.Fatal("another account claimed the broadcast's recipients")
	}
	// The claimed rows are not due again while the lease runs.
	c2, err := s.ClaimBroadcastRecipients(ctx, a.ID, b.ID, "", now, 10, time.Minute, 0)
	if err != nil || len(c2.Recipients) != 1 {
		t.Fatalf("second claim: %v, %d recipients, want the 1 left", err, len(c2.Recipients))
	}
	r := c1.Recipients[0]
	if ok, err := markSending(ctx, s, a.ID, r.ID, c2.Recipients[0].Claim, now); err != nil || ok {
		t.Fatalf("marked with another claim's token: %v %v", ok, err)
	}
	if ok, err := markSending(ctx, s, a.ID, r.ID, r.Claim, now); err != nil || !ok {
		t.Fatalf("mark: %v %v, want marked", ok, err)
	}
	if ok, _ := markSending(ctx, s, a.ID, r.ID, r.Claim, now); ok {
		t.Fatal("marked twice")
	}
	// A lapsed claim: the next claimer gets the row and the old holder's mark fails.
	later := now.Add(2 * time.Minute)
	c3, err := s.ClaimBroadcastRecipients(ctx, a.ID, b.ID, "", later, 10, time.Minute, 0)
	if err != nil || len(c3.Recipients) != 2 {
		t.Fatalf("claim after the leases: %v, %d recipients, want 2 (the sending one is not due)", err, len(c3.Recipients))
	}
	if ok, _ := markSending(ctx, s, a.ID, c1.Recipients[1].ID, c1.Recipients[1].Claim, later); ok {
		t.Fatal("a lapsed claim was marked")
	}
	// Paused: no mark; resumed: the mark goes through.
	if _, err := s.PauseBroadcast(ctx, a.ID, b.ID, store.PauseOperator, nil); err != nil {
		t.Fatal(err)
	}
	if ok, _ := markSending(ctx, s, a.ID, c3.Recipients[0].ID, c3.Recipients[0].Claim, later); ok {
		t.Fatal("marked while paused")
	}
	if _, err := s.ResumeBroadcast(ctx, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	if ok, _ := markSending(ctx, s, a.ID, c3.Recipients[0].ID, c3.Recipients[0].Claim, later); !ok {
		t.Fatal("not marked after the resume")
	}
	// Cancelled: the pending recipient is cancelled and cannot be marked.
	if _, err := s.CancelBroadcast(ctx, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	if ok, _ := markSending(ctx, s, a.ID, c3.Recipients[1].ID, c3.Recipients[1].Claim, later); ok {
		t.Fatal("marked after the cancel")
	}
	if _, err := s.ResumeBroadcast(ctx, a.ID, b.ID); !errors.Is(err, store.ErrBroadcastState) {
		t.Fatalf("resume of a cancelled broadcast: %v, want ErrBroadcastState", err)
	}
	if _, err := s.PauseBroadcast(ctx, other.ID, b.ID, store.PauseOperator, nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another account paused it: %v, want ErrNotFound", err)
	}
	// The two marked recipients: one recorded sent; one left sending with its message recorded
	// but not the platform's answer, settled as unknown (the call may have happened), then sent
	// once the platform's status report gives its message the platform's id.
	if err := s.RecordBroadcastResults(ctx, []store.RecipientResult{{AccountID: a.ID, ID: r.ID, State: store.RecipientSent, MessageID: "wamid.1", At: later}}); err != nil {
		t.Fatal(err)
	}
	left := c3.Recipients[0]
	rec, err := s.BeginSend(ctx, a.ID, store.SendInput{Mobile: left.Mobile, CampaignName: "spring", TemplateName: "welcome",
		Content: []byte(`{}`), IdempotencyKey: store.BroadcastKey(left.ID)})
	if err != nil {
		t.Fatal(err)
	}
	settleAt := later.Add(time.Hour)
	if got, err := s.SettleBroadcastRecipients(ctx, settleAt, settleAt, time.Time{}); err != nil || got != (store.SettleCounts{Unknown: 1}) {
		t.Fatalf("settled %+v (%v), want the one left sending unknown", got, err)
	}
	res, err := s.ApplyStatus(ctx, a.ID, store.StatusReport{PlatformMessageID: "wamid.2", Status: "sent", OccurredAt: later,
		CallbackMessageID: rec.MessageID})
	if err != nil || !res.Adopted {
		t.Fatalf("status report: %+v, %v; want it to adopt the message", res, err)
	}
	if got, err := s.SettleBroadcastRecipients(ctx, settleAt, settleAt, time.Time{}); err != nil || got != (store.SettleCounts{Sent: 1}) {
		t.Fatalf("settled %+v (%v) after the report, want the unknown one sent", got, err)
	}
	c, _ := s.BroadcastCounts(ctx, a.ID, b.ID)
	if c[store.RecipientSent] != 2 || c[store.RecipientCancelled] != 1 {
		t.Fatalf("counts %v, want 2 sent and 1 cancelled", c)
	}
	rs, err := s.BroadcastRecipients(ctx, a.ID, b.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range rs {
		if x.ID == left.ID && x.MessageID != "wamid.2" {
			t.Errorf("the settled recipient has platform id %q, want wamid.2", x.MessageID)
		}
	}
}

// A portfolio's budget: claims take no more new recipients than it has left, pause the
// broadcast with the time the oldest reach leaves the window, and a recipient reached in the
// window costs nothing again.
func TestBroadcastBudget(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	a := whAccount(t, s, "a")
	b := newBroadcast(t, s, a.ID, 5)
	now := time.Now().Add(time.Second).UTC().Truncate(time.Millisecond)
	// The broadcast's portfolio is "" (newBroadcast): the pre-flight's figures are for it.
	if u, err := s.BroadcastBudgetUse(ctx, a.ID, b.ID, now); err != nil || u.Used != 0 || u.Cost != 5 {
		t.Fatalf("budget use before: %+v, %v; want 0 used, 5 new", u, err)
	}
	c0, err := s.ClaimBroadcastRecipients(ctx, a.ID, b.ID, "", now, 1, time.Minute, 100)
	if err != nil || len(c0.Recipients) != 1 {
		t.Fatalf("claim: %v, %+v", err, c0)
	}
	if u, err := s.BroadcastBudgetUse(ctx, a.ID, b.ID, now); err != nil || u.Used != 1 || u.Cost != 4 {
		t.Fatalf("budget use after one claim: %+v, %v; want 1 used, 4 new", u, err)
	}
	if err := s.ReleaseBroadcastRecipients(ctx, []store.RecipientRelease{{AccountID: a.ID, ID: c0.Recipients[0].ID, Claim: c0.Recipients[0].Claim, At: now}}); err != nil {
		t.Fatal(err)
	}
	c, err := s.ClaimBroadcastRecipients(ctx, a.ID, b.ID, "biz", now, 10, time.Minute, 3)
	if err != nil || len(c.Recipients) != 3 || !c.BudgetSpent || !c.ResumeAt.Equal(now.Add(24*time.Hour)) {
		t.Fatalf("claim: %v, %d recipients, spent %v until %v; want 3, spent, until %v", err, len(c.Recipients), c.BudgetSpent, c.ResumeAt, now.Add(24*time.Hour))
	}
	got, _ := s.BroadcastByID(ctx, a.ID, b.ID)
	if got.State != store.BroadcastPaused || got.PauseReason != store.PausePortfolioLimit {
		t.Fatalf("broadcast %s (%s), want paused for the portfolio limit", got.State, got.PauseReason)
	}
	// The claimed recipients hold their budget: the pause does not stop their marks.
	if ok, _ := markSending(ctx, s, a.ID, c.Recipients[0].ID, c.Recipients[0].Claim, now); !ok {
		t.Fatal("a recipient claimed within the budget could not be marked")
	}
	// Release one: claimed again, it costs nothing (reached in the window).
	if err := s.ReleaseBroadcastRecipients(ctx, []store.RecipientRelease{{AccountID: a.ID, ID: c.Recipients[1].ID, Claim: c.Recipients[1].Claim, At: now}}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.ActivateBroadcasts(ctx, now.Add(24*time.Hour-time.Second)); err != nil || n != 0 {
		t.Fatalf("activated %d before the resume time (%v)", n, err)
	}
	// Paused for the budget, the broadcast stays on the engine's work list, and a claim takes
	// only the recipient already reached (it holds its share), none of the two never reached.
	running, err := s.RunningBroadcasts(ctx)
	if err != nil || len(running) != 1 || running[0].ID != b.ID {
		t.Fatalf("work list while paused for the budget: %v, %+v", err, running)
	}
	c2, err := s.ClaimBroadcastRecipients(ctx, a.ID, b.ID, "biz", now, 10, time.Minute, 3)
	if err != nil || len(c2.Recipients) != 1 || c2.Recipients[0].ID != c.Recipients[1].ID || c2.BudgetSpent {
		t.Fatalf("claim while paused for the budget: %v, %+v; want only the one already reached", err, c2)
	}
	if got, _ := s.BroadcastByID(ctx, a.ID, b.ID); got.State != store.BroadcastPaused {
		t.Fatalf("broadcast %s after a claim while paused, want still paused", got.State)
	}
	// A pause by a person takes it off the work list.
	other := newBroadcast(t, s, a.ID, 1)
	if _, err := s.PauseBroadcast(ctx, a.ID, other.ID, store.PauseOperator, nil); err != nil {
		t.Fatal(err)
	}
	if running, err := s.RunningBroadcasts(ctx); err != nil || len(running) != 1 || running[0].ID != b.ID {
		t.Fatalf("work list with a broadcast paused by a person: %v, %+v", err, running)
	}
	if n, err := s.ActivateBroadcasts(ctx, now.Add(24*time.Hour)); err != nil || n != 1 {
		t.Fatalf("activated %d at the resume time (%v), want 1", n, err)
	}
	c3, err := s.ClaimBroadcastRecipients(ctx, a.ID, b.ID, "biz", now.Add(24*time.Hour+time.Second), 10, time.Minute, 3)
	// A day later the window is empty again: 4 are due (2 never claimed, 2 whose leases ran
	// out), the budget takes 3 of them.
	if err != nil || len(c3.Recipients) != 3 || !c3.BudgetSpent {
		t.Fatalf("claim a day later: %v, %d recipients, spent %v; want 3 of the 4 due", err, len(c3.Recipients), c3.BudgetSpent)
	}
}

// An import changes no contact until it is confirmed; confirming makes and tags the contacts in
// one transaction, a second confirmation is refused, and the import's rows become a
// broadcast's recipients with their variables, blocked contacts left out. An audience of the
// tag selects the imported contacts.
func TestImportConfirmAndAudience(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	a := whAccount(t, s, "a")
	other := whAccount(t, s, "b")
	id, err := s.CreateImport(ctx, a.ID, "vip", nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := []store.ImportRow{
		{Line: 2, Mobile: "447700900001", FirstName: "Ana", Variables: map[string]string{"code": "A1"}},
		{Line: 3, Mobile: "447700900002", FirstName: "Bo", LastName: "Li", Variables: map[string]string{"code": "=1+1"}},
		{Line: 4, Mobile: "447700900001", FirstName: "Dup"},
	}
	if err := s.AddImportRows(ctx, a.ID, id, rows); err != nil {
		t.Fatal(err)
	}
	if err := s.AddImportRows(ctx, other.ID, id, rows); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another account staged rows: %v, want ErrNotFound", err)
	}
	var n int
	if err := s.DB().Get(&n, `SELECT count(*) FROM contacts WHERE account_id = $1`, a.ID); err != nil || n != 0 {
		t.Fatalf("%d contacts before the confirmation (%v), want none", n, err)
	}
	res, err := s.ConfirmImport(ctx, a.ID, id, time.Now())
	if err != nil || res.Created != 2 || res.Tagged != 2 {
		t.Fatalf("confirm: %+v, %v; want 2 created and tagged", res, err)
	}
	if _, err := s.ConfirmImport(ctx, a.ID, id, time.Now()); !errors.Is(err, store.ErrImportConfirmed) {
		t.Fatalf("second confirm: %v, want ErrImportConfirmed", err)
	}
	members, err := s.AudienceMembers(ctx, a.ID, store.AudienceFilter{Tags: []string{"vip"}}, 0, 10)
	if err != nil || len(members) != 2 || members[0].FirstName != "Ana" {
		t.Fatalf("audience: %+v, %v; want Ana and Bo", members, err)
	}
	if _, err := s.SaveAudience(ctx, a.ID, "VIPs", store.AudienceFilter{Tags: []string{"vip"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SaveAudience(ctx, a.ID, "VIPs", store.AudienceFilter{}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second audience of the same name: %v, want ErrConflict", err)
	}
	if _, err := s.DB().Exec(`UPDATE contacts SET blocked = true WHERE account_id = $1 AND mobile = '447700900002'`, a.ID); err != nil {
		t.Fatal(err)
	}
	b := newBroadcast(t, s, a.ID, 0)
	if added, err := s.AddBroadcastRecipientsFromImport(ctx, a.ID, b.ID, id); err != nil || added != 1 {
		t.Fatalf("recipients from the import: %d, %v; want 1 (the blocked one left out)", added, err)
	}
	rs, err := s.BroadcastRecipients(ctx, a.ID, b.ID, 0, 10)
	if err != nil || len(rs) != 1 || rs[0].Variables()["code"] != "A1" {
		t.Fatalf("recipients %+v, %v", rs, err)
	}
}

// Recipients left sending are settled from the messages their keys name: no message (the call
// never happened) and a message the platform refused are due again, one with the platform's id
// is sent, one still pending is unknown until the platform's report gives it an id, or until
// the resend horizon passes without one.
func TestSettleBroadcastRecipientsFromTheirMessages(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	a := whAccount(t, s, "a")
	b := newBroadcast(t, s, a.ID, 5)
	at := time.Now().Add(time.Second)
	c, err := s.ClaimBroadcastRecipients(ctx, a.ID, b.ID, "", at, 10, time.Minute, 0)
	if err != nil || len(c.Recipients) != 5 {
		t.Fatalf("claim: %v, %d", err, len(c.Recipients))
	}
	marks := make([]store.RecipientMark, len(c.Recipients))
	for i, r := range c.Recipients {
		marks[i] = store.RecipientMark{AccountID: a.ID, ID: r.ID, Claim: r.Claim, At: at}
	}
	if ok, err := s.MarkBroadcastsSending(ctx, marks); err != nil || len(ok) != 5 || !ok[0] || !ok[4] {
		t.Fatalf("marks: %v %v", ok, err)
	}
	msg := map[int]int64{}
	for i := 1; i < 5; i++ {
		r := c.Recipients[i]
		rec, err := s.BeginSend(ctx, a.ID, store.SendInput{Mobile: r.Mobile, CampaignName: "spring", TemplateName: "welcome",
			Content: []byte(`{}`), IdempotencyKey: store.BroadcastKey(r.ID)})
		if err != nil {
			t.Fatal(err)
		}
		msg[i] = rec.MessageID
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := s.DB().ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`UPDATE messages SET status = 'sent', platform_message_id = 'wamid.one' WHERE id = $1`, msg[1])
	exec(`UPDATE messages SET status = 'failed' WHERE id = $1`, msg[3])
	later := at.Add(time.Minute)
	got, err := s.SettleBroadcastRecipients(ctx, later, later, time.Time{})
	if err != nil || got != (store.SettleCounts{Due: 2, Sent: 1, Unknown: 2}) {
		t.Fatalf("settled %+v (%v), want 2 due again, 1 sent, 2 unknown", got, err)
	}
	exec(`UPDATE messages SET status = 'sent', platform_message_id = 'wamid.four' WHERE id = $1`, msg[4])
	if got, err := s.SettleBroadcastRecipients(ctx, later, later, time.Time{}); err != nil || got != (store.SettleCounts{Sent: 1}) {
		t.Fatalf("after the report: %+v (%v), want the unknown one with an id sent", got, err)
	}
	if got, err := s.SettleBroadcastRecipients(ctx, later, later, at.Add(time.Second)); err != nil || got != (store.SettleCounts{Due: 1}) {
		t.Fatalf("past the horizon: %+v (%v), want the last unknown one due again", got, err)
	}
	want := []string{store.RecipientPending, store.RecipientSent, store.RecipientPending, store.RecipientPending, store.RecipientSent}
	rs, err := s.BroadcastRecipients(ctx, a.ID, b.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		if r.State != want[i] {
			t.Errorf("recipient %d is %s, want %s", i, r.State, want[i])
		}
	}
	if rs[1].MessageID != "wamid.one" || rs[4].MessageID != "wamid.four" {
		t.Errorf("platform ids %q %q", rs[1].MessageID, rs[4].MessageID)
	}
}

// markSending marks one claimed recipient sending (MarkBroadcastsSending of one).
func markSending(ctx context.Context, s *store.Store, accountID, recipientID int64, claim string, at time.Time) (bool, error) {
	ok, err := s.MarkBroadcastsSending(ctx, []store.RecipientMark{{AccountID: accountID, ID: recipientID, Claim: claim, At: at}})
	if err != nil {
		return false, err
	}
	return ok[0], nil
}
