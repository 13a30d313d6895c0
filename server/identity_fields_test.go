package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"gateway/server/domain"
	"gateway/server/servertest"
	"gateway/store"
)

// The fields of issue 30 on contacts and on GET /messages/{id}: identity, service window,
// recipient, template, campaign, type and pricing. Every response is checked against
// openapi.yaml by servertest.

// identityContact is a contact as GET /contacts shows it, with the identity fields.
type identityContact struct {
	ID              int64      `json:"id"`
	Name            string     `json:"name"`
	Mobile          string     `json:"mobile"`
	UserID          string     `json:"user_id"`
	ParentUserID    string     `json:"parent_user_id"`
	Username        string     `json:"username"`
	WindowExpiresAt *time.Time `json:"window_expires_at"`
}

type identityPage struct {
	Contacts   []identityContact `json:"contacts"`
	Pagination pagination        `json:"pagination"`
}

func listIdentity(t *testing.T, env *servertest.Env, key, query string) identityPage {
	t.Helper()
	var p identityPage
	wantOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/contacts?" + query, Key: key}), &p)
	return p
}

// recordInbound records a text from a person as the platform webhook would.
func recordInbound(t *testing.T, env *servertest.Env, accountID int64, in store.InboundMessage) store.InboundResult {
	t.Helper()
	if in.Type == "" {
		in.Type = "text"
		in.Content = json.RawMessage(`{"body":"hello"}`)
		in.EventFields = json.RawMessage(`{"text":"hello"}`)
	}
	if in.Destination == "" {
		in.Destination = "15550783881"
	}
	res, err := env.Store.RecordInbound(context.Background(), accountID, in)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A contact known only by its user id is left out of GET /contacts unless the request opts in
// with include_user_id_only; a search for a user id finds its contact; contacts carry their
// identity and service window.
func TestContactsIdentityAndOptIn(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	wrote := time.Now().UTC().Truncate(time.Second)
	hidden := recordInbound(t, env, a.Account.ID, store.InboundMessage{PlatformMessageID: "wamid.H1",
		UserID: "US.13491208655302741918", Username: "@lucia", ProfileName: "Lucía", SentAt: wrote})
	known := recordInbound(t, env, a.Account.ID, store.InboundMessage{PlatformMessageID: "wamid.K1", From: "5511987654321",
		UserID: "BR.7766554433221100", ParentUserID: "BR.ENT.1122", Username: "@ana", ProfileName: "Ana Souza", SentAt: wrote})
	upsertContact(t, env, a.Live, map[string]any{"mobile": "15551234567", "firstname": "Maria"})

	// A v1 client: every contact has a mobile; the hidden one is not there.
	p := listIdentity(t, env, a.Live, "")
	if p.Pagination.Total != 2 || len(p.Contacts) != 2 {
		t.Fatalf("v1 listing: %+v", p)
	}
	for _, c := range p.Contacts {
		if c.Mobile == "" || c.ID == hidden.ContactID {
			t.Fatalf("v1 listing holds a contact without mobile: %+v", c)
		}
		switch c.ID {
		case known.ContactID:
			if c.UserID != "BR.7766554433221100" || c.ParentUserID != "BR.ENT.1122" || c.Username != "@ana" ||
				c.WindowExpiresAt == nil || !c.WindowExpiresAt.Equal(wrote.Add(24*time.Hour)) {
				t.Fatalf("known contact: %+v", c)
			}
		default:
			if c.UserID != "" || c.Username != "" || c.WindowExpiresAt != nil {
				t.Fatalf("contact who never wrote: %+v", c)
			}
		}
	}
	// A user id search without opting in does not reveal the hidden contact...
	if p := listIdentity(t, env, a.Live, "search="+url.QueryEscape("US.13491208655302741918")); p.Pagination.Total != 0 {
		t.Fatalf("user id search without opt-in: %+v", p)
	}
	// ...but finds a contact that has a mobile.
	if p := listIdentity(t, env, a.Live, "search=BR.7766554433221100"); p.Pagination.Total != 1 || p.Contacts[0].ID != known.ContactID {
		t.Fatalf("user id search: %+v", p)
	}
	// Opted in: the hidden contact too, newest first, with an empty mobile.
	p = listIdentity(t, env, a.Live, "include_user_id_only=true")
	if p.Pagination.Total != 3 || len(p.Contacts) != 3 {
		t.Fatalf("opt-in listing: %+v", p)
	}
	var seen bool
	for _, c := range p.Contacts {
		if c.ID == hidden.ContactID {
			seen = true
			if c.Mobile != "" || c.UserID != "US.13491208655302741918" || c.Username != "@lucia" || c.WindowExpiresAt == nil {
				t.Fatalf("hidden contact: %+v", c)
			}
		}
	}
	if !seen {
		t.Fatalf("opt-in listing without the hidden contact: %+v", p)
	}
	p = listIdentity(t, env, a.Live, "include_user_id_only=true&search="+url.QueryEscape("US.13491208655302741918"))
	if p.Pagination.Total != 1 || len(p.Contacts) != 1 || p.Contacts[0].ID != hidden.ContactID {
		t.Fatalf("opt-in user id search: %+v", p)
	}
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/contacts?include_user_id_only=maybe", Key: a.Live}),
		http.StatusUnprocessableEntity, "validation_failed")
}

