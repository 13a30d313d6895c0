package dashboard

import (
	"regexp"
	"strconv"
	"strings"

	"gateway/server/domain"
	"gateway/store"
)

// One meaning per number: every page that counts messages counts them as a funnel. A message
// WhatsApp accepted is Sent until it fails, whatever came next (a read message was also delivered
// and sent); Delivered includes the read ones; Failed stands apart; Waiting is not answered yet.
// So Sent ≥ Delivered ≥ Read, and Messages = Waiting + Sent + Failed.
type funnel struct {
	Messages, Waiting, Sent, Delivered, Read, Failed int64
	// DeliveryPct and ReadPct are Delivered and Read over the answered sends (Sent + Failed);
	// "—" when none was answered yet.
	DeliveryPct, ReadPct string
}

func funnelOf(c store.StatusCounts) funnel {
	f := funnel{Messages: c.Total(), Waiting: c.Pending, Sent: c.Sent + c.Delivered + c.Read, Delivered: c.Delivered + c.Read,
		Read: c.Read, Failed: c.Failed, DeliveryPct: "—", ReadPct: "—"}
	if c.Answered() > 0 {
		f.DeliveryPct, f.ReadPct = pct(c.DeliveryRate()), pct(c.ReadRate())
	}
	return f
}

func pct(x float64) string { return strconv.FormatFloat(x*100, 'f', 1, 64) + " %" }

// campaignLabel is how pages name a campaign.
func campaignLabel(name string) string {
	if name == domain.DefaultCampaign || name == "" {
		return "No campaign"
	}
	return name
}

var notSlug = regexp.MustCompile(`[^a-z0-9]+`)

// csvFileName is the campaign export's file name, after the campaign: "spring-sale.csv", or
// "campaign-<id>.csv" when the name has no letters or digits to use.
func csvFileName(c store.CampaignReport) string {
	slug := strings.Trim(notSlug.ReplaceAllString(strings.ToLower(campaignLabel(c.Name)), "-"), "-")
	if len(slug) > 60 {
		slug = strings.TrimRight(slug[:60], "-")
	}
	if slug == "" {
		slug = "campaign-" + strconv.FormatInt(c.ID, 10)
	}
	return slug + ".csv"
}
