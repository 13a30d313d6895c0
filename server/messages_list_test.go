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

type listedMessage struct {
	MessageID      int64     `json:"message_id"`
	ChatMessageID  string    `json:"chat_message_id"`
	Status         string    `json:"status"`
	Destination    string    `json:"destination"`
	ContactID      int64     `json:"contact_id"`
	ConversationID int64     `json:"conversation_id"`
	CampaignID     *int64    `json:"campaign_id"`
	CampaignName   string    `json:"campaign_name"`
	Template       string    `json:"template"`
	Source         string    `json:"source"`
	CreatedAt      time.Time `json:"created_at"`
	SentAt         time.Time `json:"sent_at"`
	Error          *struct {
		Code  int    `json:"code"`
		Title string `json:"title"`
	} `json:"error"`
}

type messagePage struct {
	Messages   []listedMessage `json:"messages"`
	NextCursor *string         `json:"next_cursor"`
}

func listMessages(t testing.TB, env *servertest.Env, key, query string) messagePage {
	t.Helper()
	var p messagePage
	wantOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/messages?" + query, Key: key}), &p)
	return p
}

func (p messagePage) ids() []int64 {
	out := []int64{}
	for _, m := range p.Messages {
		out = append(out, m.MessageID)
	}
	return out
}

// seededMessage is one message listTenant put in the database.
type seededMessage struct {
	id                   int64
	contact, campaign    int64
	template, status     string
	created              time.Time
	errCode              int
	campaignName, mobile string
}

// listTenant is an account with two contacts, two campaigns and messages in every status,
// template and hour, seeded straight into the database (the send path has its own tests).
type listTenant struct {
	servertest.Tenant
	contacts  []int64
	mobiles   []string
	convs     []int64
	campaigns []int64
	names     []string
	msgs      []seededMessage // newest first
}

var listBase = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

func newListTenant(t testing.TB, env *servertest.Env, name string, n int) *listTenant {
	t.Helper()
	lt := &listTenant{Tenant: env.NewTenant(name), names: []string{"API", "Spring sale"}}
	db := env.Store.DB()
	for i, m := range []string{"5511987654321", "447700900123"} {
		var c, v int64
		if err := db.Get(&c, `INSERT INTO contacts (account_id, mobile, name) VALUES ($1, $2, $3) RETURNING id`,
			lt.Account.ID, m, fmt.Sprintf("Contact %d", i)); err != nil {
			t.Fatal(err)
		}
		if err := db.Get(&v, `INSERT INTO conversations (account_id, contact_id) VALUES ($1, $2) RETURNING id`, lt.Account.ID, c); err != nil {
			t.Fatal(err)
		}
		lt.contacts, lt.mobiles, lt.convs = append(lt.contacts, c), append(lt.mobiles, m), append(lt.convs, v)
	}
	for _, cn := range lt.names {
		var id int64
		if err := db.Get(&id, `INSERT INTO campaigns (account_id, name) VALUES ($1, $2) RETURNING id`, lt.Account.ID, cn); err != nil {
			t.Fatal(err)
		}
		lt.campaigns = append(lt.campaigns, id)
	}
	for range n {
		lt.add(t, env, listBase.Add(time.Duration(len(lt.msgs))*time.Hour))
	}
	return lt
}

// add seeds the next message of the rotation at created.
func (lt *listTenant) add(t testing.TB, env *servertest.Env, created time.Time) seededMessage {
	t.Helper()
	k := len(lt.msgs)
	m := seededMessage{contact: lt.contacts[k%2], mobile: lt.mobiles[k%2], campaign: lt.campaigns[(k/2)%2],
		campaignName: lt.names[(k/2)%2], template: []string{"welcome", "order_confirmation", "shipping_update"}[k%3],
		status: []string{"sent", "delivered", "read", "failed", "pending"}[k%5], created: created}
	var code *int
	if m.status == "failed" {
		m.errCode = 131026
		code = &m.errCode
	}
	if err := env.Store.DB().Get(&m.id, `INSERT INTO messages (account_id, contact_id, conversation_id, campaign_id, direction, type,
			destination, template_name, platform_message_id, status, created_at, sent_at, failed_at, error_code, error_title)
		VALUES ($1, $2, $3, $4, 'out', 'template', $5, $6, 'wamid.list-' || gen_random_uuid(), $7, $8,
			CASE WHEN $7 <> 'pending' THEN $8::timestamptz END, CASE WHEN $7 = 'failed' THEN $8::timestamptz END, $9,
			CASE WHEN $9::int IS NULL THEN NULL ELSE 'Message undeliverable' END) RETURNING id`,
		lt.Account.ID, m.contact, lt.convs[k%2], m.campaign, m.mobile, m.template, m.status, created, code); err != nil {
		t.Fatal(err)
	}
	lt.msgs = append([]seededMessage{m}, lt.msgs...)
	return m
}

