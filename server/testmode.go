package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"gateway/gen"
	"gateway/platform/whatsapp"
	"gateway/server/domain"
	"gateway/store"
)

// Test mode (the svc_test_ and svc_demo_ keys of openapi/openapi.yaml): what test and demo keys
// see instead of the account's live data (testMessaging, which modeFor selects for them). The
// fixture contacts and templates, and the ageing of a test message read back through
// GET /v1/messages/{id}. The test send itself (simulated, or real through the sandbox number
// for a joined phone) is the domain's: server/domain/testsend.go.

// The fixture identifiers every test-mode send answers with, and the sandbox's limits, are the
// domain's (server/domain/testsend.go).
const (
	testCampaignID     = domain.TestCampaignID
	testConversationID = domain.TestConversationID
	testContactID      = domain.TestContactID
	sandboxRealLimit   = domain.SandboxRealLimit
	sandboxWindow      = domain.SandboxWindow
)

// testMessaging is a test or demo key's: fixtures, and test sends recorded apart from the
// account's live data.
type testMessaging struct{ s *Server }

// send is the domain's test-mode send (server/domain/testsend.go): the fixtures, simulated or
// through the sandbox number.
func (t testMessaging) send(ctx context.Context, p Principal, in domain.TemplateSend) (domain.SentMessage, error) {
	return t.s.sends.SendTestTemplate(ctx, domain.TestSender{AccountID: p.AccountID, Mode: p.Mode, JoinCode: p.JoinCode}, in)
}

func (t testMessaging) message(ctx context.Context, accountID, id int64) (gen.Message, error) {
	return t.s.getTestMessage(ctx, accountID, id)
}

func (testMessaging) messages(_ context.Context, _ int64, f store.MessageFilter) (store.MessagePage, error) {
	return fixtureMessagePage(f), nil
}

func (testMessaging) contacts(_ context.Context, _ int64, search string, limit, offset int) (store.ContactPage, error) {
	return fixtureContacts(search, limit, offset), nil
}

// upsertContact answers with the fixture answer and writes nothing.
func (testMessaging) upsertContact(_ context.Context, _ int64, in store.ContactInput) (store.Contact, bool, error) {
	var name *string
	if in.Firstname != nil || in.Lastname != nil {
		n := joinName(in.Firstname, in.Lastname)
		name = &n
	}
	return fixtureContact(in.Mobile, name), true, nil
}

func (testMessaging) campaigns(_ context.Context, _, before int64, limit int) ([]store.CampaignReport, error) {
	return fixtureCampaignPage(before, limit), nil
}

func (testMessaging) campaign(_ context.Context, _, id int64) (store.CampaignReport, []store.FailureReason, error) {
	c, reasons, ok := fixtureCampaign(id)
	if !ok {
		return c, nil, errCampaignNotFound
	}
	return c, reasons, nil
}

func (testMessaging) templates(context.Context, int64) ([]store.Template, error) {
	return fixtureTemplates, nil
}

// chat is the shared sandbox number, and the account's join code for it.
func (t testMessaging) chat(_ context.Context, p Principal) (gen.Chat, *gen.Sandbox, error) {
	sb := t.s.opts.Sandbox
	return gen.Chat{Connected: true, DisplayName: "Sandbox", PhoneNumber: sb.PhoneNumber, PhoneNumberId: sb.PhoneNumberID},
		&gen.Sandbox{PhoneNumber: sb.PhoneNumber, JoinCode: p.JoinCode, JoinPhrase: "join " + p.JoinCode}, nil
}

// fixtures are the contacts test and demo keys list: fixed, realistic, never from the database.
var fixtures = []store.Contact{
	{ID: 3, Mobile: "5511987654321", Name: "Ana Souza", CreatedAt: time.Date(2026, 1, 12, 9, 30, 0, 0, time.UTC)},
	{ID: 2, Mobile: "447700900123", Name: "Oliver Smith", CreatedAt: time.Date(2026, 1, 10, 15, 0, 0, 0, time.UTC)},
	{ID: 1, Mobile: "15551234567", Name: "Maria Garcia", Note: "VIP", CreatedAt: time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)},
}

