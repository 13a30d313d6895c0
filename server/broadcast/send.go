package broadcast

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"gateway/store"
)

// work is one of a lane's workers: it takes a claimed recipient, waits for the number's token,
// spaces sends to the same person, marks the recipient sending and makes its platform call.
func (e *Engine) work(ctx, stopCtx context.Context, l *lane) {
	defer l.workers.Done()
	for {
		var it item
		select {
		case <-stopCtx.Done():
			return
		case it = <-l.queue:
		}
		if err := l.bucket.wait(stopCtx); err != nil {
			l.giveBack(it)
			return
		}
		e.send(ctx, l, it)
	}
}

// send makes one recipient's platform call, under the never-twice rule: the mark comes first,
// in its own statement; without it there is no call.
func (e *Engine) send(ctx context.Context, l *lane, it item) {
	now := e.clock()
	if time.Since(it.claimed) > e.cfg.Lease*4/5 {
		// The lease is (nearly) over: give the recipient back, due now, rather than leave it
		// waiting out the lease (a claim another engine took since is left alone).
		e.release(ctx, it, now)
		return
	}
	if ok, notBefore := l.pairs.ready(it.r.To(), now); !ok {
		e.release(ctx, it, notBefore)
		return
	}
	marked, err := e.marks.Do(store.RecipientMark{AccountID: it.r.AccountID, ID: it.r.ID, Claim: it.r.Claim, At: now})
	if err != nil || !marked {
		if err != nil && ctx.Err() == nil {
			e.log.Warn("mark recipient sending", "recipient", it.r.ID, "err", err)
		}
		// Paused, cancelled, or the claim was lost: give it back (a lost claim is left alone).
		if ctx.Err() == nil {
			e.release(ctx, it, now)
		}
		return
	}
	l.pairs.note(it.r.To(), now)
	// The call is not cut short by a stop: once marked, its answer is worth waiting for.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.SendTimeout)
	var gateMissed atomic.Bool
	id, err := e.cfg.Sender.SendBroadcast(cctx, Message{
		Broadcast: it.b, Recipient: it.r, BodyParams: Params(it.b, it.r.Variables),
		BeforeCall: func(ctx context.Context) error {
			if err := l.gate.wait(ctx); err != nil {
				gateMissed.Store(true)
				return err
			}
			return nil
		},
	})
	cancel()
	if err != nil && gateMissed.Load() {
		// The writes before the call took its time: nothing was sent (BeforeCall's contract).
		err = fmt.Errorf("%w (%v)", errPaceMissed, err)
	}
	at := e.clock()
	res := store.RecipientResult{AccountID: it.r.AccountID, ID: it.r.ID, At: at}
	if err == nil {
		res.State, res.MessageID = store.RecipientSent, id
	} else {
		v := Classify(err, it.r.Attempts+1, e.cfg.MaxAttempts)
		e.apply(ctx, l, it, v)
		res.State, res.ErrorCode, res.ErrorTitle = v.State, v.Code, v.Title
		if v.State == store.RecipientPending {
			next := at.Add(v.RetryIn)
			res.NextAttemptAt = &next
		}
		if v.NoRetryFor > 0 {
			nb := at.Add(v.NoRetryFor)
			res.RetryNotBefore = &nb
		}
	}
	select {
	case e.results <- res:
	case <-ctx.Done():
	}
}

// apply carries out what a verdict asks beyond the recipient: holding the number's bucket, or
// pausing broadcasts.
func (e *Engine) apply(ctx context.Context, l *lane, it item, v Verdict) {
	if v.HoldNumber > 0 {
		l.bucket.hold(v.HoldNumber)
	}
	var ids []int64
	var err error
	switch v.Pause {
	case PauseTemplate:
		ids, err = e.store.PauseBroadcastsUsingTemplate(ctx, it.b.AccountID, it.b.TemplateName, store.PauseTemplatePaused)
	case PauseAccount:
		ids, err = e.store.PauseAccountBroadcasts(ctx, it.b.AccountID, store.PausePayment)
	default:
		return
	}
	if err != nil && ctx.Err() == nil {
		e.log.Warn("pause broadcasts", "account", it.b.AccountID, "err", err)
		return
	}
	if len(ids) > 0 {
		e.log.Info("broadcasts paused", "account", it.b.AccountID, "broadcasts", ids, "reason", v.Title)
	}
}

// release gives one claimed recipient back, due at at.
func (e *Engine) release(ctx context.Context, it item, at time.Time) {
	err := e.store.ReleaseBroadcastRecipients(ctx, []store.RecipientRelease{{AccountID: it.r.AccountID, ID: it.r.ID, Claim: it.r.Claim, At: at}})
	if err != nil && !errors.Is(err, context.Canceled) {
		e.log.Warn("give back recipient", "recipient", it.r.ID, "err", err)
	}
}
