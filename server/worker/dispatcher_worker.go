package worker

// run attempts an endpoint's queued deliveries one after the other until its queue is empty;
// up to PerEndpoint runners work on one endpoint.
func (d *Dispatcher) run(q *endpointQueue) {
	defer d.runners.Done()
	for {
		d.mu.Lock()
		if d.stopping || len(q.queue) == 0 {
			q.running--
			// An idle endpoint's entry is kept (so concurrent claims still account for it)
			// unless the map grows large.
			if q.running == 0 && q.held == 0 && len(d.endpoints) > maxIdleEndpoints {
				delete(d.endpoints, q.id)
			}
			d.mu.Unlock()
			return
		}
		j := q.queue[0]
		q.queue[0] = job{}
		q.queue = q.queue[1:]
		a := d.account(j.AccountID)
		d.takeSlot(a)
		d.mu.Unlock()

		d.sem <- struct{}{}
		res := d.attempt(j)
		<-d.sem
		res.done = j.done
		d.results <- res

		d.mu.Lock()
		d.giveSlot(a)
		q.held--
		d.unhold(a)
		if a.held == 0 && len(d.accounts) > maxIdleEndpoints {
			delete(d.accounts, j.AccountID)
		}
		d.claimed--
		// Wake a claimer that held back (or left this endpoint out) once a claim can go ahead.
		if d.wantCapacity && d.cfg.MaxClaimed-d.claimed-d.reserved >= d.cfg.BatchSize &&
			q.held+d.reserved+d.cfg.BatchSize <= d.cfg.EndpointBacklog {
			d.wantCapacity = false
			d.signalCapacity()
		}
		d.mu.Unlock()
	}
}

// unreserve gives back a finished claim's reservation of limit deliveries. A claimer that held
// back, or left an endpoint out, while the reservation counted against it is woken by the next
// runner that finishes a delivery; when no delivery is held, no runner will, so unreserve wakes
// it (otherwise it would wait for the next event or poll tick). While deliveries are held it
// leaves the wake-up to their runners, whose end frees the room a claim needs. The caller
// holds d.mu.
func (d *Dispatcher) unreserve(limit int) {
	d.reserved -= limit
	if d.wantCapacity && d.claimed == 0 {
		d.wantCapacity = false
		d.signalCapacity()
	}
}

// signalCapacity wakes one waiting claimer.
func (d *Dispatcher) signalCapacity() {
	select {
	case d.capacity <- struct{}{}:
	default:
	}
}