// Test keys read the same shapes from the fixtures: the user-id-only fixture only on request,
// found by its user id, and a fixture's identity and window.
func TestContactsIdentityTestMode(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	plain := listIdentity(t, env, a.Test, "")
	for _, c := range plain.Contacts {
		if c.Mobile == "" {
			t.Fatalf("test key's v1 listing holds a contact without mobile: %+v", c)
		}
	}
	all := listIdentity(t, env, a.Test, "include_user_id_only=true")
	if all.Pagination.Total != plain.Pagination.Total+1 {
		t.Fatalf("opt-in fixtures %d, plain %d", all.Pagination.Total, plain.Pagination.Total)
	}
	var hidden identityContact
	var withWindow, withUser bool
	for _, c := range all.Contacts {
		if c.Mobile == "" {
			hidden = c
		}
		withWindow = withWindow || c.WindowExpiresAt != nil
		withUser = withUser || (c.Mobile != "" && c.UserID != "" && c.Username != "")
	}
	if hidden.UserID == "" || !withWindow || !withUser {
		t.Fatalf("fixtures lack identity shapes: %+v", all.Contacts)
	}
	if p := listIdentity(t, env, a.Test, "search="+url.QueryEscape(hidden.UserID)); p.Pagination.Total != 0 {
		t.Fatalf("test key's user id search without opt-in: %+v", p)
	}
	p := listIdentity(t, env, a.Test, "include_user_id_only=true&search="+url.QueryEscape(hidden.UserID))
	if p.Pagination.Total != 1 || p.Contacts[0].ID != hidden.ID {
		t.Fatalf("test key's user id search: %+v", p)
	}
}