// fixtureContacts is the page of fixtures matching search (name or mobile), as ListContacts
// answers a test or demo key.
func fixtureContacts(search string, limit, offset int) store.ContactPage {
	var match []store.Contact
	q := strings.ToLower(strings.TrimSpace(search))
	for _, c := range fixtures {
		digits := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, q)
		if q == "" || strings.Contains(strings.ToLower(c.Name), q) || (store.IsPhoneFragment(q) && strings.Contains(c.Mobile, digits)) {
			match = append(match, c)
		}
	}
	page := store.ContactPage{Total: len(match), Contacts: []store.Contact{}}
	if offset < len(match) {
		page.Contacts = match[offset:min(len(match), offset+limit)]
	}
	return page
}

// fixtureContact is the answer to a test-mode upsert: the contact as given, with an id derived
// from the mobile so the same number always answers the same id.
func fixtureContact(mobile string, name *string) store.Contact {
	h := fnv.New32a()
	h.Write([]byte(mobile))
	c := store.Contact{ID: int64(h.Sum32()%100000) + 1000, Mobile: mobile}
	if name != nil {
		c.Name = *name
	}
	return c
}

// Test-mode fixtures: the three templates every test and demo key sees,
// with fixed ids, newest first. Their text is what a sandbox participant receives.
// otp_login_code is an AUTHENTICATION template like a live one: its copy-code button (listed
// as URL, as Meta lists it) carries the code.
var fixtureTemplates = []store.Template{
	fixture(3, "sandbox_welcome", 2, "UTILITY", "Utility",
		`[{"type":"BODY","text":"Welcome to the Messaging Gateway sandbox! Your test messages will arrive here."}]`),
	fixture(2, "order_confirmation_update", 2, "UTILITY", "Utility",
		`[{"type":"BODY","text":"Hi {{1}}, your order {{2}} has been updated. We'll keep you posted."}]`),
	fixture(1, "otp_login_code", 3, "AUTHENTICATION", "Authentication",
		`[{"type":"BODY","text":"{{1}} is your verification code. For your security, do not share this code."},`+
			`{"type":"BUTTONS","buttons":[{"type":"URL","text":"Copy code","url":"https://www.whatsapp.com/otp/code/?otp_type=COPY_CODE&code=otp{{1}}"}]}]`),
}

// fixture builds a fixture template through the same parsing as a synced one.
func fixture(id int64, name string, categoryID int64, category, label, components string) store.Template {
	wt := whatsapp.Template{Name: name, Language: "en_US", Status: store.TemplateApproved, Category: category}
	if err := json.Unmarshal([]byte(components), &wt.Components); err != nil {
		panic("fixture " + name + ": " + err.Error())
	}
	in, err := templateInput(wt)
	if err != nil {
		panic("fixture " + name + ": " + err.Error())
	}
	return store.Template{ID: id, Name: name, Language: in.Language, Status: in.Status, CategoryID: categoryID,
		CategoryName: category, CategoryLabel: label, ParameterFormat: "POSITIONAL", HeaderFormat: in.HeaderFormat,
		HeaderParams: in.HeaderParams, BodyParams: in.BodyParams, Components: in.Components, Buttons: in.Buttons,
		Unsupported: in.Unsupported}
}

// Default test-mode ageing: a test message reads as delivered 2 s and read
// 5 s after it was sent. Options.TestDeliveredAfter / TestReadAfter override them; New applies
// these defaults.
const (
	defaultTestDeliveredAfter = 2 * time.Second
	defaultTestReadAfter      = 5 * time.Second
)

