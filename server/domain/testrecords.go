package domain

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"gateway/store"
)

// TestRecords is what test and demo keys read instead of the account's live data (the test
// mode of openapi/openapi.yaml): fixed, realistic fixtures, never from the database, and the
// key's own test sends, whose status ages with time. Nothing is written: an upsert answers
// with the contact as given.
type TestRecords struct {
	Store *store.Store
	Now   func() time.Time
	// A test send reads as delivered DeliveredAfter and read ReadAfter after it was sent.
	DeliveredAfter, ReadAfter time.Duration
}

var _ Records = TestRecords{}

// fixtureLanguage is the language of the fixture templates. The fixture campaign (the
// standing campaign, DefaultCampaign) and contact every test send answers with are the test
// send's (TestCampaignID, TestContactID in testsend.go).
const fixtureLanguage = "en_US"

// Message reads a test send; its status is derived from its age on the clock: sent, then
// delivered, then read.
func (t TestRecords) Message(ctx context.Context, accountID, id int64, _ *store.Message) (store.Message, error) {
	tm, err := t.Store.TestMessageByID(ctx, accountID, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Message{}, ErrMessageNotFound
	}
	if err != nil {
		return store.Message{}, err
	}
	sent := tm.CreatedAt.UTC()
	age := t.Now().Sub(sent)
	history := []store.StatusChange{{Status: "sent", At: sent}}
	if age >= t.DeliveredAfter {
		history = append(history, store.StatusChange{Status: "delivered", At: sent.Add(t.DeliveredAfter)})
	}
	if age >= t.ReadAfter {
		history = append(history, store.StatusChange{Status: "read", At: sent.Add(t.ReadAfter)})
	}
	campaign := int64(TestCampaignID)
	m := store.Message{ID: tm.ID, AccountID: accountID, PlatformMessageID: tm.PlatformMessageID,
		Status: history[len(history)-1].Status, CreatedAt: sent, SentAt: &sent, History: history,
		ClientReference: tm.ClientReference, Type: "template", Destination: tm.Destination,
		ContactID: TestContactID, RecipientMobile: tm.Destination, TemplateName: tm.TemplateName,
		TemplateLanguage: fixtureLanguage, CampaignID: &campaign, CampaignName: DefaultCampaign}
	// The recipient is the contact the send answered with; its name when the number is its.
	for _, c := range fixtureContacts {
		if c.ID == TestContactID && c.Mobile == tm.Destination {
			m.RecipientName, m.RecipientUserID = c.Name, c.UserID
		}
	}
	// Delivered, the platform would have priced it: a fixture template is a utility one, but
	// for the one-time password's (authentication).
	if len(history) > 1 {
		m.Pricing = &store.Pricing{Type: "regular", Category: "utility", Model: "PMP"}
		if tm.TemplateName == "otp_login_code" {
			m.Pricing.Category = "authentication"
		}
	}
	return m, nil
}

// Messages is the page of fixture messages matching f.
func (TestRecords) Messages(_ context.Context, _ int64, f store.MessageFilter) (store.MessagePage, error) {
	return fixtureMessagePage(f), nil
}

// Contacts is the page of fixture contacts matching the search (name or mobile).
func (TestRecords) Contacts(_ context.Context, _ int64, o store.ContactListOptions) (store.ContactPage, error) {
	return fixtureContactPage(o), nil
}

// UpsertContact answers with the contact as given and writes nothing.
func (TestRecords) UpsertContact(_ context.Context, _ int64, in store.ContactInput) (store.Contact, bool, error) {
	var name *string
	if in.Firstname != nil || in.Lastname != nil {
		n := JoinName(in.Firstname, in.Lastname)
		name = &n
	}
	return upsertedFixture(in.Mobile, name), true, nil
}

// Campaigns is up to limit fixture campaigns with an id below before (all when 0).
func (TestRecords) Campaigns(_ context.Context, _, before int64, limit int) ([]store.CampaignReport, error) {
	out := []store.CampaignReport{}
	for _, c := range fixtureCampaigns {
		if (before == 0 || c.ID < before) && len(out) < limit {
			out = append(out, fixtureCounted(c))
		}
	}
	return out, nil
}

