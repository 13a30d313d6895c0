package server

import (
	"context"
	"time"

	"gateway/gen"
	"gateway/server/domain"
	"gateway/store"
)

// The API's shapes of a broadcast, its pre-flight and its recipients.

// broadcastOut renders a broadcast with its progress.
func (a *api) broadcastOut(ctx context.Context, b store.Broadcast) (gen.Broadcast, error) {
	pr, err := a.s.broadcasts.ProgressOf(ctx, b)
	if err != nil {
		return gen.Broadcast{}, err
	}
	st := pr.ByState
	sent := st[store.RecipientSent] - pr.Delivered - pr.Read
	total := 0
	for _, n := range st {
		total += n
	}
	out := gen.Broadcast{
		Id: b.ID, Name: b.Name, CampaignId: b.CampaignID, TemplateName: b.TemplateName, Language: b.TemplateLanguage,
		State: gen.BroadcastState(b.State), ResumeAt: utcPtr(b.ResumeAt), ScheduledAt: utcPtr(b.ScheduledAt), TimeZone: b.TimeZone,
		CreatedAt: b.CreatedAt.UTC(), StartedAt: utcPtr(b.StartedAt), FinishedAt: utcPtr(b.FinishedAt),
		Counts: gen.BroadcastCounts{Total: total, Pending: st[store.RecipientPending], Sending: st[store.RecipientSending],
			Unknown: st[store.RecipientUnknown], Sent: sent, Delivered: pr.Delivered, Read: pr.Read,
			Failed: st[store.RecipientFailed], Cancelled: st[store.RecipientCancelled]},
		Rate: float32(pr.Rate), Eta: pr.ETA, Preflight: preflightOut(domain.PreflightOf(b)),
	}
	if b.PauseReason != "" && b.State == store.BroadcastPaused {
		reason := b.PauseReason
		out.PauseReason = &reason
	}
	if b.Test {
		mode := gen.BroadcastModeTest
		out.Mode = &mode
	}
	return out, nil
}

func preflightOut(pf domain.Preflight) gen.Preflight {
	out := gen.Preflight{Recipients: pf.Recipients, Duplicates: pf.Duplicates, OptedOut: pf.OptedOut, Blocked: pf.Blocked,
		UsMarketing: pf.USMarketing, Throughput: pf.Throughput, EstimatedSeconds: pf.EstimatedSeconds,
		Budget: gen.BroadcastBudget{Used: pf.BudgetUsed, Needed: pf.BudgetNeeded}}
	if pf.BudgetLimit > 0 {
		limit, share := pf.BudgetLimit, float32(pf.BudgetShare)
		out.Budget.Limit, out.Budget.Share = &limit, &share
	}
	return out
}

func recipientOut(r store.BroadcastRecipient) gen.BroadcastRecipient {
	out := gen.BroadcastRecipient{Id: r.ID, Status: gen.BroadcastRecipientStatus(r.State), Attempts: r.Attempts,
		ErrorCode: r.ErrorCode, FinishedAt: utcPtr(r.FinishedAt)}
	if r.Mobile != "" {
		out.Mobile = &r.Mobile
	}
	if r.UserID != "" {
		out.UserId = &r.UserID
	}
	if r.MessageID != "" {
		out.MessageId = &r.MessageID
	}
	if r.ErrorTitle != "" {
		out.ErrorTitle = &r.ErrorTitle
	}
	return out
}

// utcPtr is t in UTC, nil for nil.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
