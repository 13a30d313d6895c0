package worker

import (
	"context"
	"sync"
	"time"

	"gateway/store"
)

// loop is one claimer: it claims whenever work may be due: at start, after a full batch, on
// a notification (wake: another process's NOTIFY), when this process wrote events (written),
// on the poll tick, when capacity frees up after a claim was held back, and when another
// claimer's batch came back full (more work is likely waiting).
func (d *Dispatcher) loop(ctx context.Context, wake, written <-chan struct{}) {
	tick := time.NewTicker(d.cfg.PollInterval)
	defer tick.Stop()
	more := true
	for {
		if !more {
			select {
			case <-ctx.Done():
				return
			case <-wake:
			case <-written:
			case <-tick.C:
			case <-d.capacity:
			case <-d.more:
			}
		}
		if ctx.Err() != nil {
			return
		}
		_, _, again, err := d.runOnce(ctx, nil)
		more = again
		if again {
			select {
			case d.more <- struct{}{}:
			default:
			}
		}
		if err != nil && ctx.Err() == nil {
			d.log.Error("claim webhook deliveries", "error", err.Error())
			select {
			case <-ctx.Done():
				return
			case <-time.After(d.cfg.PollInterval):
			}
		}
	}
}

// runOnce claims one batch, if there is room for it, and queues each delivery on its
// endpoint. It returns how many it claimed and queued, the limit it asked for (0 when it held
// back because too much is claimed already) and whether to claim again at once: after a full
// batch (another claimer is woken too), or when an endpoint left out of the claim has since
// got room. Otherwise, when it held
// back or left endpoints out, it asks the runners for a signal once a claim could go ahead
// (wantCapacity), so no wake-up is lost between concurrent claimers.
func (d *Dispatcher) runOnce(ctx context.Context, batch *sync.WaitGroup) (claimed, limit int, again bool, err error) {
	d.startRecorders()
	d.mu.Lock()
	free := d.cfg.MaxClaimed - d.claimed - d.reserved
	if d.stopping {
		d.mu.Unlock()
		return 0, 0, false, nil
	}
	if free < d.cfg.BatchSize {
		// No room: accounts holding more than their share (since others got work) give
		// back what they have queued.
		if trimmed := d.trimOverShare(); len(trimmed) > 0 {
			d.mu.Unlock()
			d.giveBack(ctx, trimmed)
			d.mu.Lock()
			if d.stopping {
				d.mu.Unlock()
				return 0, 0, false, nil
			}
			free = d.cfg.MaxClaimed - d.claimed - d.reserved
		}
	}
	if free < d.cfg.BatchSize {
		d.wantCapacity = true
		d.mu.Unlock()
		return 0, 0, false, nil
	}
	limit = d.cfg.BatchSize
	d.reserved += limit
	// Leave out every endpoint this claim, with the claims already in flight, could push over
	// its backlog.
	var skip, skipAccounts []int64
	for id, q := range d.endpoints {
		if q.held+d.reserved > d.cfg.EndpointBacklog {
			skip = append(skip, id)
		}
	}
	backlogShare := d.backlogShare()
	for id, a := range d.accounts {
		if a.held+d.reserved > backlogShare {
			skipAccounts = append(skipAccounts, id)
		}
	}
	skipping := len(skip) > 0 || len(skipAccounts) > 0
	if skipping {
		if wait := skipScanInterval - time.Since(d.skipScanned); wait > 0 {
			// The last such claim found nothing beyond the left-out endpoints: try again
			// later (or when one of them has room), not on every wake-up.
			d.reserved -= limit
			d.wantCapacity = true
			if d.skipTimer == nil {
				d.skipTimer = time.AfterFunc(wait, func() {
					d.mu.Lock()
					d.skipTimer = nil
					d.mu.Unlock()
					d.signalCapacity()
				})
			}
			d.mu.Unlock()
			return 0, 0, false, nil
		}
	}
	d.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, claimTimeout)
	defer cancel()
	cs, err := d.store.ClaimDueDeliveries(ctx, d.dbNow(), limit, d.cfg.Lease, skip, skipAccounts)
	at := d.now()
	d.mu.Lock()
	d.unreserve(limit)
	if err != nil {
		d.mu.Unlock()
		return 0, limit, false, err
	}
	var overflow []store.ClaimRef
	for _, c := range cs {
		q := d.endpoints[c.EndpointID]
		if q == nil {
			q = &endpointQueue{id: c.EndpointID}
			d.endpoints[c.EndpointID] = q
		}
		a := d.account(c.AccountID)
		if q.held >= d.cfg.EndpointBacklog || a.held >= d.backlogShare() {
			// Claims running at the same time filled the endpoint's (or the account's) backlog:
			// give this one back at once, so a slow endpoint never holds more than its share.
			overflow = append(overflow, c.Ref())
			continue
		}
		if batch != nil {
			batch.Add(1)
		}
		q.queue = append(q.queue, job{ClaimedDelivery: c, claimedAt: at, done: batch})
		q.held++
		d.hold(a)
		d.claimed++
		if q.running < d.cfg.PerEndpoint {
			q.running++
			d.runners.Add(1)
			go d.run(q)
		}
	}
	again = len(cs) == limit
	if !again && skipping {
		for _, id := range skip {
			if q := d.endpoints[id]; q == nil || q.held+d.reserved+d.cfg.BatchSize <= d.cfg.EndpointBacklog {
				again = true // it got room while we claimed: its due deliveries were left out
			}
		}
		for _, id := range skipAccounts {
			if a := d.accounts[id]; a == nil || a.held+d.reserved+d.cfg.BatchSize <= d.backlogShare() {
				again = true
			}
		}
	}
	if !again && (skipping || len(overflow) > 0) {
		d.wantCapacity = true
	}
	if skipping && len(cs) < limit {
		d.skipScanned = time.Now()
	}
	d.mu.Unlock()
	if len(overflow) > 0 {
		d.overflowed.Add(int64(len(overflow)))
		if err := d.store.ReleaseDeliveries(context.WithoutCancel(ctx), d.dbNow(), overflow); err != nil {
			// They are due again when their lease runs out.
			d.log.Error("give back claims over an endpoint's backlog", "error", err.Error(), "count", len(overflow))
		}
	}
	return len(cs) - len(overflow), limit, again, nil
}
