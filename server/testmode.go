package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"gateway/gen"
	"gateway/platform/whatsapp"
	"gateway/store"
)

// Test mode (the svc_test_ and svc_demo_ keys of openapi/openapi.yaml): what test and demo keys
// send and see instead of the account's live data (testMessaging, which modeFor selects for
// them). The fixture templates, the test send (simulated, or real through the sandbox number
// for a joined phone) and the rendering of a fixture's text. The fixture contacts, messages
// and campaigns, and the ageing of a test message read back through GET /v1/messages/{id}, are
// the domain's TestRecords (server/domain/testrecords.go).

// Sandbox limits (spec, Test mode): real deliveries per joined phone and the join window.
const (
	sandboxRealLimit = 20
	sandboxWindow    = 24 * time.Hour
)

// Fixture identifiers every test-mode send answers with (they match the fixture contacts).
const (
	testCampaignID     = 1
	testConversationID = 1
	testContactID      = 1
)

// testMessaging is a test or demo key's: fixture templates, and test sends recorded apart
// from the account's live data.
type testMessaging struct{ s *Server }

func (t testMessaging) send(ctx context.Context, p Principal, b *gen.SendTemplateRequest) (gen.SendTemplateMessageResponseObject, error) {
	resp, err := t.s.sendTest(ctx, p, b)
	t.s.countSend(p.Mode, err)
	return resp, err
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

// sendTest is a send with a test or demo key: the fixture templates only, nothing written to
// the account's live data. The send is simulated unless the destination joined the sandbox in
// the last 24 hours and has real deliveries left; then it goes out for real as text through
// the sandbox number.
func (s *Server) sendTest(ctx context.Context, p Principal, b *gen.SendTemplateRequest) (gen.SendTemplateMessageResponseObject, error) {
	accountID := p.AccountID
	tpl, fail := resolveFixture(b)
	if fail != nil {
		return nil, fail
	}
	params, fail := sendParams(tpl, b)
	if fail != nil {
		return nil, fail
	}
	body := params.body
	now := s.now()
	delivery, wamid, note := gen.Simulated, testWamid(), ""
	sb := s.opts.Sandbox
	var claim store.SandboxClaim
	if sb.PhoneNumberID != "" && sb.AccessToken != "" && s.platform != nil {
		var err error
		if claim, err = s.store.ClaimSandboxDelivery(ctx, accountID, b.Destination, now.Add(-sandboxWindow), sandboxRealLimit); err != nil {
			return nil, err
		}
	}
	if claim.Claimed {
		ctx = context.WithoutCancel(ctx)
		pctx, cancel := context.WithTimeout(ctx, s.opts.SendTimeout)
		res, err := s.platform.SendText(pctx, sb.AccessToken, sb.PhoneNumberID, b.Destination, renderFixture(tpl, body))
		cancel()
		if err != nil {
			_, fail := platformFailure(err, s.opts.SendTimeout)
			if fail == nil {
				return nil, fmt.Errorf("sandbox send: %w", err)
			}
			return nil, fail
		}
		delivery, wamid = gen.Real, res.MessageID
		note = fmt.Sprintf("Delivered for real as text through the sandbox number (%d of %d real messages used by this phone).",
			claim.RealSent, sandboxRealLimit)
	} else {
		join := fmt.Sprintf("send \"join %s\" from this phone to the sandbox number %s", p.JoinCode, sb.PhoneNumber)
		switch {
		case claim.Active:
			note = fmt.Sprintf("Simulated: this phone has used its %d real sandbox messages.", sandboxRealLimit)
		case claim.Joined:
			note = "Simulated: this phone's 24-hour sandbox window has ended; " + join + " again to receive test messages for real."
		default:
			note = "Simulated: nothing was sent. To receive test messages for real, " + join + "."
		}
	}
	note += " " + renderedNote(tpl, params)
	tm, err := s.store.RecordTestSend(ctx, accountID, store.TestSendInput{Destination: b.Destination, TemplateName: tpl.Name,
		Delivery: string(delivery), PlatformMessageID: wamid, CreatedAt: now,
		ConversationID: testConversationID, ContactID: testContactID, ClientReference: deref(b.ClientReference)})
	if err != nil {
		return nil, err
	}
	mode := gen.SendResultModeTest
	return gen.SendTemplateMessage200JSONResponse{Body: gen.SendEnvelope{Success: true, Message: "Message sent", Data: gen.SendResult{
		MessageId: tm.ID, ChatMessageId: tm.PlatformMessageID, CampaignId: testCampaignID,
		ConversationId: testConversationID, ContactId: testContactID, ContactCreated: false, Status: gen.Sent,
		Mode: &mode, Delivery: &delivery, Note: &note, ClientReference: b.ClientReference,
	}}}, nil
}

// resolveFixture finds the fixture template a test-mode send names; only the three fixtures
// exist in test mode.
func resolveFixture(b *gen.SendTemplateRequest) (store.Template, *apiError) {
	lang := deref(b.Language)
	if b.TemplateId != nil {
		for _, t := range fixtureTemplates {
			if t.ID == *b.TemplateId {
				return t, agrees(t, b.TemplateName, lang)
			}
		}
		return store.Template{}, templateNotFound(fmt.Sprintf("No approved template with id %d (test mode has the sandbox templates 1, 2 and 3)", *b.TemplateId))
	}
	var ts []store.Template
	for _, t := range fixtureTemplates {
		if t.Name == *b.TemplateName && (lang == "" || lang == t.Language) {
			ts = append(ts, t)
		}
	}
	t, fail := pickByName(ts, *b.TemplateName, lang)
	if fail != nil && fail.Status == http.StatusNotFound {
		fail.Message += " (test mode has the sandbox templates sandbox_welcome, order_confirmation_update and otp_login_code)"
	}
	return t, fail
}

// renderFixture is a fixture template's body with the variables filled in.
func renderFixture(t store.Template, body []string) string {
	var comps []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(t.Components, &comps)
	text := ""
	for _, c := range comps {
		if c.Type == "BODY" {
			text = c.Text
		}
	}
	for i, v := range body {
		text = strings.ReplaceAll(text, "{{"+strconv.Itoa(i+1)+"}}", v)
	}
	return text
}

// testWamid is a platform-like message id for a simulated send.
func testWamid() string {
	var b [18]byte
	rand.Read(b[:])
	return "wamid.test." + base64.RawURLEncoding.EncodeToString(b[:])
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

// Default test-mode ageing (domain.TestRecords): a test message reads as delivered 2 s and
// read 5 s after it was sent. Options.TestDeliveredAfter / TestReadAfter override them; New
// applies these defaults.
const (
	defaultTestDeliveredAfter = 2 * time.Second
	defaultTestReadAfter      = 5 * time.Second
)