// want is the ids the listing must show for a filter, newest first (pending never listed).
func (lt *listTenant) want(keep func(seededMessage) bool) []int64 {
	out := []int64{}
	for _, m := range lt.msgs {
		if m.status != "pending" && keep(m) {
			out = append(out, m.id)
		}
	}
	return out
}

// Each filter of GET /messages, alone and combined, lists exactly the matching messages newest
// first; sends the platform has not answered are never listed; every field is filled.
func TestListMessagesFilters(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	lt := newListTenant(t, env, "Acme Ltd", 30)
	at := func(h int) string {
		return url.QueryEscape(listBase.Add(time.Duration(h) * time.Hour).Format(time.RFC3339))
	}
	in := func(m seededMessage, from, to int) bool {
		return !m.created.Before(listBase.Add(time.Duration(from)*time.Hour)) && m.created.Before(listBase.Add(time.Duration(to)*time.Hour))
	}
	cases := []struct {
		name  string
		query string
		keep  func(seededMessage) bool
	}{
		{"none", "", func(seededMessage) bool { return true }},
		{"status", "status=failed", func(m seededMessage) bool { return m.status == "failed" }},
		{"status read", "status=read", func(m seededMessage) bool { return m.status == "read" }},
		{"campaign", fmt.Sprintf("campaign_id=%d", lt.campaigns[1]), func(m seededMessage) bool { return m.campaign == lt.campaigns[1] }},
		{"contact", fmt.Sprintf("contact_id=%d", lt.contacts[0]), func(m seededMessage) bool { return m.contact == lt.contacts[0] }},
		{"template", "template=shipping_update", func(m seededMessage) bool { return m.template == "shipping_update" }},
		{"unknown template", "template=nope", func(seededMessage) bool { return false }},
		{"created_after", "created_after=" + at(20), func(m seededMessage) bool { return in(m, 20, 1000) }},
		{"created_before", "created_before=" + at(7), func(m seededMessage) bool { return in(m, -1000, 7) }},
		{"date range", "created_after=" + at(5) + "&created_before=" + at(17), func(m seededMessage) bool { return in(m, 5, 17) }},
		{"all at once", fmt.Sprintf("status=delivered&campaign_id=%d&contact_id=%d&template=welcome&created_after=%s&created_before=%s",
			lt.campaigns[0], lt.contacts[1], at(0), at(30)),
			func(m seededMessage) bool {
				return m.status == "delivered" && m.campaign == lt.campaigns[0] && m.contact == lt.contacts[1] && m.template == "welcome"
			}},
	}
	nonEmpty := 0
	for _, c := range cases {
		want := lt.want(c.keep)
		got := listMessages(t, env, lt.Live, c.query+"&limit=200")
		if !slices.Equal(got.ids(), want) || got.NextCursor != nil {
			t.Errorf("%s (%s): %v, want %v", c.name, c.query, got.ids(), want)
		}
		if len(want) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < len(cases)-1 {
		t.Fatalf("the seed leaves %d filters empty", len(cases)-nonEmpty)
	}
	// The fields of one failed message.
	var failed seededMessage
	for _, m := range lt.msgs {
		if m.status == "failed" {
			failed = m
			break
		}
	}
	got := listMessages(t, env, lt.Live, "status=failed&limit=1")
	m := got.Messages[0]
	if m.MessageID != failed.id || m.ContactID != failed.contact || m.Destination != failed.mobile || m.CampaignID == nil ||
		*m.CampaignID != failed.campaign || m.CampaignName != failed.campaignName || m.Template != failed.template ||
		m.Source != "api" || !m.CreatedAt.Equal(failed.created) || m.Error == nil || m.Error.Code != 131026 ||
		m.Error.Title != "Message undeliverable" || m.ChatMessageID == "" || got.NextCursor == nil {
		t.Fatalf("failed message listed as %+v (next %v), seeded %+v", m, got.NextCursor, failed)
	}
}

// Malformed parameters are a 422 naming the parameter.
func TestListMessagesInvalid(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	for q, field := range map[string]string{
		"limit=201":               "query.limit",
		"limit=0":                 "query.limit",
		"status=pending":          "query.status",
		"campaign_id=0":           "query.campaign_id",
		"created_after=yesterday": "query.created_after",
		"cursor=not-a-cursor":     "query.cursor",
		"cursor=MTI":              "query.cursor", // a GET /campaigns cursor
		// A cursor of the right shape whose time PostgreSQL cannot hold (years before 4713 BC).
		"cursor=LTk5OTk5OTk5OTk5OTk5OTk5OS4x": "query.cursor",
	} {
		for _, key := range []string{a.Live, a.Test} {
			r := env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/messages?" + q, Key: key})
			e := wantFailure(t, r, http.StatusUnprocessableEntity, "validation_failed")
			if _, ok := e.Errors[field]; !ok {
				t.Errorf("%s: errors %v, want %s", q, e.Errors, field)
			}
		}
	}
}

// The listings and reports need a key like every operation.
func TestReportsUnauthenticated(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	for _, p := range []string{"/v1/messages", "/v1/campaigns", "/v1/campaigns/1"} {
		wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: p}), http.StatusUnauthorized, "unauthorized")
		wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: p, Key: "svc_live_nope"}), http.StatusUnauthorized, "unauthorized")
	}
}

