package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"gateway/gen"
	"gateway/server/domain"
	"gateway/server/refusal"
	"gateway/store"
)

// The broadcast operations (openapi.yaml, Broadcasts): HTTP in, a call of the domain's
// broadcasts (server/domain/broadcasts.go), HTTP out. The key's mode resolves the template
// and says which broadcasts the key sees (broadcasts_mode.go).

var errBroadcastNotFound = newAPIError(http.StatusNotFound, gen.ErrorCodeNotFound, "Broadcast not found")

// CreateBroadcast creates a broadcast; the engine sends it.
func (a *api) CreateBroadcast(ctx context.Context, req gen.CreateBroadcastRequestObject) (gen.CreateBroadcastResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	t, in, err := a.broadcastInput(ctx, p, req.Body)
	if err != nil {
		return nil, err
	}
	b, err := a.s.broadcasts.Create(ctx, p.AccountID, t, in)
	if err != nil {
		return nil, broadcastError(err)
	}
	out, err := a.broadcastOut(ctx, b)
	if err != nil {
		return nil, err
	}
	return gen.CreateBroadcast201JSONResponse{Body: gen.BroadcastEnvelope{Success: true, Message: "Broadcast created", Data: out}}, nil
}

// PreflightBroadcast says what a broadcast would do, creating nothing.
func (a *api) PreflightBroadcast(ctx context.Context, req gen.PreflightBroadcastRequestObject) (gen.PreflightBroadcastResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	t, in, err := a.broadcastInput(ctx, p, req.Body)
	if err != nil {
		return nil, err
	}
	_, _, pf, err := a.s.broadcasts.Check(ctx, p.AccountID, t, in)
	if err != nil {
		return nil, broadcastError(err)
	}
	return gen.PreflightBroadcast200JSONResponse{Body: gen.PreflightEnvelope{Success: true, Message: "OK", Data: preflightOut(pf)}}, nil
}

// broadcastInput resolves the request's template for the key's mode and turns the body into
// the domain's request.
func (a *api) broadcastInput(ctx context.Context, p Principal, b *gen.BroadcastRequest) (domain.BroadcastTarget, domain.BroadcastRequest, error) {
	t, err := p.data.broadcastTarget(ctx, p.AccountID, b.TemplateName, deref(b.Language))
	if err != nil {
		return t, domain.BroadcastRequest{}, err
	}
	in := domain.BroadcastRequest{Name: b.Name, AudienceID: deref(b.AudienceId), SendAt: deref(b.SendAt), TimeZone: deref(b.TimeZone)}
	for _, prm := range deref(b.Parameters) {
		in.Params = append(in.Params, store.BroadcastParam{Value: deref(prm.Value), Variable: deref(prm.Variable)})
	}
	rs := deref(b.Recipients)
	in.Recipients = make([]store.RecipientInput, len(rs))
	for i, r := range rs {
		in.Recipients[i] = store.RecipientInput{Mobile: r.Mobile, UserID: deref(r.UserId), Variables: deref(r.Variables)}
	}
	return t, in, nil
}

// broadcastError maps the domain's refusals to the API's.
func broadcastError(err error) error {
	var br *domain.BroadcastRefused
	var bs *domain.BroadcastStateError
	switch {
	case errors.As(err, &br):
		return invalid(br.Fields)
	case errors.Is(err, domain.ErrAudienceNotFound):
		return invalid(refusal.One("audience_id", "no saved audience of the account has this id"))
	case errors.As(err, &bs):
		return newAPIError(http.StatusConflict, gen.ErrorCodeBroadcastState, fmt.Sprintf("The broadcast is %s: this does not apply to it", bs.State))
	case errors.Is(err, domain.ErrBroadcastNotFound):
		return errBroadcastNotFound
	}
	return err
}

// ListBroadcasts lists the broadcasts the key sees, newest first.
func (a *api) ListBroadcasts(ctx context.Context, req gen.ListBroadcastsRequestObject) (gen.ListBroadcastsResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	limit, before := 20, int64(0)
	if req.Params.Limit != nil {
		limit = *req.Params.Limit
	}
	if req.Params.Cursor != nil {
		if before, err = parseCampaignCursor(*req.Params.Cursor); err != nil {
			return nil, errBadCursor
		}
	}
	bs, err := a.s.broadcasts.List(ctx, p.AccountID, p.data.testBroadcasts(), before, limit+1)
	if err != nil {
		return nil, err
	}
	out := gen.BroadcastList{Broadcasts: make([]gen.Broadcast, 0, len(bs))}
	if len(bs) > limit {
		bs = bs[:limit]
		next := campaignCursor(bs[limit-1].ID)
		out.NextCursor = &next
	}
	for _, b := range bs {
		o, err := a.broadcastOut(ctx, b)
		if err != nil {
			return nil, err
		}
		out.Broadcasts = append(out.Broadcasts, o)
	}
	return gen.ListBroadcasts200JSONResponse{Body: gen.BroadcastsEnvelope{Success: true, Message: "OK", Data: out}}, nil
}

