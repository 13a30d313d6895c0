package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"gateway/server/servertest"
)

type campaignCounts struct {
	Total     int64 `json:"total"`
	Pending   int64 `json:"pending"`
	Sent      int64 `json:"sent"`
	Delivered int64 `json:"delivered"`
	Read      int64 `json:"read"`
	Failed    int64 `json:"failed"`
}

type failureReason struct {
	Code  int    `json:"code"`
	Title string `json:"title"`
	Count int64  `json:"count"`
}

type campaignData struct {
	ID             int64           `json:"id"`
	Name           string          `json:"name"`
	Counts         campaignCounts  `json:"counts"`
	DeliveryRate   float64         `json:"delivery_rate"`
	ReadRate       float64         `json:"read_rate"`
	FirstSentAt    *time.Time      `json:"first_sent_at"`
	LastSentAt     *time.Time      `json:"last_sent_at"`
	FailureReasons []failureReason `json:"failure_reasons"`
}

type campaignPage struct {
	Campaigns  []campaignData `json:"campaigns"`
	NextCursor *string        `json:"next_cursor"`
}

func getCampaign(t testing.TB, env *servertest.Env, key string, id int64) campaignData {
	t.Helper()
	var c campaignData
	wantOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: fmt.Sprintf("/v1/campaigns/%d", id), Key: key}), &c)
	return c
}

func listCampaigns(t testing.TB, env *servertest.Env, key, query string) campaignPage {
	t.Helper()
	var p campaignPage
	wantOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/campaigns?" + query, Key: key}), &p)
	return p
}

// directCampaignCounts counts a campaign's messages by status over the messages table.
func directCampaignCounts(t testing.TB, env *servertest.Env, accountID, campaignID int64) campaignCounts {
	t.Helper()
	var c campaignCounts
	if err := env.Store.DB().Get(&c, `SELECT count(*) AS total, count(*) FILTER (WHERE status = 'pending') AS pending,
			count(*) FILTER (WHERE status = 'sent') AS sent, count(*) FILTER (WHERE status = 'delivered') AS delivered,
			count(*) FILTER (WHERE status = 'read') AS read, count(*) FILTER (WHERE status = 'failed') AS failed
		FROM messages WHERE account_id = $1 AND campaign_id = $2 AND direction = 'out'`, accountID, campaignID); err != nil {
		t.Fatal(err)
	}
	return c
}

// A campaign's report: counts by status, rates, first and last send and its failure reasons;
// the listing shows the same numbers, newest campaign first, a page at a time.
func TestCampaignReport(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	lt := newListTenant(t, env, "Acme Ltd", 20)
	for i, id := range lt.campaigns {
		c := getCampaign(t, env, lt.Live, id)
		want := directCampaignCounts(t, env, lt.Account.ID, id)
		if c.ID != id || c.Name != lt.names[i] || c.Counts != want || want.Total == 0 || want.Failed == 0 {
			t.Fatalf("campaign %d: %+v, direct count %+v", id, c, want)
		}
		answered := float64(want.Sent + want.Delivered + want.Read + want.Failed)
		if d, r := float64(want.Delivered+want.Read)/answered, float64(want.Read)/answered; abs(c.DeliveryRate-d) > 0.0001 || abs(c.ReadRate-r) > 0.0001 {
			t.Fatalf("campaign %d rates %v %v, want %v %v", id, c.DeliveryRate, c.ReadRate, d, r)
		}
		var first, last time.Time
		for _, m := range lt.msgs {
			if m.campaign == id {
				if first.IsZero() || m.created.Before(first) {
					first = m.created
				}
				if m.created.After(last) {
					last = m.created
				}
			}
		}
		if c.FirstSentAt == nil || !c.FirstSentAt.Equal(first) || c.LastSentAt == nil || !c.LastSentAt.Equal(last) {
			t.Fatalf("campaign %d first/last %v %v, want %v %v", id, c.FirstSentAt, c.LastSentAt, first, last)
		}
		if len(c.FailureReasons) != 1 || c.FailureReasons[0] != (failureReason{131026, "Message undeliverable", want.Failed}) {
			t.Fatalf("campaign %d failure reasons %+v, want %d × 131026", id, c.FailureReasons, want.Failed)
		}
	}
	// A campaign without messages: zeros, no first send.
	var empty int64
	if err := env.Store.DB().Get(&empty, `INSERT INTO campaigns (account_id, name) VALUES ($1, 'Empty') RETURNING id`, lt.Account.ID); err != nil {
		t.Fatal(err)
	}
	if c := getCampaign(t, env, lt.Live, empty); c.Counts != (campaignCounts{}) || c.FirstSentAt != nil || c.DeliveryRate != 0 ||
		c.FailureReasons == nil || len(c.FailureReasons) != 0 {
		t.Fatalf("empty campaign: %+v", c)
	}
	// The listing, one per page.
	var walked []int64
	q := "limit=1"
	for {
		p := listCampaigns(t, env, lt.Live, q)
		for _, c := range p.Campaigns {
			walked = append(walked, c.ID)
			if c.Counts != directCampaignCounts(t, env, lt.Account.ID, c.ID) || c.FailureReasons != nil {
				t.Fatalf("listed campaign %+v", c)
			}
		}
		if p.NextCursor == nil {
			break
		}
		q = "limit=1&cursor=" + url.QueryEscape(*p.NextCursor)
	}
	if want := []int64{empty, lt.campaigns[1], lt.campaigns[0]}; !slices.Equal(walked, want) {
		t.Fatalf("campaigns walked %v, want %v", walked, want)
	}
	// Malformed: 422.
	for _, q := range []string{"limit=201", "cursor=%21%21", "cursor=" + url.QueryEscape("MTc2MzcxOTIwMDAwMDAwMDAwMC4xMDAx")} {
		wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/campaigns?" + q, Key: lt.Live}),
			http.StatusUnprocessableEntity, "validation_failed")
	}
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/campaigns/0", Key: lt.Live}),
		http.StatusUnprocessableEntity, "validation_failed")
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// Another account's campaign id is the same 404 as a missing one, in live and test mode, and
// another account's campaigns never show in the listing.
func TestTenancyCampaigns(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := newListTenant(t, env, "Acme Ltd", 6)
	b := env.NewTenant("Beta Inc")
	missing := wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/campaigns/999999", Key: b.Live}), http.StatusNotFound, "not_found")
	for _, id := range a.campaigns {
		e := wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: fmt.Sprintf("/v1/campaigns/%d", id), Key: b.Live}),
			http.StatusNotFound, "not_found")
		if e.Message != missing.Message {
			t.Fatalf("A's campaign answered %q, a missing one %q", e.Message, missing.Message)
		}
		// B's test key answers with a fixture campaign (ids 1 and 2) or 404, never with A's.
		r := env.Do(servertest.Request{Method: http.MethodGet, Path: fmt.Sprintf("/v1/campaigns/%d", id), Key: b.Test})
		if r.Status == http.StatusOK {
			var c campaignData
			wantOK(t, r, &c)
			if c.FirstSentAt == nil || c.FirstSentAt.Year() != 2026 || c.FirstSentAt.Month() != time.January {
				t.Fatalf("B's test key reads A's campaign %d: %+v", id, c)
			}
		} else {
			wantFailure(t, r, http.StatusNotFound, "not_found")
		}
	}
	if p := listCampaigns(t, env, b.Live, "limit=200"); len(p.Campaigns) != 0 {
		t.Fatalf("B lists %+v", p.Campaigns)
	}
}

