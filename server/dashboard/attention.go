package dashboard

import (
	"context"
	"strconv"
	"time"

	"gateway/store"
)

// The overview's first screen after the first sends: the last day's funnel and replies, what
// needs the business's attention (each with a link to act on it), and the next setup step.

// dayView is the last 24 hours on the overview.
type dayView struct {
	funnel
	Replies int64
}

// attention is one thing to look at: a sentence and the page to act on it.
type attention struct {
	Text, Link, LinkText string
	// At is a time the sentence ends with ("since …"); nil for none.
	At *time.Time
}

// nextStep is the next thing to set up; empty once everything is.
type nextStep struct {
	Text, Link, LinkText string
}

type overviewHealth struct {
	Day       dayView
	Attention []attention
	Next      nextStep
}

func (d *Dashboard) overviewHealth(ctx context.Context, accountID int64, conn *store.ConnectionDetails) (overviewHealth, error) {
	var h overviewHealth
	day, err := d.cfg.Store.DaySummary(ctx, accountID, d.cfg.Clock().Add(-24*time.Hour))
	if err != nil {
		return h, err
	}
	h.Day = dayView{funnel: funnelOf(day.StatusCounts), Replies: day.Replies}

	if conn != nil && (conn.QualityRating == "YELLOW" || conn.QualityRating == "RED") {
		h.Attention = append(h.Attention, attention{Text: "Your number's quality is " + lookupLabel(qualityWords, conn.QualityRating).Text +
			": customers blocked or reported recent messages. Send fewer marketing messages and only to customers who asked for them, or WhatsApp may limit your number.",
			Link: "/dashboard/campaigns", LinkText: "Review your campaigns"})
	}
	es, err := d.cfg.Store.EndpointStatuses(ctx, accountID)
	if err != nil {
		return h, err
	}
	for _, e := range es {
		switch {
		case !e.Enabled && e.DisabledReason != store.DisabledOperator:
			h.Attention = append(h.Attention, attention{Text: "The webhook endpoint " + e.URL + " was turned off because it kept failing; your systems hear nothing.",
				Link: "/dashboard/webhooks/" + strconv.FormatInt(e.ID, 10), LinkText: "Fix and enable it"})
		case e.Enabled && e.FailingSince != nil:
			h.Attention = append(h.Attention, attention{Text: "The webhook endpoint " + e.URL + " has been failing since", At: e.FailingSince,
				Link: "/dashboard/request-log?endpoint=" + strconv.FormatInt(e.ID, 10), LinkText: "See its failed attempts"})
		}
	}
	if h.Day.Failed > 0 {
		h.Attention = append(h.Attention, attention{Text: strconv.FormatInt(h.Day.Failed, 10) + " message" + plural(h.Day.Failed) + " failed in the last 24 hours.",
			Link: "/dashboard/messages?status=failed", LinkText: "See why"})
	}
	rejected, err := d.cfg.Store.TemplatesByAccount(ctx, accountID, "REJECTED", "")
	if err != nil {
		return h, err
	}
	if n := len(rejected); n > 0 {
		text := "The template " + rejected[0].Name + " was rejected"
		if n > 1 {
			text = strconv.Itoa(n) + " templates were rejected"
		}
		h.Attention = append(h.Attention, attention{Text: text + ".", Link: "/dashboard/templates?status=REJECTED", LinkText: "See the reasons"})
	}

	switch {
	case conn == nil:
		h.Next = nextStep{Text: "Connect your WhatsApp number to send live messages (test keys work without it).", Link: "#connect", LinkText: "Connect your number"}
	default:
		keys, err := d.cfg.Store.APIKeysByAccount(ctx, accountID)
		if err != nil {
			return h, err
		}
		switch {
		case len(keys) == 0:
			h.Next = nextStep{Text: "Create an API key for your systems to send messages.", Link: "/dashboard/keys", LinkText: "Create a key"}
		case h.Day.Messages == 0 && len(es) == 0:
			h.Next = nextStep{Text: "Send a first message, from your systems or from here.", Link: "/dashboard/send", LinkText: "Send a message"}
		case len(es) == 0:
			h.Next = nextStep{Text: "Add a webhook endpoint to hear about deliveries, reads and replies as they happen.", Link: "/dashboard/webhooks", LinkText: "Add an endpoint"}
		}
	}
	return h, nil
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}