// Campaign is the fixture campaign with that id, its counts and failure reasons.
func (TestRecords) Campaign(_ context.Context, _, id int64) (store.CampaignReport, []store.FailureReason, error) {
	for _, c := range fixtureCampaigns {
		if c.ID != id {
			continue
		}
		c = fixtureCounted(c)
		var reasons []store.FailureReason
		if c.Failed > 0 {
			reasons = append(reasons, store.FailureReason{Code: 131026, Title: "Message undeliverable", Count: c.Failed})
		}
		return c, reasons, nil
	}
	return store.CampaignReport{}, nil, ErrCampaignNotFound
}

// fixtureContacts are the contacts test and demo keys list, newest first: one known by its
// business-scoped user id alone (listed only on request), one with a user id and a username
// beside its number, one whose service window was opened.
var fixtureContacts = []store.Contact{
	{ID: 4, Name: "Lucía", UserID: "US.13491208655302741918", Username: "@lucia",
		CreatedAt: time.Date(2026, 1, 13, 11, 0, 0, 0, time.UTC), WindowExpiresAt: fixtureTime(2026, 1, 14, 11)},
	{ID: 3, Mobile: "5511987654321", Name: "Ana Souza", CreatedAt: time.Date(2026, 1, 12, 9, 30, 0, 0, time.UTC),
		WindowExpiresAt: fixtureTime(2026, 1, 13, 9)},
	{ID: 2, Mobile: "447700900123", Name: "Oliver Smith", UserID: "GB.2208417733201945561", Username: "@oliver",
		CreatedAt: time.Date(2026, 1, 10, 15, 0, 0, 0, time.UTC)},
	{ID: 1, Mobile: "15551234567", Name: "Maria Garcia", Note: "VIP", CreatedAt: time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)},
}

// fixtureTime is a fixture's time on the hour, UTC.
func fixtureTime(y int, m time.Month, d, h int) *time.Time {
	t := time.Date(y, m, d, h, 0, 0, 0, time.UTC)
	return &t
}

// fixtureContactPage is the page of fixture contacts o selects, as the store's listing would:
// a user id finds its contact; any other search matches the name or the mobile (or, for a
// contact without a mobile, the username); contacts without a mobile only when
// o.WithoutMobile.
func fixtureContactPage(o store.ContactListOptions) store.ContactPage {
	var match []store.Contact
	search := strings.TrimSpace(o.Search)
	q := strings.ToLower(search)
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, q)
	for _, c := range fixtureContacts {
		var ok bool
		switch {
		case c.Mobile == "" && !o.WithoutMobile:
		case store.LooksLikeUserID(search):
			ok = c.UserID == search
		case q == "":
			ok = true
		case strings.Contains(strings.ToLower(c.Name), q):
			ok = true
		case c.Mobile == "":
			ok = strings.Contains(strings.ToLower(c.Username), q)
		default:
			ok = store.IsPhoneFragment(q) && strings.Contains(c.Mobile, digits)
		}
		if ok {
			match = append(match, c)
		}
	}
	page := store.ContactPage{Total: len(match), Contacts: []store.Contact{}}
	if o.Offset < len(match) {
		page.Contacts = match[o.Offset:min(len(match), o.Offset+o.Limit)]
	}
	return page
}

// upsertedFixture is the answer to a test-mode upsert: the contact as given, with an id
// derived from the mobile so the same number always answers the same id.
func upsertedFixture(mobile string, name *string) store.Contact {
	h := fnv.New32a()
	h.Write([]byte(mobile))
	c := store.Contact{ID: int64(h.Sum32()%100000) + 1000, Mobile: mobile}
	if name != nil {
		c.Name = *name
	}
	return c
}