// GetBroadcast is one broadcast's progress.
func (a *api) GetBroadcast(ctx context.Context, req gen.GetBroadcastRequestObject) (gen.GetBroadcastResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	b, err := a.s.broadcasts.Get(ctx, p.AccountID, p.data.testBroadcasts(), req.Id)
	if err != nil {
		return nil, broadcastError(err)
	}
	out, err := a.broadcastOut(ctx, b)
	if err != nil {
		return nil, err
	}
	return gen.GetBroadcast200JSONResponse{Body: gen.BroadcastEnvelope{Success: true, Message: "OK", Data: out}}, nil
}

// PauseBroadcast pauses a scheduled or running broadcast; no recipient is marked sending after
// the answer (store.MarkBroadcastsSending checks the state in the same statement).
func (a *api) PauseBroadcast(ctx context.Context, req gen.PauseBroadcastRequestObject) (gen.PauseBroadcastResponseObject, error) {
	out, err := a.changeBroadcast(ctx, req.Id, a.s.broadcasts.Pause)
	if err != nil {
		return nil, err
	}
	return gen.PauseBroadcast200JSONResponse{BroadcastChangedJSONResponse: out}, nil
}

// ResumeBroadcast sets a paused broadcast running (or scheduled) again.
func (a *api) ResumeBroadcast(ctx context.Context, req gen.ResumeBroadcastRequestObject) (gen.ResumeBroadcastResponseObject, error) {
	out, err := a.changeBroadcast(ctx, req.Id, a.s.broadcasts.Resume)
	if err != nil {
		return nil, err
	}
	return gen.ResumeBroadcast200JSONResponse{BroadcastChangedJSONResponse: out}, nil
}

// CancelBroadcast cancels an unfinished broadcast and its recipients not called yet.
func (a *api) CancelBroadcast(ctx context.Context, req gen.CancelBroadcastRequestObject) (gen.CancelBroadcastResponseObject, error) {
	out, err := a.changeBroadcast(ctx, req.Id, a.s.broadcasts.Cancel)
	if err != nil {
		return nil, err
	}
	return gen.CancelBroadcast200JSONResponse{BroadcastChangedJSONResponse: out}, nil
}

// changeBroadcast runs a change of the key's broadcast (the domain's Pause, Resume or Cancel)
// and renders the broadcast after it; a state that does not allow the change is a 409 naming
// the state.
func (a *api) changeBroadcast(ctx context.Context, id int64, change func(context.Context, int64, bool, int64) (store.Broadcast, error)) (gen.BroadcastChangedJSONResponse, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return gen.BroadcastChangedJSONResponse{}, err
	}
	changed, err := change(ctx, p.AccountID, p.data.testBroadcasts(), id)
	if err != nil {
		return gen.BroadcastChangedJSONResponse{}, broadcastError(err)
	}
	out, err := a.broadcastOut(ctx, changed)
	if err != nil {
		return gen.BroadcastChangedJSONResponse{}, err
	}
	return gen.BroadcastChangedJSONResponse{Body: gen.BroadcastEnvelope{Success: true, Message: "OK", Data: out}}, nil
}

// ListBroadcastRecipients is a keyset page of the broadcast's recipients.
func (a *api) ListBroadcastRecipients(ctx context.Context, req gen.ListBroadcastRecipientsRequestObject) (gen.ListBroadcastRecipientsResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	limit, after := 100, int64(0)
	if req.Params.Limit != nil {
		limit = *req.Params.Limit
	}
	if req.Params.Cursor != nil {
		if after, err = parseCampaignCursor(*req.Params.Cursor); err != nil {
			// A broadcast the key does not see is a 404 whatever the cursor.
			if _, gerr := a.s.broadcasts.Get(ctx, p.AccountID, p.data.testBroadcasts(), req.Id); gerr != nil {
				return nil, broadcastError(gerr)
			}
			return nil, errBadCursor
		}
	}
	rs, err := a.s.broadcasts.Recipients(ctx, p.AccountID, p.data.testBroadcasts(), req.Id, after, limit+1)
	if err != nil {
		return nil, broadcastError(err)
	}
	out := gen.BroadcastRecipientList{Recipients: make([]gen.BroadcastRecipient, 0, len(rs))}
	if len(rs) > limit {
		rs = rs[:limit]
		next := campaignCursor(rs[limit-1].ID)
		out.NextCursor = &next
	}
	for _, r := range rs {
		out.Recipients = append(out.Recipients, recipientOut(r))
	}
	return gen.ListBroadcastRecipients200JSONResponse{Body: gen.BroadcastRecipientsEnvelope{Success: true, Message: "OK", Data: out}}, nil
}
