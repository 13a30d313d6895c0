package server

import (
	"context"
	"encoding/json"
	"time"

	"gateway/gen"
	"gateway/platform/whatsapp"
	"gateway/server/domain"
	"gateway/store"
)

// Test mode (the svc_test_ and svc_demo_ keys of openapi/openapi.yaml): what test and demo keys
// send and see instead of the account's live data (testMessaging, which modeFor selects for
// them): the fixture templates and the sandbox's chat. The test send itself (simulated, or real
// through the sandbox number for a joined phone) is the domain's (server/domain/testsend.go), and
// so are the fixture contacts, messages and campaigns and the ageing of a test message read back
// through GET /v1/messages/{id} (server/domain/testrecords.go).

// The fixture identifiers every test-mode send answers with, and the sandbox's limits, are the
// domain's (server/domain/testsend.go).
const (
	testCampaignID     = domain.TestCampaignID
	testConversationID = domain.TestConversationID
	testContactID      = domain.TestContactID
	sandboxRealLimit   = domain.SandboxRealLimit
	sandboxWindow      = domain.SandboxWindow
)

// testMessaging is a test or demo key's: fixture templates, and test sends recorded apart
// from the account's live data.
type testMessaging struct{ s *Server }

// send is the domain's test-mode send (server/domain/testsend.go): the fixtures, simulated or
// through the sandbox number.
func (t testMessaging) send(ctx context.Context, p Principal, in domain.TemplateSend) (domain.SentMessage, error) {
	return t.s.sends.SendTestTemplate(ctx, domain.TestSender{AccountID: p.AccountID, Mode: p.Mode, JoinCode: p.JoinCode}, in)
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