// The fixtures of the reports (GET /v1/messages, /v1/campaigns): two campaigns (the standing
// API campaign has the id every test send answers with) and four messages to the fixture
// contacts, newest first. The campaigns' counts are those of the fixture messages.
var (
	fixtureCampaigns = []store.CampaignReport{
		{ID: 2, Name: "November orders", CreatedAt: time.Date(2026, 1, 11, 15, 0, 0, 0, time.UTC)},
		{ID: TestCampaignID, Name: DefaultCampaign, CreatedAt: time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)},
	}
	fixtureMessages = []store.ListedMessage{
		fixtureMessage(4, 3, 2, "order_confirmation_update", "read", time.Date(2026, 1, 12, 10, 0, 0, 0, time.UTC)),
		fixtureMessage(3, 2, 2, "order_confirmation_update", "failed", time.Date(2026, 1, 11, 16, 0, 0, 0, time.UTC)),
		fixtureMessage(2, 1, TestCampaignID, "otp_login_code", "delivered", time.Date(2026, 1, 6, 9, 0, 0, 0, time.UTC)),
		fixtureMessage(1, 1, TestCampaignID, "sandbox_welcome", "sent", time.Date(2026, 1, 5, 8, 5, 0, 0, time.UTC)),
	}
)

func fixtureMessage(id, contactID, campaignID int64, template, status string, at time.Time) store.ListedMessage {
	m := store.ListedMessage{ID: id, ContactID: contactID, ConversationID: contactID, CampaignID: &campaignID,
		Direction: "out", Type: "template", TemplateName: template, Status: status, Source: "api",
		PlatformMessageID: fmt.Sprintf("wamid.test.fixture%d", id), CreatedAt: at, SentAt: &at}
	for _, c := range fixtureContacts {
		if c.ID == contactID {
			m.Destination = c.Mobile
		}
	}
	for _, c := range fixtureCampaigns {
		if c.ID == campaignID {
			m.CampaignName = c.Name
		}
	}
	if status == "failed" {
		code, title := 131026, "Message undeliverable"
		m.ErrorCode, m.ErrorTitle = &code, &title
	}
	return m
}

// fixtureMessagePage is the page of fixture messages matching f.
func fixtureMessagePage(f store.MessageFilter) store.MessagePage {
	page := store.MessagePage{Messages: []store.ListedMessage{}}
	for _, m := range fixtureMessages {
		switch {
		case f.Status != "" && m.Status != f.Status,
			f.CampaignID != 0 && *m.CampaignID != f.CampaignID,
			f.ContactID != 0 && m.ContactID != f.ContactID,
			f.Template != "" && m.TemplateName != f.Template,
			!f.CreatedAfter.IsZero() && m.CreatedAt.Before(f.CreatedAfter),
			!f.CreatedBefore.IsZero() && !m.CreatedAt.Before(f.CreatedBefore),
			f.After != nil && !(m.CreatedAt.Before(f.After.CreatedAt) || m.CreatedAt.Equal(f.After.CreatedAt) && m.ID < f.After.ID):
			continue
		}
		if len(page.Messages) == f.Limit {
			last := page.Messages[len(page.Messages)-1]
			page.Next = &store.MessageCursor{CreatedAt: last.CreatedAt, ID: last.ID}
			break
		}
		page.Messages = append(page.Messages, m)
	}
	return page
}

// fixtureCounted fills a fixture campaign's counts and first and last send from the fixture
// messages.
func fixtureCounted(c store.CampaignReport) store.CampaignReport {
	for _, m := range fixtureMessages {
		if *m.CampaignID != c.ID {
			continue
		}
		switch m.Status {
		case "sent":
			c.Sent++
		case "delivered":
			c.Delivered++
		case "read":
			c.Read++
		case "failed":
			c.Failed++
		}
		at := m.CreatedAt
		if c.FirstSentAt == nil || at.Before(*c.FirstSentAt) {
			c.FirstSentAt = &at
		}
		if c.LastSentAt == nil || at.After(*c.LastSentAt) {
			c.LastSentAt = &at
		}
	}
	return c
}
