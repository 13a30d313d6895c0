package server

import (
	"context"
	"encoding/base64"
	"errors"
	"math"
	"net/http"
	"strconv"

	"gateway/gen"
	"gateway/server/domain"
	"gateway/store"
)

// errCampaignNotFound is GetCampaign's 404 (domain.ErrCampaignNotFound), for a missing id and
// another account's alike.
var errCampaignNotFound = newAPIError(http.StatusNotFound, gen.ErrorCodeNotFound, "Campaign not found")

// ListCampaigns lists the account's campaigns newest first with their counts (read from the
// counters; the key's domain.Records). Test and demo keys see fixture campaigns.
func (a *api) ListCampaigns(ctx context.Context, req gen.ListCampaignsRequestObject) (gen.ListCampaignsResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	limit, before := 50, int64(0)
	if req.Params.Limit != nil {
		limit = *req.Params.Limit
	}
	if req.Params.Cursor != nil {
		if before, err = parseCampaignCursor(*req.Params.Cursor); err != nil {
			return nil, errBadCursor
		}
	}
	cs, err := p.records.Campaigns(ctx, p.AccountID, before, limit+1)
	if err != nil {
		return nil, err
	}
	out := gen.CampaignList{Campaigns: make([]gen.Campaign, 0, len(cs))}
	if len(cs) > limit {
		cs = cs[:limit]
		next := campaignCursor(cs[limit-1].ID)
		out.NextCursor = &next
	}
	for _, c := range cs {
		out.Campaigns = append(out.Campaigns, campaignOut(c))
	}
	return gen.ListCampaigns200JSONResponse{Body: gen.CampaignsEnvelope{Success: true, Message: "OK", Data: out}}, nil
}

// GetCampaign is one campaign's report: counts, rates, first and last send and the top failure
// reasons. Another account's id is the same 404 as a missing one.
func (a *api) GetCampaign(ctx context.Context, req gen.GetCampaignRequestObject) (gen.GetCampaignResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	c, reasons, err := p.records.Campaign(ctx, p.AccountID, req.Id)
	if errors.Is(err, domain.ErrCampaignNotFound) {
		return nil, errCampaignNotFound
	}
	if err != nil {
		return nil, err
	}
	out := campaignOut(c)
	rs := make([]gen.FailureReason, 0, len(reasons))
	for _, r := range reasons {
		rs = append(rs, gen.FailureReason{Code: r.Code, Title: r.Title, Count: r.Count})
	}
	out.FailureReasons = &rs
	return gen.GetCampaign200JSONResponse{Body: gen.CampaignEnvelope{Success: true, Message: "OK", Data: out}}, nil
}

func campaignOut(c store.CampaignReport) gen.Campaign {
	out := gen.Campaign{Id: c.ID, Name: c.Name, CreatedAt: c.CreatedAt.UTC(),
		Counts: gen.CampaignCounts{Total: c.Total(), Pending: c.Pending, Sent: c.Sent, Delivered: c.Delivered,
			Read: c.Read, Failed: c.Failed},
		DeliveryRate: round4(c.DeliveryRate()), ReadRate: round4(c.ReadRate())}
	if c.FirstSentAt != nil {
		t := c.FirstSentAt.UTC()
		out.FirstSentAt = &t
	}
	if c.LastSentAt != nil {
		t := c.LastSentAt.UTC()
		out.LastSentAt = &t
	}
	return out
}

// round4 keeps a rate to four decimals (0.8523).
func round4(x float64) float64 { return math.Round(x*10000) / 10000 }

// campaignCursor is the opaque position after the campaign with that id.
func campaignCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(id, 10)))
}

func parseCampaignCursor(s string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, err
	}
	id, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || id < 1 {
		return 0, errors.New("malformed cursor")
	}
	return id, nil
}