// messageFields is GET /messages/{id} with the fields of issue 30.
type messageFields struct {
	MessageID int64  `json:"message_id"`
	Status    string `json:"status"`
	Type      string `json:"type"`
	Recipient *struct {
		ContactID int64  `json:"contact_id"`
		Mobile    string `json:"mobile"`
		UserID    string `json:"user_id"`
		Name      string `json:"name"`
	} `json:"recipient"`
	Template *struct {
		Name     string `json:"name"`
		Language string `json:"language"`
	} `json:"template"`
	Campaign *struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"campaign"`
	WindowExpiresAt *time.Time `json:"window_expires_at"`
	Pricing         *struct {
		Type     string `json:"type"`
		Category string `json:"category"`
		Model    string `json:"model"`
	} `json:"pricing"`
}

// GET /messages/{id} names the recipient, the template and the campaign, gives the message's
// type and its contact's window, and the pricing a status report gave, which the
// message.status event carries too.
func TestGetMessageRecipientTemplateCampaignPricing(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{Simulator: quietSim()})
	tn := pwNewTenant(t, env, "Acme Ltd")
	if _, err := env.Server.SyncTemplates(context.Background(), tn.Account.ID); err != nil {
		t.Fatal(err)
	}
	wrote := time.Now().UTC().Truncate(time.Second)
	in := recordInbound(t, env, tn.Account.ID, store.InboundMessage{PlatformMessageID: "wamid.IN1", From: "15551234567",
		UserID: "US.5551234567000", ProfileName: "Maria Garcia", SentAt: wrote})
	var d sendData
	mustOK(t, send(env, tn.Live, map[string]any{"destination": "15551234567", "template_name": "welcome",
		"campaign_name": "Spring sale"}), &d)

	var m messageFields
	r := getMessage(env, tn.Live, d.MessageID)
	mustOK(t, r, &m)
	if m.Type != "template" || m.Recipient == nil || m.Recipient.ContactID != in.ContactID || m.Recipient.ContactID != d.ContactID ||
		m.Recipient.Mobile != "15551234567" || m.Recipient.UserID != "US.5551234567000" || m.Recipient.Name != "Maria Garcia" ||
		m.Template == nil || m.Template.Name != "welcome" || m.Template.Language == "" ||
		m.Campaign == nil || m.Campaign.ID != d.CampaignID || m.Campaign.Name != "Spring sale" ||
		m.WindowExpiresAt == nil || !m.WindowExpiresAt.Equal(wrote.Add(24*time.Hour)) || m.Pricing != nil {
		t.Fatalf("GET after send: %s", r.Body)
	}

	// The platform reports delivered with its pricing (the reference's status shape).
	st := pwStatus(d.ChatMessageID, "delivered", time.Now().Unix())
	st["pricing"] = map[string]any{"billable": true, "pricing_model": "PMP", "type": "regular", "category": "utility"}
	pwPostOK(t, env, pwStatuses(t, tn.Conn, st))
	r = getMessage(env, tn.Live, d.MessageID)
	mustOK(t, r, &m)
	if m.Status != "delivered" || m.Pricing == nil || m.Pricing.Type != "regular" || m.Pricing.Category != "utility" ||
		m.Pricing.Model != "PMP" {
		t.Fatalf("GET after a priced status: %s", r.Body)
	}
	evs := pwEvents(t, env, tn.Account.ID, "message.status")
	if len(evs) != 1 {
		t.Fatalf("%d message.status events", len(evs))
	}
	pricing, _ := pwData(t, evs[0])["pricing"].(map[string]any)
	if pricing["type"] != "regular" || pricing["category"] != "utility" || pricing["model"] != "PMP" {
		t.Fatalf("message.status event data %v", pwData(t, evs[0]))
	}
	checkEventBodies(t, env, tn.Account.ID)
}

// A test key's message reads in the same shape: recipient, template, the standing campaign,
// type, and the pricing once the test send reads as delivered.
func TestGetMessageFieldsTestMode(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	var d sendData
	mustOK(t, send(env, a.Test, map[string]any{"destination": "15551234567", "template_name": "sandbox_welcome"}), &d)
	var m messageFields
	r := getMessage(env, a.Test, d.MessageID)
	mustOK(t, r, &m)
	if m.Type != "template" || m.Recipient == nil || m.Recipient.ContactID != d.ContactID || m.Recipient.Mobile != "15551234567" ||
		m.Template == nil || m.Template.Name != "sandbox_welcome" || m.Template.Language != "en_US" ||
		m.Campaign == nil || m.Campaign.ID != d.CampaignID || m.Campaign.Name != domain.DefaultCampaign {
		t.Fatalf("test message: %s", r.Body)
	}
	if (m.Status == "sent") != (m.Pricing == nil) {
		t.Fatalf("test message %s with pricing %+v", m.Status, m.Pricing)
	}
}
