package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"gateway/store"
)

// The live status of the pages that show messages (the messages list, a message's page; the
// inbox reuses it). A page marks each status it shows with data-live-message="ID"; live.js, the
// self-hosted script, asks liveMessages for those still able to change every few seconds while
// the page is visible and puts each new status in place, with the problem of a failed one in
// words. Polling a small JSON answer was chosen over server-sent events: it holds no connection
// open per viewer (a gateway behind a load balancer, through PgBouncer's transaction pooling,
// needs no LISTEN connection per page and no stream outliving the write timeout), it works
// under the unchanged Content-Security-Policy (connect-src 'self'), and each poll is one read of
// at most liveMax rows by primary key.

// liveMax is how many messages one poll asks about (a page shows at most messagesPage).
const liveMax = 100

// liveState is one message's status as the page shows it.
type liveState struct {
	ID     int64  `json:"id"`
	Status string `json:"status"`
	// Text and Tone are the status badge's words and colour class (messageStatusWords).
	Text string `json:"text"`
	Tone string `json:"tone"`
	// Final is true when the status cannot change again (read, failed, received).
	Final bool `json:"final"`
	// Problem and Next are a failed message's error in words and the next step ("" otherwise);
	// Code is the platform's error code ("" without one).
	Problem string `json:"problem,omitempty"`
	Next    string `json:"next,omitempty"`
	Code    string `json:"code,omitempty"`
}

// liveMessages answers GET /dashboard/live/messages?id=1&id=2 (at most liveMax ids) with the
// current status of each of those messages that belongs to the session's workspace, as JSON:
// {"messages": [liveState...]}. Ids of another workspace, and malformed ones, are left out.
func (d *Dashboard) liveMessages(w http.ResponseWriter, r *http.Request, s *store.Session) {
	var ids []int64
	for _, v := range r.URL.Query()["id"] {
		if id, err := strconv.ParseInt(v, 10, 64); err == nil && id > 0 && len(ids) < liveMax {
			ids = append(ids, id)
		}
	}
	states, err := d.cfg.Store.MessageStates(r.Context(), s.AccountID, ids)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	out := struct {
		Messages []liveState `json:"messages"`
	}{Messages: make([]liveState, 0, len(states))}
	for _, m := range states {
		l := lookupLabel(messageStatusWords, m.Status)
		st := liveState{ID: m.ID, Status: m.Status, Text: l.Text, Tone: l.Tone,
			Final: m.Status == "read" || m.Status == "failed" || m.Status == "received"}
		if m.Status == "failed" {
			st.Problem, st.Next, _ = errorAdvice(m.ErrorCode)
			if st.Problem == "" {
				st.Problem = "WhatsApp did not deliver it. Open the message for WhatsApp's reason."
			}
			if m.ErrorCode != nil {
				st.Code = strconv.Itoa(*m.ErrorCode)
			}
		}
		out.Messages = append(out.Messages, st)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// messagesCSV downloads the messages list's current filter as CSV through csvExport (the
// campaign export's safety: cells neutralised against formulas, chunks read with no connection
// held while written, the workspace's export slots), newest first like the list.
func (d *Dashboard) messagesCSV(w http.ResponseWriter, r *http.Request, s *store.Session) {
	f, _, none, err := d.messageListFilter(r, s)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	header := []string{"message_id", "created_at", "direction", "contact_name", "number", "contact_id", "template", "campaign",
		"status", "source", "client_reference", "sent_at", "delivered_at", "read_at", "error_code", "error_title", "problem", "next_step"}
	f.Limit = 1000
	done := none
	back := "/dashboard/messages"
	if q := filterQuery(r.URL.Query()).Encode(); q != "" {
		back += "?" + q
	}
	d.csvExport(w, r, s, "messages.csv", back, header, func(ctx context.Context) ([][]string, error) {
		if done {
			return nil, nil
		}
		p, err := d.cfg.Store.ListMessages(ctx, s.AccountID, f)
		if err != nil {
			return nil, err
		}
		f.After, done = p.Next, p.Next == nil
		rows := make([][]string, 0, len(p.Messages))
		for _, m := range p.Messages {
			dir, campaign := "sent", campaignLabel(m.CampaignName)
			if m.Direction == "in" {
				dir, campaign = "received", ""
			}
			what, next, _ := errorAdvice(m.ErrorCode)
			rows = append(rows, []string{strconv.FormatInt(m.ID, 10), csvTime(&m.CreatedAt), dir, m.ContactName, m.ContactMobile,
				strconv.FormatInt(m.ContactID, 10), m.TemplateName, campaign, m.Status, m.Source, deref(m.ClientReference),
				csvTime(m.SentAt), csvTime(m.DeliveredAt), csvTime(m.ReadAt), csvCode(m.ErrorCode), deref(m.ErrorTitle), what, next})
		}
		return rows, nil
	})
}

// csvTime is a time cell of an export: RFC 3339 in UTC, "" without a time.
func csvTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// csvCode is an error code cell: "" without a code.
func csvCode(c *int) string {
	if c == nil {
		return ""
	}
	return strconv.Itoa(*c)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
