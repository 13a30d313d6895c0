package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"gateway/server/domain"
	"gateway/store"
)

// campaignsPage is the number of campaigns on one page of the list.
const campaignsPage = 50

// campaignRow is a campaign with its funnel (the only counts the pages show) and its name as
// the pages say it.
type campaignRow struct {
	ID                      int64
	Label                   string
	FirstSentAt, LastSentAt *time.Time
	funnel
}

func withRates(c store.CampaignReport) campaignRow {
	return campaignRow{ID: c.ID, Label: campaignLabel(c.Name), FirstSentAt: c.FirstSentAt, LastSentAt: c.LastSentAt, funnel: funnelOf(c.StatusCounts)}
}

type campaignsData struct {
	Campaigns []campaignRow
	Next      int64 // id to continue below; 0 on the last page
}

// campaigns lists the workspace's campaigns newest first with their counts, read from the
// counters (domain.LiveRecords.Campaigns).
func (d *Dashboard) campaigns(w http.ResponseWriter, r *http.Request, s *store.Session) {
	before, _ := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	cs, err := d.records().Campaigns(r.Context(), s.AccountID, max(before, 0), campaignsPage+1)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	data := campaignsData{}
	cs, data.Next = keysetPage(cs, campaignsPage, func(c store.CampaignReport) int64 { return c.ID })
	for _, c := range cs {
		data.Campaigns = append(data.Campaigns, withRates(c))
	}
	d.render(w, r, http.StatusOK, "campaigns", page{Title: "Campaigns", Nav: "campaigns", Session: s, Data: data})
}

type campaignData struct {
	campaignRow
	Reasons []store.FailureReason
	Chart   chart
}

// campaignReport is one campaign's report: counts, rates, first and last send, top failure
// reasons and the chart of its messages per hour (a campaign of up to three days) or per day.
func (d *Dashboard) campaignReport(w http.ResponseWriter, r *http.Request, s *store.Session) {
	c, ok := d.campaignOf(w, r, s)
	if !ok {
		return
	}
	ctx := r.Context()
	reasons, err := d.cfg.Store.CampaignFailureReasons(ctx, s.AccountID, c.ID, domain.TopFailureReasons)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	data := campaignData{campaignRow: withRates(c), Reasons: reasons}
	if c.FirstSentAt != nil && c.LastSentAt != nil {
		loc := viewerZone(r)
		from, to, unit := chartRange(*c.FirstSentAt, *c.LastSentAt, loc)
		bs, err := d.cfg.Store.CampaignSeriesIn(ctx, s.AccountID, c.ID, unit, zoneName(loc), from, to)
		if err != nil {
			d.serverError(w, r, err)
			return
		}
		data.Chart = newChart(bs, unit, from, to)
	}
	title := "Campaign " + c.Name
	if data.Label != c.Name {
		title = "Sends without a campaign"
	}
	d.render(w, r, http.StatusOK, "campaign", page{Title: title, Nav: "campaigns", Session: s, Data: data})
}

// campaignOf reads the campaign of the path's id; it answers 404 (another workspace's id
// included) or 500 itself and returns false.
func (d *Dashboard) campaignOf(w http.ResponseWriter, r *http.Request, s *store.Session) (store.CampaignReport, bool) {
	return loadByPathID(d, w, r, s, d.cfg.Store.CampaignByID)
}

// campaignCSV writes the campaign's messages as CSV, oldest first, through csvExport: read in
// chunks, the connection released before each chunk is written, ended by the trailer row.
func (d *Dashboard) campaignCSV(w http.ResponseWriter, r *http.Request, s *store.Session) {
	c, ok := d.campaignOf(w, r, s)
	if !ok {
		return
	}
	// The columns of earlier exports keep their places; the later ones follow them.
	header := []string{"message_id", "created_at", "sent_at", "destination", "contact_id", "template", "status", "source",
		"chat_message_id", "error_code", "error_title", "contact_name", "client_reference", "delivered_at", "read_at",
		"variables", "header_variables"}
	var after *store.MessageCursor
	d.csvExport(w, r, s, csvFileName(c), fmt.Sprintf("/dashboard/campaigns/%d", c.ID), header, func(ctx context.Context) ([][]string, error) {
		ms, err := d.cfg.Store.CampaignMessagesAfter(ctx, s.AccountID, c.ID, after, exportChunk)
		if err != nil || len(ms) == 0 {
			return nil, err
		}
		last := ms[len(ms)-1]
		after = &store.MessageCursor{CreatedAt: last.CreatedAt, ID: last.ID}
		rows := make([][]string, 0, len(ms))
		for _, m := range ms {
			rows = append(rows, []string{strconv.FormatInt(m.ID, 10), csvTime(&m.CreatedAt), csvTime(m.SentAt), m.Destination,
				strconv.FormatInt(m.ContactID, 10), m.TemplateName, m.Status, m.Source, m.PlatformMessageID, csvCode(m.ErrorCode),
				deref(m.ErrorTitle), m.ContactName, deref(m.ClientReference), csvTime(m.DeliveredAt), csvTime(m.ReadAt),
				m.BodyVariables, m.HeaderVariables})
		}
		return rows, nil
	})
}
