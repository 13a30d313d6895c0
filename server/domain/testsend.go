package domain

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gateway/store"
)

// Where a test-mode send differs from a live one: a test or demo key (chosen once, in
// server/keymode.go) sends only the fixture templates, writes nothing to the account's live
// data (a test_messages row), and is simulated unless the destination joined the sandbox in the
// last 24 hours and has real deliveries left; then it goes out for real as text through the
// sandbox number. The template's rules are the live send's (sendParams).

// Sandbox limits (spec, Test mode): real deliveries per joined phone and the join window.
const (
	SandboxRealLimit = 20
	SandboxWindow    = 24 * time.Hour
)

// Fixture identifiers every test-mode send answers with (they match the fixture contacts).
const (
	TestCampaignID     = 1
	TestConversationID = 1
	TestContactID      = 1
)

// TestSender is the key a test-mode send comes with.
type TestSender struct {
	AccountID int64
	Mode      string // ModeTest or ModeDemo
	JoinCode  string // the account's sandbox join code
}

// SendTestTemplate is a send with a test or demo key; it counts the send under the key's
// mode. in passed CheckTemplateSend.
func (s *Sends) SendTestTemplate(ctx context.Context, k TestSender, in TemplateSend) (SentMessage, error) {
	sent, err := s.sendTest(ctx, k, in)
	s.observe(k.Mode, err)
	return sent, err
}

func (s *Sends) sendTest(ctx context.Context, k TestSender, b TemplateSend) (SentMessage, error) {
	accountID := k.AccountID
	tpl, fail := s.resolveFixture(b)
	if fail != nil {
		return SentMessage{}, fail
	}
	params, fail := sendParams(tpl, b)
	if fail != nil {
		return SentMessage{}, fail
	}
	body := params.body
	now := s.cfg.Clock()
	real, wamid, note := false, testWamid(), ""
	sb := s.cfg.Sandbox
	var claim store.SandboxClaim
	// The sandbox knows phones that joined it: a send to a user id is always simulated.
	if b.Destination != "" && sb.PhoneNumberID != "" && sb.AccessToken != "" && s.cfg.Messenger != nil {
		var err error
		if claim, err = s.cfg.Store.ClaimSandboxDelivery(ctx, accountID, b.Destination, now.Add(-SandboxWindow), SandboxRealLimit); err != nil {
			return SentMessage{}, err
		}
	}
	if claim.Claimed {
		ctx = context.WithoutCancel(ctx)
		pctx, cancel := context.WithTimeout(ctx, s.cfg.SendTimeout)
		res, err := s.cfg.Messenger.SendText(pctx, sb.AccessToken, sb.PhoneNumberID, b.Destination, renderFixture(tpl, body))
		cancel()
		if err != nil {
			_, fail := platformFailure(err, s.cfg.SendTimeout)
			if fail == nil {
				return SentMessage{}, fmt.Errorf("sandbox send: %w", err)
			}
			return SentMessage{}, fail
		}
		real, wamid = true, res.MessageID
		note = fmt.Sprintf("Delivered for real as text through the sandbox number (%d of %d real messages used by this phone).",
			claim.RealSent, SandboxRealLimit)
	} else {
		join := fmt.Sprintf("send \"join %s\" from this phone to the sandbox number %s", k.JoinCode, sb.PhoneNumber)
		switch {
		case b.UserID != "":
			note = "Simulated: nothing was sent. The sandbox delivers for real only to a phone number that joined it, not to a user id."
		case claim.Active:
			note = fmt.Sprintf("Simulated: this phone has used its %d real sandbox messages.", SandboxRealLimit)
		case claim.Joined:
			note = "Simulated: this phone's 24-hour sandbox window has ended; " + join + " again to receive test messages for real."
		default:
			note = "Simulated: nothing was sent. To receive test messages for real, " + join + "."
		}
	}
	note += " " + renderedNote(tpl, params)
	delivery := "simulated"
	if real {
		delivery = "real"
	}
	tm, err := s.cfg.Store.RecordTestSend(ctx, accountID, store.TestSendInput{Destination: cmp.Or(b.Destination, b.UserID), TemplateName: tpl.Name,
		Delivery: delivery, PlatformMessageID: wamid, CreatedAt: now,
		ConversationID: TestConversationID, ContactID: TestContactID, ClientReference: deref(b.ClientReference)})
	if err != nil {
		return SentMessage{}, err
	}
	return SentMessage{Sent: Sent{MessageID: tm.ID, PlatformMessageID: tm.PlatformMessageID, CampaignID: TestCampaignID,
		ConversationID: TestConversationID, ContactID: TestContactID},
		ClientReference: b.ClientReference, Test: &TestDelivery{Real: real, Note: note}}, nil
}

// resolveFixture finds the fixture template a test-mode send names; only the fixtures exist
// in test mode.
func (s *Sends) resolveFixture(b TemplateSend) (store.Template, *SendError) {
	lang := b.Language
	if b.TemplateID != nil {
		for _, t := range s.cfg.Fixtures {
			if t.ID == *b.TemplateID {
				return t, agrees(t, b.TemplateName, lang)
			}
		}
		return store.Template{}, templateNotFound(fmt.Sprintf("No approved template with id %d (test mode has the sandbox templates 1, 2 and 3)", *b.TemplateID))
	}
	var ts []store.Template
	for _, t := range s.cfg.Fixtures {
		if t.Name == *b.TemplateName && (lang == "" || lang == t.Language) {
			ts = append(ts, t)
		}
	}
	t, fail := pickByName(ts, *b.TemplateName, lang)
	if fail != nil && fail.Kind == KindNotFound {
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
