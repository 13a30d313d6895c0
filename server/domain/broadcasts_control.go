package domain

import (
	"context"
	"errors"

	"gateway/store"
)

// A broadcast after it was created: list the broadcasts a key sees, read one, pause, resume or
// cancel it, and page through its recipients. A key sees the broadcasts of its own mode only
// (test is the key's mode, BroadcastTarget.Test at creation): another account's broadcast, or
// one of the other mode, is ErrBroadcastNotFound, as a missing one is.

// ErrBroadcastNotFound is returned for a broadcast the key does not see.
var ErrBroadcastNotFound = errors.New("broadcast not found")

// BroadcastStateError is a change the broadcast's state does not allow (a 409); State is the
// state the broadcast is in.
type BroadcastStateError struct{ State string }

func (e *BroadcastStateError) Error() string {
	return "the broadcast is " + e.State + ": this does not apply to it"
}

// List returns a page of the account's broadcasts of the key's mode, newest first: at most
// limit, with ids below beforeID (0 for the first page).
func (d *Broadcasts) List(ctx context.Context, accountID int64, test bool, beforeID int64, limit int) ([]store.Broadcast, error) {
	return d.Store.BroadcastsInMode(ctx, accountID, test, beforeID, limit)
}

// Get returns the account's broadcast of the key's mode.
func (d *Broadcasts) Get(ctx context.Context, accountID int64, test bool, id int64) (store.Broadcast, error) {
	b, err := d.Store.BroadcastByID(ctx, accountID, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && b.Test != test) {
		return store.Broadcast{}, ErrBroadcastNotFound
	}
	return b, err
}

// Pause pauses a scheduled or running broadcast for the operator; no recipient is marked
// sending once it returns (store.MarkBroadcastsSending checks the state in the same statement).
func (d *Broadcasts) Pause(ctx context.Context, accountID int64, test bool, id int64) (store.Broadcast, error) {
	return d.change(ctx, accountID, test, id, func() (store.Broadcast, error) {
		return d.Store.PauseBroadcast(ctx, accountID, id, store.PauseOperator, nil)
	})
}

// Resume sets a paused broadcast running again (scheduled again when its time has not come).
func (d *Broadcasts) Resume(ctx context.Context, accountID int64, test bool, id int64) (store.Broadcast, error) {
	return d.change(ctx, accountID, test, id, func() (store.Broadcast, error) {
		return d.Store.ResumeBroadcast(ctx, accountID, id)
	})
}

// Cancel cancels an unfinished broadcast and its recipients not called yet.
func (d *Broadcasts) Cancel(ctx context.Context, accountID int64, test bool, id int64) (store.Broadcast, error) {
	return d.change(ctx, accountID, test, id, func() (store.Broadcast, error) {
		return d.Store.CancelBroadcast(ctx, accountID, id)
	})
}

// change runs a change of the key's broadcast and returns the broadcast after it; a state that
// does not allow it is a *BroadcastStateError naming the state the broadcast is in then.
func (d *Broadcasts) change(ctx context.Context, accountID int64, test bool, id int64, change func() (store.Broadcast, error)) (store.Broadcast, error) {
	b, err := d.Get(ctx, accountID, test, id)
	if err != nil {
		return b, err
	}
	changed, err := change()
	switch {
	case errors.Is(err, store.ErrBroadcastState):
		if now, rerr := d.Store.BroadcastByID(ctx, accountID, id); rerr == nil {
			b = now
		}
		return store.Broadcast{}, &BroadcastStateError{State: b.State}
	case errors.Is(err, store.ErrNotFound):
		return store.Broadcast{}, ErrBroadcastNotFound
	}
	return changed, err
}

// Recipients returns a keyset page of the key's broadcast's recipients: at most limit, with
// ids above afterID (0 for the first page).
func (d *Broadcasts) Recipients(ctx context.Context, accountID int64, test bool, id, afterID int64, limit int) ([]store.BroadcastRecipient, error) {
	b, err := d.Get(ctx, accountID, test, id)
	if err != nil {
		return nil, err
	}
	return d.Store.BroadcastRecipients(ctx, accountID, b.ID, afterID, limit)
}