// Following next_cursor while new messages keep arriving walks the listing as it was when the
// first page was read: no row twice, none missed, and the new messages only on a fresh first
// page. A page read again with the same cursor is the same page.
func TestListMessagesCursorStable(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	lt := newListTenant(t, env, "Acme Ltd", 40)
	before := lt.want(func(seededMessage) bool { return true })
	var walked []int64
	cursor := ""
	latest := lt.msgs[0].created
	for page := 0; ; page++ {
		q := "limit=7"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		p := listMessages(t, env, lt.Live, q)
		walked = append(walked, p.ids()...)
		if page == 1 {
			// The same cursor again, after more arrivals, is the same page.
			for range 3 {
				latest = latest.Add(time.Minute)
				lt.add(t, env, latest)
			}
			if again := listMessages(t, env, lt.Live, q); !slices.Equal(again.ids(), p.ids()) {
				t.Fatalf("page 2 read again: %v, first read %v", again.ids(), p.ids())
			}
		}
		// New messages arrive between pages, some in the same second as the newest.
		for range 2 {
			latest = latest.Add(time.Second)
			lt.add(t, env, latest)
		}
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
		if page > 20 {
			t.Fatal("the walk does not end")
		}
	}
	if !slices.Equal(walked, before) {
		t.Fatalf("walked %v,\nwant    %v", walked, before)
	}
	fresh := listMessages(t, env, lt.Live, "limit=200")
	if !slices.Equal(fresh.ids(), lt.want(func(seededMessage) bool { return true })) || len(fresh.ids()) <= len(before) {
		t.Fatalf("fresh first page %v misses the new messages", fresh.ids())
	}
}

// Another account's campaign and contact ids list nothing; its messages never show.
func TestTenancyMessageList(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := newListTenant(t, env, "Acme Ltd", 10)
	b := newListTenant(t, env, "Beta Inc", 3)
	for _, q := range []string{
		fmt.Sprintf("campaign_id=%d", a.campaigns[0]), fmt.Sprintf("contact_id=%d", a.contacts[0]),
		fmt.Sprintf("campaign_id=%d&contact_id=%d", a.campaigns[1], a.contacts[1]),
	} {
		if p := listMessages(t, env, b.Live, q); len(p.Messages) != 0 {
			t.Fatalf("B lists A's messages with %s: %v", q, p.ids())
		}
	}
	if got, want := listMessages(t, env, b.Live, "limit=200").ids(), b.want(func(seededMessage) bool { return true }); !slices.Equal(got, want) {
		t.Fatalf("B lists %v, want only its own %v", got, want)
	}
	// A cursor made from A's listing only positions B's own listing.
	p := listMessages(t, env, a.Live, "limit=1")
	for _, id := range listMessages(t, env, b.Live, "limit=200&cursor="+url.QueryEscape(*p.NextCursor)).ids() {
		if !slices.Contains(b.want(func(seededMessage) bool { return true }), id) {
			t.Fatalf("B's listing from A's cursor shows %d", id)
		}
	}
}

// Test keys list the fixture messages, with the filters and the cursor working on them; nothing
// of the account's live messages shows.
func TestListMessagesTestMode(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	lt := newListTenant(t, env, "Acme Ltd", 5)
	all := listMessages(t, env, lt.Test, "")
	if !slices.Equal(all.ids(), []int64{4, 3, 2, 1}) || all.NextCursor != nil {
		t.Fatalf("fixtures: %v", all.ids())
	}
	for q, want := range map[string][]int64{
		"status=failed":                          {3},
		"campaign_id=1":                          {2, 1},
		"contact_id=1":                           {2, 1},
		"template=order_confirmation_update":     {4, 3},
		"created_after=2026-01-06T00:00:00Z":     {4, 3, 2},
		"created_before=2026-01-11T16:00:00Z":    {2, 1},
		"campaign_id=2&status=read&contact_id=3": {4},
	} {
		if got := listMessages(t, env, lt.Test, q).ids(); !slices.Equal(got, want) {
			t.Errorf("test mode %s: %v, want %v", q, got, want)
		}
	}
	var walked []int64
	q := "limit=3"
	for {
		p := listMessages(t, env, lt.Test, q)
		walked = append(walked, p.ids()...)
		if p.NextCursor == nil {
			break
		}
		q = "limit=3&cursor=" + url.QueryEscape(*p.NextCursor)
	}
	if !slices.Equal(walked, []int64{4, 3, 2, 1}) {
		t.Fatalf("test-mode walk %v", walked)
	}
	if f := all.Messages[1]; f.Status != "failed" || f.Error == nil || f.Error.Code != 131026 || f.CampaignName != "November orders" {
		t.Fatalf("fixture failed message: %+v", f)
	}
}
