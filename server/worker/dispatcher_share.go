package worker

import (
	"context"
	"sync"

	"gateway/store"
)

// The dispatcher's fairness between accounts. Each account with work (deliveries held: queued
// or in flight) gets a share of the attempt slots and of the claimed deliveries that shrinks
// as more accounts have work, so that N slow tenants together never hold everything:
//
//   - slots: min(PerAccount, max(1, Concurrency / (accounts with work + 1))), which leaves at
//     least one share's worth of slots to an account that has none yet;
//   - claims: min(AccountBacklog, max(1, (MaxClaimed - BatchSize) / accounts with work)), which
//     leaves room for one more full claim, so the next account's deliveries can be claimed.
//
// With one account at work the shares are PerAccount and AccountBacklog, as configured.

// accountShare is one account's part of the dispatcher: its claimed deliveries held (all its
// endpoints), its attempts in flight, and the runners waiting for one of its slots.
type accountShare struct {
	held    int
	running int
	waiting int
	slot    *sync.Cond // on Dispatcher.mu: a slot of this account may be free
}

// account returns the account's share, made on first use (under mu).
func (d *Dispatcher) account(id int64) *accountShare {
	a := d.accounts[id]
	if a == nil {
		a = &accountShare{slot: sync.NewCond(&d.mu)}
		d.accounts[id] = a
	}
	return a
}

// slotShare is the most attempts one account may have in flight now (under mu).
func (d *Dispatcher) slotShare() int {
	return min(d.cfg.PerAccount, max(1, d.cfg.Concurrency/(d.busyAccounts+1)))
}

// backlogShare is the most claimed deliveries one account may hold now (under mu).
func (d *Dispatcher) backlogShare() int {
	return min(d.cfg.AccountBacklog, max(1, (d.cfg.MaxClaimed-d.cfg.BatchSize)/max(d.busyAccounts, 1)))
}

// hold counts one more delivery held by the account (under mu).
func (d *Dispatcher) hold(a *accountShare) {
	if a.held == 0 {
		d.busyAccounts++
	}
	a.held++
}

// unhold counts one delivery fewer held by the account (under mu). An account left without
// work makes every other account's share larger: runners waiting for a slot look again.
func (d *Dispatcher) unhold(a *accountShare) {
	a.held--
	if a.held > 0 {
		return
	}
	d.busyAccounts--
	for w := range d.slotWaiters {
		w.slot.Broadcast()
	}
}

// takeSlot waits until the account is below its slot share and takes one of its slots (under
// mu, which the wait releases meanwhile). It is taken before a global slot, so a tenant at its
// share waits without holding one. The account has a slot in use while it waits (its share is
// at least 1), whose end wakes it.
func (d *Dispatcher) takeSlot(a *accountShare) {
	for a.running >= d.slotShare() {
		if a.waiting == 0 {
			d.slotWaiters[a] = struct{}{}
		}
		a.waiting++
		a.slot.Wait()
		a.waiting--
		if a.waiting == 0 {
			delete(d.slotWaiters, a)
		}
	}
	a.running++
}

// giveSlot ends one of the account's attempts (under mu).
func (d *Dispatcher) giveSlot(a *accountShare) {
	a.running--
	if a.waiting > 0 {
		a.slot.Signal()
	}
}

// trimOverShare takes out of the queues the queued deliveries (the last claimed first) of every
// account holding more than its claim share, and returns them for the caller to give back (under
// mu). Shares shrink when more accounts have work, but what an account already holds stays
// held: without this, tenants whose endpoints hang would keep the claims taken while they were
// alone, and the next claim, another tenant's, would never find room. Attempts in flight are
// left to finish.
func (d *Dispatcher) trimOverShare() []job {
	share := d.backlogShare()
	var over map[int64]int // account id → deliveries to take out
	for id, a := range d.accounts {
		if a.held > share {
			if over == nil {
				over = map[int64]int{}
			}
			over[id] = a.held - share
		}
	}
	if over == nil {
		return nil
	}
	var out []job
	for _, q := range d.endpoints {
		// An endpoint's queue holds one account's deliveries.
		for len(q.queue) > 0 && over[q.queue[len(q.queue)-1].AccountID] > 0 {
			j := q.queue[len(q.queue)-1]
			q.queue[len(q.queue)-1] = job{}
			q.queue = q.queue[:len(q.queue)-1]
			over[j.AccountID]--
			q.held--
			d.claimed--
			d.unhold(d.account(j.AccountID))
			out = append(out, j)
		}
	}
	return out
}

// giveBack releases trimmed claims unattempted: they are due again at once, for whichever
// dispatcher has room for their account.
func (d *Dispatcher) giveBack(ctx context.Context, js []job) {
	refs := make([]store.ClaimRef, len(js))
	for i, j := range js {
		refs[i] = j.Ref()
	}
	d.overflowed.Add(int64(len(refs)))
	if err := d.store.ReleaseDeliveries(context.WithoutCancel(ctx), d.dbNow(), refs); err != nil {
		// They are due again when their lease runs out.
		d.log.Error("give back claims over an account's share", "error", err.Error(), "count", len(refs))
	}
	for _, j := range js {
		doneIfSet(j.done)
	}
}