// Test keys see the fixture campaigns, whose counts are those of the fixture messages.
func TestCampaignsTestMode(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	lt := newListTenant(t, env, "Acme Ltd", 5)
	p := listCampaigns(t, env, lt.Test, "")
	if len(p.Campaigns) != 2 || p.Campaigns[0].ID != 2 || p.Campaigns[1].ID != 1 || p.Campaigns[1].Name != "API" {
		t.Fatalf("fixture campaigns %+v", p.Campaigns)
	}
	c := getCampaign(t, env, lt.Test, 2)
	if c.Counts != (campaignCounts{Total: 2, Read: 1, Failed: 1}) || c.DeliveryRate != 0.5 || c.ReadRate != 0.5 ||
		len(c.FailureReasons) != 1 || c.FailureReasons[0].Count != 1 {
		t.Fatalf("fixture campaign 2: %+v", c)
	}
	api := getCampaign(t, env, lt.Test, 1)
	if api.Counts != (campaignCounts{Total: 2, Sent: 1, Delivered: 1}) || len(api.FailureReasons) != 0 {
		t.Fatalf("fixture campaign 1: %+v", api)
	}
	// The fixture listing by one: walks 2 then 1.
	first := listCampaigns(t, env, lt.Test, "limit=1")
	second := listCampaigns(t, env, lt.Test, "limit=1&cursor="+url.QueryEscape(*first.NextCursor))
	if first.Campaigns[0].ID != 2 || len(second.Campaigns) != 1 || second.Campaigns[0].ID != 1 || second.NextCursor != nil {
		t.Fatalf("fixture pages %+v %+v", first, second)
	}
	// The live campaigns' ids answer 404 to the test key unless they are fixture ids.
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/campaigns/3", Key: lt.Test}), http.StatusNotFound, "not_found")
}

// Sends that create the same campaign at once all succeed (the counters' upserts never
// deadlock with the campaign's creation), and the campaign counts every one of them.
func TestCampaignCountersConcurrentSends(t *testing.T) {
	env, tn := sendEnv(t, servertest.Config{})
	for round := range 4 {
		name := fmt.Sprintf("Launch %d", round)
		var reqs []servertest.Request
		for i := range 16 {
			reqs = append(reqs, servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Key: tn.Live,
				Body: map[string]any{"destination": fmt.Sprintf("15553%02d%04d", round, i), "template_name": "order_confirmation",
					"campaign_name": name, "body_variables": []string{"Ana", "ORD-7781"}}})
		}
		var campaign int64
		for i, r := range env.DoAtOnce(reqs) {
			var d struct {
				CampaignID int64 `json:"campaign_id"`
			}
			mustOK(t, r, &d)
			if i > 0 && d.CampaignID != campaign {
				t.Fatalf("round %d: sends grouped under campaigns %d and %d", round, campaign, d.CampaignID)
			}
			campaign = d.CampaignID
		}
		if c := getCampaign(t, env, tn.Live, campaign); c.Name != name || c.Counts != (campaignCounts{Total: 16, Sent: 16}) {
			t.Fatalf("round %d: %+v", round, c)
		}
	}
}