// getTestMessage reads a test send; its status is derived from its age on the server's clock:
// sent, then delivered, then read.
func (s *Server) getTestMessage(ctx context.Context, accountID, id int64) (gen.Message, error) {
	tm, err := s.store.TestMessageByID(ctx, accountID, id)
	if errors.Is(err, store.ErrNotFound) {
		return gen.Message{}, errMessageNotFound
	}
	if err != nil {
		return gen.Message{}, err
	}
	delivered, read := s.opts.TestDeliveredAfter, s.opts.TestReadAfter
	sent := tm.CreatedAt.UTC()
	age := s.now().Sub(sent)
	history := []gen.StatusChange{{Status: gen.Sent, Timestamp: sent}}
	if age >= delivered {
		history = append(history, gen.StatusChange{Status: gen.Delivered, Timestamp: sent.Add(delivered)})
	}
	if age >= read {
		history = append(history, gen.StatusChange{Status: gen.Read, Timestamp: sent.Add(read)})
	}
	return gen.Message{MessageId: tm.ID, ChatMessageId: tm.PlatformMessageID, Status: history[len(history)-1].Status,
		SentAt: sent, History: history, ClientReference: tm.ClientReference}, nil
}

// Test-mode fixtures of the reports (GET /v1/messages, /v1/campaigns): two campaigns (the
// standing API campaign has the id every test send answers with) and four messages to the
// fixture contacts, newest first. The campaigns' counts are those of the fixture messages.
var (
	fixtureCampaigns = []store.CampaignReport{
		{ID: 2, Name: "November orders", CreatedAt: time.Date(2026, 1, 11, 15, 0, 0, 0, time.UTC)},
		{ID: testCampaignID, Name: domain.DefaultCampaign, CreatedAt: time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)},
	}
	fixtureMessages = []store.ListedMessage{
		fixtureMessage(4, 3, 2, "order_confirmation_update", "read", time.Date(2026, 1, 12, 10, 0, 0, 0, time.UTC)),
		fixtureMessage(3, 2, 2, "order_confirmation_update", "failed", time.Date(2026, 1, 11, 16, 0, 0, 0, time.UTC)),
		fixtureMessage(2, 1, testCampaignID, "otp_login_code", "delivered", time.Date(2026, 1, 6, 9, 0, 0, 0, time.UTC)),
		fixtureMessage(1, 1, testCampaignID, "sandbox_welcome", "sent", time.Date(2026, 1, 5, 8, 5, 0, 0, time.UTC)),
	}
)

func fixtureMessage(id, contactID, campaignID int64, template, status string, at time.Time) store.ListedMessage {
	m := store.ListedMessage{ID: id, ContactID: contactID, ConversationID: contactID, CampaignID: &campaignID,
		Direction: "out", Type: "template", TemplateName: template, Status: status, Source: "api",
		PlatformMessageID: fmt.Sprintf("wamid.test.fixture%d", id), CreatedAt: at, SentAt: &at}
	for _, c := range fixtures {
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

// fixtureMessagePage is the page of fixture messages matching f, as ListMessages answers a test
// or demo key.
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

// fixtureCampaign is the fixture campaign with that id, its counts and failure reasons.
func fixtureCampaign(id int64) (store.CampaignReport, []store.FailureReason, bool) {
	for _, c := range fixtureCampaigns {
		if c.ID != id {
			continue
		}
		c = fixtureCounted(c)
		var reasons []store.FailureReason
		if c.Failed > 0 {
			reasons = append(reasons, store.FailureReason{Code: 131026, Title: "Message undeliverable", Count: c.Failed})
		}
		return c, reasons, true
	}
	return store.CampaignReport{}, nil, false
}

// fixtureCampaignPage is up to limit fixture campaigns with an id below before (all when 0).
func fixtureCampaignPage(before int64, limit int) []store.CampaignReport {
	out := []store.CampaignReport{}
	for _, c := range fixtureCampaigns {
		if (before == 0 || c.ID < before) && len(out) < limit {
			out = append(out, fixtureCounted(c))
		}
	}
	return out
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
