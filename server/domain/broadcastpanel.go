package domain

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strconv"

	"gateway/store"
)

// BroadcastPanel is the dashboard's broadcasts: the same operations as the API's, with the
// same checks (Broadcasts.Check), on the workspace's live number and approved templates. A
// start form is made once per page: its key is kept as an idempotency record like the API's
// Idempotency-Key, so a second submit of the same page answers with the broadcast the first
// made. Every change is written to the audit log by the member who made it.
type BroadcastPanel struct {
	Broadcasts *Broadcasts
	Sends      *Sends
}

// The audit log's actions of a broadcast.
const (
	AuditBroadcastStarted   = "broadcast.started"
	AuditBroadcastPaused    = "broadcast.paused"
	AuditBroadcastResumed   = "broadcast.resumed"
	AuditBroadcastCancelled = "broadcast.cancelled"
)

// PanelBroadcast is a broadcast as the dashboard's form gives it.
type PanelBroadcast struct {
	BroadcastRequest
	TemplateName, Language string
	// Key is the form's key, made when the form was shown ("" for none).
	Key string
}

// Started is the broadcast a start form made, and whether an earlier submit of the same form
// made it (nothing new was made).
type Started struct {
	Broadcast store.Broadcast
	Replayed  bool
}

// target resolves the form's template on the workspace's number.
func (p BroadcastPanel) target(ctx context.Context, accountID int64, in PanelBroadcast) (BroadcastTarget, error) {
	conn, tpl, err := p.Sends.BroadcastTemplate(ctx, accountID, in.TemplateName, in.Language)
	if err != nil {
		return BroadcastTarget{}, err
	}
	// The portfolio's budget is kept per business account, as for the API's broadcasts.
	return BroadcastTarget{PhoneNumberID: conn.PhoneNumberID, Portfolio: conn.WabaID, Template: tpl}, nil
}

// Preflight checks the form and says what the broadcast would do, making nothing. A broken
// rule is a *BroadcastRefused; a template the workspace cannot send a *SendError.
func (p BroadcastPanel) Preflight(ctx context.Context, accountID int64, in PanelBroadcast) (Preflight, error) {
	t, err := p.target(ctx, accountID, in)
	if err != nil {
		return Preflight{}, err
	}
	_, _, pf, err := p.Broadcasts.Check(ctx, accountID, t, in.BroadcastRequest)
	return pf, err
}

// panelStarted is what a start form's idempotency record keeps.
type panelStarted struct {
	BroadcastID int64 `json:"broadcast_id"`
}

// Start makes the broadcast of the form once per form key and records it in the audit log.
// A second submit of the same form returns the first's broadcast (Replayed); another form
// under the same key, or one still being made, is a *SendError of kind KindConflict.
func (p BroadcastPanel) Start(ctx context.Context, accountID, userID int64, in PanelBroadcast) (Started, error) {
	st := p.Broadcasts.Store
	t, err := p.target(ctx, accountID, in)
	if err != nil {
		return Started{}, err
	}
	if in.Key == "" {
		b, err := p.Broadcasts.Create(ctx, accountID, t, in.BroadcastRequest)
		if err == nil {
			p.audit(ctx, accountID, userID, AuditBroadcastStarted, b)
		}
		return Started{Broadcast: b}, err
	}
	key := "panel-broadcast:" + in.Key
	fp, _ := json.Marshal(in)
	sum := sha256.Sum256(fp)
	rec, err := st.BeginIdempotent(ctx, accountID, key, sum[:])
	if err != nil {
		return Started{}, err
	}
	switch rec.State {
	case store.IdempotencyReplay:
		var done panelStarted
		if err := json.Unmarshal(rec.Response, &done); err != nil || done.BroadcastID == 0 {
			return Started{}, errors.New("the start form's record is unreadable")
		}
		b, err := st.BroadcastByID(ctx, accountID, done.BroadcastID)
		return Started{Broadcast: b, Replayed: true}, err
	case store.IdempotencyMismatch, store.IdempotencyInFlight:
		return Started{}, &SendError{Kind: KindConflict, Code: CodeIdempotencyConflict,
			Message: "This form was already submitted. Open the broadcast form again to start another broadcast."}
	}
	b, err := p.Broadcasts.Create(ctx, accountID, t, in.BroadcastRequest)
	ctx = context.WithoutCancel(ctx)
	if err != nil {
		// Nothing was made: the person corrects the form and submits it again.
		st.ReleaseIdempotent(ctx, accountID, key)
		return Started{}, err
	}
	out, _ := json.Marshal(panelStarted{BroadcastID: b.ID})
	if err := st.FinishIdempotent(ctx, accountID, key, formSentStatus, out); err != nil {
		return Started{}, err
	}
	p.audit(ctx, accountID, userID, AuditBroadcastStarted, b)
	return Started{Broadcast: b}, nil
}

// Pause pauses the workspace's scheduled or running live broadcast through the API's
// operation (Broadcasts.Pause); no recipient is called after it returns. A state that does not
// allow it is a *BroadcastStateError, another workspace's id or a test key's broadcast
// ErrBroadcastNotFound.
func (p BroadcastPanel) Pause(ctx context.Context, accountID, userID, id int64) (store.Broadcast, error) {
	b, err := p.Broadcasts.Pause(ctx, accountID, false, id)
	return p.changed(ctx, accountID, userID, AuditBroadcastPaused, b, err)
}

// Resume sets the workspace's paused broadcast running again (scheduled when its time has not
// come); errors as Pause.
func (p BroadcastPanel) Resume(ctx context.Context, accountID, userID, id int64) (store.Broadcast, error) {
	b, err := p.Broadcasts.Resume(ctx, accountID, false, id)
	return p.changed(ctx, accountID, userID, AuditBroadcastResumed, b, err)
}

// Cancel cancels the workspace's unfinished broadcast and its recipients not called yet;
// errors as Pause.
func (p BroadcastPanel) Cancel(ctx context.Context, accountID, userID, id int64) (store.Broadcast, error) {
	b, err := p.Broadcasts.Cancel(ctx, accountID, false, id)
	return p.changed(ctx, accountID, userID, AuditBroadcastCancelled, b, err)
}

func (p BroadcastPanel) changed(ctx context.Context, accountID, userID int64, action string, b store.Broadcast, err error) (store.Broadcast, error) {
	if err == nil {
		p.audit(ctx, accountID, userID, action, b)
	}
	return b, err
}

// audit records the change; the change stands when the log cannot be written (the log's
// failure is the database's, which the next page shows).
func (p BroadcastPanel) audit(ctx context.Context, accountID, userID int64, action string, b store.Broadcast) {
	_ = p.Broadcasts.Store.AddAudit(context.WithoutCancel(ctx), accountID, userID, action,
		"broadcast "+strconv.FormatInt(b.ID, 10), b.Name)
}
