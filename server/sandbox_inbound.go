package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gateway/platform/whatsapp"
	"gateway/server/domain"
	"gateway/store"
)

// The shared sandbox number (spec, Test mode), end to end:
//   - "join <code>" registers the handset for the workspace with that join code and answers,
//     through the sandbox number, which workspace it joined and until when; an unknown code or
//     the code of a deactivated workspace gets a reply saying so.
//   - While the handset's 24-hour window is open (from its latest join, measured at the
//     message's timestamp), every other message it sends reaches that workspace as a
//     message.received event with mode "test" (fixture contact and conversation ids, a
//     test-mode message id); nothing live is written.
//   - A handset in no sandbox, or whose window ended, gets a reply saying how to join.
//
// Each platform message id is handled once (store.RecordSandboxMessage), so a redelivered
// webhook neither replies nor fires its event again. Replies go out in the background, bounded
// by the send timeout, so the platform's webhook is answered without waiting for them.

// sandboxReplyTimeFormat is how reply texts show a window's end.
const sandboxReplyTimeFormat = "2 Jan 2006 15:04 UTC"

// handleSandboxMessages handles the inbound messages of a change on the sandbox number, each on
// its own: a message that cannot be handled becomes a dead letter and the rest are applied.
func (s *Server) handleSandboxMessages(ctx context.Context, d *platformPost, v whatsapp.ChangeValue) error {
	names := make(map[string]string, len(v.Contacts))
	for _, c := range v.Contacts {
		if c.WaID != "" {
			names[c.WaID] = c.Profile.Name
		}
	}
	for _, m := range v.Messages {
		if m.ID == "" || !domain.IsWaID(m.From) {
			// The sandbox knows handsets by number: a message without one cannot join or reach
			// a workspace, and is kept as a dead letter.
			if err := s.deadLetter(ctx, d, 0, "sandbox", rawOr(m.Raw, m),
				errors.New("sandbox message without an id or a sender number")); err != nil {
				return err
			}
			continue
		}
		if err := s.handleSandboxMessage(ctx, m, names[m.From]); err != nil {
			if err := s.deadLetter(ctx, d, 0, "sandbox", rawOr(m.Raw, m), err); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Server) handleSandboxMessage(ctx context.Context, m whatsapp.InboundMessage, name string) error {
	at, ok := m.Time()
	if !ok {
		at = s.now()
	}
	rec := store.SandboxMessage{PlatformMessageID: m.ID, Sender: m.From, Name: name,
		Type: cmp.Or(m.Type, "unknown"), ReceivedAt: at}
	if code, ok := joinPhrase(m); ok {
		reply, accountID, err := s.sandboxJoin(ctx, code, m.From, at)
		if err != nil {
			return err
		}
		rec.AccountID = accountID
		_, first, err := s.store.RecordSandboxMessage(ctx, rec)
		if err != nil {
			return err
		}
		if first {
			s.sandboxReply(ctx, m.From, reply)
		}
		return nil
	}

	p, err := s.store.LatestSandboxJoin(ctx, append([]string{m.From}, domain.WaIDForms(m.From)...))
	var reply string
	switch {
	case errors.Is(err, store.ErrNotFound):
		reply = "This phone is not in a sandbox. Send \"join <code>\" with the join code on your workspace's overview to " +
			"start a 24-hour test window."
	case err != nil:
		return err
	case at.Sub(p.JoinedAt) > sandboxWindow:
		acct, err := s.store.AccountByID(ctx, p.AccountID)
		if err != nil {
			return err
		}
		reply = fmt.Sprintf("Your 24-hour sandbox window with %q ended on %s. Send \"join %s\" again to reopen it.",
			acct.Name, p.JoinedAt.Add(sandboxWindow).UTC().Format(sandboxReplyTimeFormat), acct.JoinCode)
	default:
		in := inboundFromPlatform(m)
		kind, fields, err := domain.ReceivedFields(in.Type, in.Content, in.ReferredProduct)
		if err != nil {
			return fmt.Errorf("message.received fields: %w", err)
		}
		rec.AccountID, rec.Event, rec.EventFields, rec.Type = p.AccountID, true, fields, kind
		rec.ConversationID, rec.ContactID = testConversationID, testContactID
		if _, first, err := s.store.RecordSandboxMessage(ctx, rec); err != nil {
			return err
		} else if first {
			s.log.InfoContext(ctx, "sandbox: message delivered as a test event", "account_id", p.AccountID, "wamid", m.ID)
		}
		return nil
	}
	if _, first, err := s.store.RecordSandboxMessage(ctx, rec); err != nil {
		return err
	} else if first {
		s.sandboxReply(ctx, m.From, reply)
	}
	return nil
}

// joinPhrase returns the code of a "join <code>" text message (case and spacing ignored).
func joinPhrase(m whatsapp.InboundMessage) (string, bool) {
	if m.Type != "text" || m.Text == nil {
		return "", false
	}
	f := strings.Fields(m.Text.Body)
	if len(f) != 2 || !strings.EqualFold(f[0], "join") {
		return "", false
	}
	return f[1], true
}

// sandboxJoin registers the handset and returns the reply text and the workspace it joined (0
// for an unknown code). It fails only when the database does.
func (s *Server) sandboxJoin(ctx context.Context, code, from string, at time.Time) (string, int64, error) {
	accountID, err := s.store.JoinSandbox(ctx, code, from, at)
	if errors.Is(err, store.ErrNotFound) {
		s.log.InfoContext(ctx, "sandbox: join with an unknown code")
		return fmt.Sprintf("The code %q does not match any sandbox. Check the join phrase on your workspace's overview "+
			"and send \"join <code>\" again.", code), 0, nil
	}
	if err != nil {
		return "", 0, err
	}
	acct, err := s.store.AccountByID(ctx, accountID)
	if err != nil {
		return "", 0, err
	}
	if !acct.Active {
		s.log.InfoContext(ctx, "sandbox: join for a deactivated account", "account_id", accountID)
		return fmt.Sprintf("The sandbox with the code %q is no longer available.", code), 0, nil
	}
	s.log.InfoContext(ctx, "sandbox: handset joined", "account_id", accountID)
	until := at.Add(sandboxWindow).UTC().Format(sandboxReplyTimeFormat)
	return fmt.Sprintf("You joined the sandbox of %q until %s. Its test messages reach this phone for real (at most %d), "+
		"and what you send here reaches it as test events.", acct.Name, until, sandboxRealLimit), accountID, nil
}

// sandboxReply sends text to the handset through the sandbox number, in the background; a
// failure is logged. Without a platform or a sandbox token nothing is sent.
func (s *Server) sandboxReply(ctx context.Context, to, text string) {
	sb := s.opts.Sandbox
	if s.platform == nil || sb.AccessToken == "" || sb.PhoneNumberID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.SendTimeout)
	go func() {
		defer cancel()
		if _, err := s.platform.SendText(ctx, sb.AccessToken, sb.PhoneNumberID, to, text); err != nil {
			s.log.WarnContext(ctx, "sandbox: reply failed", "error", err.Error())
		}
	}()
}
