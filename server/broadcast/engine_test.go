package broadcast_test

import (
	"context"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/server/broadcast"
	"gateway/store"
)

// Thousands of recipients with faults injected at the simulator: throughput refusals (the
// number is slower than the engine believes), permanent refusals and answers that never come
// in time. Each recipient is accepted by the platform at most once, every recipient the
// broadcast reports sent or unknown was accepted exactly once, the refused ones never, and the
// broadcast completes with nothing left pending.
func TestEveryRecipientSentOnceWithFaults(t *testing.T) {
	r := newRig(t, simulator.Config{RatePerSecond: 0}, 150)
	rs := numbers(3000)
	for i := 0; i < len(rs); i += 100 {
		r.sim.Script("+"+rs[i].Mobile, simulator.Outcome{FailSync: 131026})
	}
	for i := 50; i < len(rs); i += 500 {
		r.sim.Script("+"+rs[i].Mobile, simulator.Outcome{Hang: 3 * time.Second})
	}
	b := r.create("order_confirmation", rs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The engine believes the number does 1,000/s; the simulator refuses past 150 (130429), a
	// rate a loaded machine still exceeds.
	e := r.engine(ctx, broadcast.Config{Throughput: func(context.Context, string) int { return 1000 }, Share: 1,
		SendTimeout: time.Second, UnknownAfter: 5 * time.Second})
	r.waitFor(90*time.Second, "the broadcast to complete", func() bool { return r.broadcast(b.ID).State == store.BroadcastCompleted })
	if err := e.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := r.accepted()
	byState := map[string]int{}
	retried := 0
	for _, rec := range r.recipients(b.ID) {
		byState[rec.State]++
		if rec.Attempts > 1 {
			retried++
		}
		n := got[rec.Mobile]
		switch rec.State {
		case store.RecipientSent, store.RecipientUnknown:
			if n != 1 {
				t.Errorf("recipient %s is %s with %d platform sends, want 1", rec.Mobile, rec.State, n)
			}
		case store.RecipientFailed:
			if n != 0 || rec.ErrorCode == nil || *rec.ErrorCode != 131026 {
				t.Errorf("recipient %s failed (code %v) with %d platform sends, want 131026 and none", rec.Mobile, rec.ErrorCode, n)
			}
		default:
			t.Errorf("recipient %s left %s", rec.Mobile, rec.State)
		}
	}
	if byState[store.RecipientFailed] != 30 {
		t.Errorf("failed = %d, want the 30 scripted refusals", byState[store.RecipientFailed])
	}
	if byState[store.RecipientSent]+byState[store.RecipientUnknown] != 2970 {
		t.Errorf("sent+unknown = %d, want 2970 (%v)", byState[store.RecipientSent]+byState[store.RecipientUnknown], byState)
	}
	if total := len(r.sim.Sent()); total != 2970 {
		t.Errorf("the simulator accepted %d sends, want 2970", total)
	}
	if retried == 0 {
		t.Error("no recipient was called twice: the simulator refused nothing for throughput, so no fault was injected")
	}
	t.Logf("states %v, %d retried after a refusal, most in a second %d", byState, retried, r.sim.MaxSendsPerSecond(phoneID))
}

// An engine stopped abruptly mid-broadcast (its context cancelled, nothing cleaned up) and a
// second one started: no recipient is sent twice and none is skipped. The first engine's
// process also dies in the middle of some sends: after the mark, before the message is
// recorded (the call did not happen: due again); after the message, before the call (the call
// may have happened: unknown, until the resend horizon passes with no report of it); after the
// call, before its platform id is recorded (the status report gives the message its id: sent,
// not sent again). The second engine settles each from its message.
func TestCrashMidBroadcastNeitherTwiceNorSkipped(t *testing.T) {
	r := newRig(t, simulator.Config{}, 0)
	rs := numbers(1500)
	b := r.create("order_confirmation", rs)
	cfg := broadcast.Config{Throughput: func(context.Context, string) int { return 400 }, Share: 1,
		Lease: time.Second, SendTimeout: time.Second, UnknownAfter: 2 * time.Second, ResendUnknownAfter: 4 * time.Second}
	// Three recipients die at each step, among the first claimed.
	dieAt := map[string]step{}
	for i, at := range []step{beforeMessage, beforeCall, beforeAnswer} {
		for j := range 3 {
			dieAt[rs[7+10*i+100*j].Mobile] = at
		}
	}
	r.crashThenComplete(b.ID, cfg, dieAt, "a third of the sends and every scripted death", func(died int64) bool {
		return len(r.sim.Sent()) >= 500 && died == int64(len(dieAt))
	})
	wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer wcancel()
	if err := r.sim.WaitIdle(wctx); err != nil {
		t.Fatal(err)
	}
	got := r.accepted()
	for _, rec := range r.recipients(b.ID) {
		if n := got[rec.Mobile]; n != 1 {
			t.Errorf("recipient %s (dies %v): %d platform sends, want 1", rec.Mobile, dieAt[rec.Mobile], n)
		}
		if rec.State != store.RecipientSent || rec.MessageID == "" {
			t.Errorf("recipient %s is %s (message %q), want sent with its message id", rec.Mobile, rec.State, rec.MessageID)
		}
	}
	// The three whose platform id was never recorded got it from their status reports.
	if n := r.adopted.Load(); n < 3 {
		t.Errorf("%d messages took their platform id from a status report, want at least the 3 whose answer was lost", n)
	}
}

// A recipient whose call may have happened is never called again while no report says what
// became of it: with no resend horizon, one whose process died after recording its message and
// before the call stays unknown, uncalled, and does not hold the broadcast back.
func TestUnknownRecipientNotCalledAgain(t *testing.T) {
	r := newRig(t, simulator.Config{}, 0)
	rs := numbers(200)
	b := r.create("order_confirmation", rs)
	lost := rs[20].Mobile
	cfg := broadcast.Config{Throughput: func(context.Context, string) int { return 400 }, Share: 1,
		Lease: time.Second, SendTimeout: time.Second, UnknownAfter: 2 * time.Second}
	r.crashThenComplete(b.ID, cfg, map[string]step{lost: beforeCall}, "the scripted death", func(died int64) bool { return died == 1 })
	got := r.accepted()
	for _, rec := range r.recipients(b.ID) {
		want, state := 1, store.RecipientSent
		if rec.Mobile == lost {
			want, state = 0, store.RecipientUnknown
		}
		if got[rec.Mobile] != want || rec.State != state {
			t.Errorf("recipient %s is %s with %d platform sends, want %s with %d", rec.Mobile, rec.State, got[rec.Mobile], state, want)
		}
	}
}

// A portfolio at the 2,000 tier and 2,500 recipients it has not reached: 2,000 are sent, the
// broadcast pauses for the portfolio's budget with the time it can resume, and resumes by
// itself once the injected clock reaches it; the simulator drops nothing.
func TestPortfolioBudgetPausesAndResumes(t *testing.T) {
	clock := &fakeClock{now: time.Now()}
	r := newRig(t, simulator.Config{Clock: clock.Now}, 0)
	r.sim.SetPortfolio(bizID, simulator.Tier2K, false)
	b := r.create("order_confirmation", numbers(2500))
	clock.Set(time.Now().UTC().Add(time.Second).Truncate(time.Millisecond)) // past the database's now(), when the recipients became due
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := r.engine(ctx, broadcast.Config{Clock: clock.Now, Throughput: func(context.Context, string) int { return 1000 }, Share: 1,
		Budget: func(_ context.Context, _ int64, portfolio string) int {
			if portfolio == bizID {
				return simulator.Tier2K
			}
			return 0
		}})
	defer e.Stop(context.Background())
	r.waitFor(60*time.Second, "the budget pause", func() bool { return r.broadcast(b.ID).State == store.BroadcastPaused })
	got := r.broadcast(b.ID)
	if got.PauseReason != store.PausePortfolioLimit || got.ResumeAt == nil || !got.ResumeAt.Equal(clock.Now().Add(24*time.Hour)) {
		t.Fatalf("paused with reason %q until %v, want %q until %v", got.PauseReason, got.ResumeAt, store.PausePortfolioLimit, clock.Now().Add(24*time.Hour))
	}
	// The recipients claimed before the budget ran out are still sent.
	r.waitFor(30*time.Second, "2000 sent", func() bool { return r.counts(b.ID)[store.RecipientSent] >= 2000 })
	time.Sleep(500 * time.Millisecond)
	if c := r.counts(b.ID); c[store.RecipientSent] != 2000 || c[store.RecipientPending] != 500 {
		t.Fatalf("counts at the pause %v, want 2000 sent and 500 pending", c)
	}
	if p := r.sim.Portfolio(bizID); p.Used != 2000 || p.Dropped != 0 {
		t.Fatalf("simulator portfolio %+v, want 2000 used and none dropped", p)
	}
	clock.Add(time.Hour)
	time.Sleep(1500 * time.Millisecond)
	if st := r.broadcast(b.ID).State; st != store.BroadcastPaused {
		t.Fatalf("state %s an hour later, want still paused", st)
	}
	clock.Add(23 * time.Hour)
	r.waitFor(30*time.Second, "the broadcast to complete", func() bool { return r.broadcast(b.ID).State == store.BroadcastCompleted })
	if c := r.counts(b.ID); c[store.RecipientSent] != 2500 {
		t.Fatalf("counts %v, want 2500 sent", c)
	}
	if p := r.sim.Portfolio(bizID); p.Dropped != 0 {
		t.Fatalf("simulator dropped %d sends", p.Dropped)
	}
}

// A template paused for quality in the middle of a broadcast (132015) pauses the broadcast
// with that reason; the refused recipient waits for the resume, and after the resume every
// recipient is sent exactly once.
func TestPausedTemplatePausesBroadcast(t *testing.T) {
	r := newRig(t, simulator.Config{}, 0)
	rs := numbers(600)
	b := r.create("order_confirmation", rs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := r.engine(ctx, broadcast.Config{Throughput: func(context.Context, string) int { return 100 }})
	defer e.Stop(context.Background())
	r.waitFor(30*time.Second, "some sends", func() bool { return len(r.sim.Sent()) >= 100 })
	if err := r.sim.SetTemplateStatus(wabaID, "1094411223344001", "PAUSED", "low quality"); err != nil {
		t.Fatal(err)
	}
	r.waitFor(10*time.Second, "the pause", func() bool { return r.broadcast(b.ID).State == store.BroadcastPaused })
	if got := r.broadcast(b.ID).PauseReason; got != store.PauseTemplatePaused {
		t.Fatalf("pause reason %q, want %q", got, store.PauseTemplatePaused)
	}
	time.Sleep(500 * time.Millisecond)
	c := r.counts(b.ID)
	if c[store.RecipientFailed] != 0 || c[store.RecipientSent] >= 600 || c[store.RecipientPending] == 0 {
		t.Fatalf("counts at the pause %v: want no failures and recipients waiting", c)
	}
	if err := r.sim.SetTemplateStatus(wabaID, "1094411223344001", "APPROVED", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.ResumeBroadcast(context.Background(), r.account, b.ID); err != nil {
		t.Fatal(err)
	}
	r.waitFor(30*time.Second, "the broadcast to complete", func() bool { return r.broadcast(b.ID).State == store.BroadcastCompleted })
	got := r.accepted()
	for _, rec := range r.recipients(b.ID) {
		if rec.State != store.RecipientSent || got[rec.Mobile] != 1 {
			t.Errorf("recipient %s: %s with %d sends, want sent once", rec.Mobile, rec.State, got[rec.Mobile])
		}
	}
}

// With the number at 80 messages/s, no clock second at the simulator sees more than 80 sends,
// and the simulator refuses none for throughput.
func TestEightyPerSecondNeverExceeded(t *testing.T) {
	r := newRig(t, simulator.Config{}, simulator.ThroughputStandard)
	b := r.create("order_confirmation", numbers(400))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := r.engine(ctx, broadcast.Config{Throughput: func(context.Context, string) int { return simulator.ThroughputStandard }})
	defer e.Stop(context.Background())
	r.waitFor(30*time.Second, "the broadcast to complete", func() bool { return r.broadcast(b.ID).State == store.BroadcastCompleted })
	most := r.sim.MaxSendsPerSecond(phoneID)
	if most > simulator.ThroughputStandard || most == 0 {
		t.Fatalf("most sends in one second = %d, want 1..80", most)
	}
	t.Logf("most sends in one second at the simulator: %d of %d", most, simulator.ThroughputStandard)
	for _, rec := range r.recipients(b.ID) {
		if rec.State != store.RecipientSent || rec.Attempts != 1 {
			t.Errorf("recipient %s: %s after %d calls, want sent at the first", rec.Mobile, rec.State, rec.Attempts)
		}
	}
}

// Pause, resume and cancel take effect within a second: no send starts a second after a pause
// or a cancel, sends start again within a second of a resume, and a cancelled broadcast's
// recipients not called are cancelled, none sent twice.
func TestPauseResumeCancelWithinASecond(t *testing.T) {
	r := newRig(t, simulator.Config{}, 0)
	b := r.create("order_confirmation", numbers(400))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := r.engine(ctx, broadcast.Config{Throughput: func(context.Context, string) int { return 50 }})
	defer e.Stop(context.Background())
	sent := func() int { return len(r.sim.Sent()) }
	r.waitFor(20*time.Second, "some sends", func() bool { return sent() >= 40 })
	if _, err := r.st.PauseBroadcast(context.Background(), r.account, b.ID, store.PauseOperator, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	atPause := sent()
	time.Sleep(1500 * time.Millisecond)
	if n := sent(); n != atPause {
		t.Fatalf("%d sends more than a second after the pause", n-atPause)
	}
	if _, err := r.st.ResumeBroadcast(context.Background(), r.account, b.ID); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	r.waitFor(5*time.Second, "sends after the resume", func() bool { return sent() > atPause })
	if d := time.Since(resumed); d > time.Second {
		t.Fatalf("the first send after the resume took %s", d)
	}
	r.waitFor(20*time.Second, "more sends", func() bool { return sent() >= atPause+40 })
	if _, err := r.st.CancelBroadcast(context.Background(), r.account, b.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	atCancel := sent()
	time.Sleep(1500 * time.Millisecond)
	if n := sent(); n != atCancel {
		t.Fatalf("%d sends more than a second after the cancel", n-atCancel)
	}
	got := r.accepted()
	c := map[string]int{}
	for _, rec := range r.recipients(b.ID) {
		c[rec.State]++
		want := 0
		if rec.State == store.RecipientSent {
			want = 1
		}
		if got[rec.Mobile] != want {
			t.Errorf("recipient %s is %s with %d sends", rec.Mobile, rec.State, got[rec.Mobile])
		}
	}
	if c[store.RecipientSent] != atCancel || c[store.RecipientCancelled] != 400-atCancel {
		t.Fatalf("counts %v, want %d sent and the rest cancelled", c, atCancel)
	}
}

// A send whose time runs out before the number's pace lets its call go (its writes took the
// time) has sent nothing: the recipient is due again and sent at its next call, once, instead
// of recorded as failed.
func TestCallPastItsTimeAtThePaceIsDueAgain(t *testing.T) {
	r := newRig(t, simulator.Config{}, 0)
	b := r.create("order_confirmation", numbers(20))
	slow := numbers(20)[3].Mobile
	k := r.sender()
	k.stall = func(to string, attempts int) time.Duration {
		if to == slow && attempts == 0 {
			return 3500 * time.Millisecond
		}
		return 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := r.engine(ctx, broadcast.Config{Sender: k, SendTimeout: 3 * time.Second,
		Throughput: func(context.Context, string) int { return 50 }})
	defer e.Stop(context.Background())
	r.waitFor(30*time.Second, "the broadcast to complete", func() bool { return r.broadcast(b.ID).State == store.BroadcastCompleted })
	got := r.accepted()
	for _, rec := range r.recipients(b.ID) {
		if rec.State != store.RecipientSent || got[rec.Mobile] != 1 {
			t.Errorf("recipient %s: %s with %d sends (%q), want sent once", rec.Mobile, rec.State, got[rec.Mobile], rec.ErrorTitle)
		}
		if want := 1 + btoi(rec.Mobile == slow); rec.Attempts != want {
			t.Errorf("recipient %s: %d calls, want %d", rec.Mobile, rec.Attempts, want)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
