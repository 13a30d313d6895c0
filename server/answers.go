package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"gateway/gen"
	"gateway/platform/whatsapp"
	"gateway/server/domain"
	"gateway/server/refusal"
	"gateway/store"
)

// Answers inside the customer's service window (POST /v1/messages) and read receipts
// (POST /v1/messages/{id}/read). The rules of an answer are the domain's (domain.Answer,
// domain.CheckAnswer); the key's mode sends it (answerLive here, answerTest in
// answers_test_mode.go).

// SendMessage sends a non-template message inside the customer's service window
// (POST /v1/messages in openapi/openapi.yaml).
func (a *api) SendMessage(ctx context.Context, req gen.SendMessageRequestObject) (gen.SendMessageResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	ans, err := answerOf(req.Body)
	if err != nil {
		return nil, err
	}
	if fe := domain.CheckAnswer(ans); len(fe) > 0 {
		err := invalid(fe)
		a.s.countSend(p.Mode, err)
		return nil, err
	}
	res, err := p.data.answer(ctx, p, ans)
	if err != nil {
		return nil, err
	}
	return gen.SendMessage200JSONResponse{Body: gen.SendEnvelope{Success: true, Message: "Message sent", Data: res}}, nil
}

// answerOf is the API's body as the domain's Answer: the two have the same JSON shape
// (TestAnswerOfKeepsEveryField).
func answerOf(b *gen.SendMessageRequest) (domain.Answer, error) {
	raw, err := json.Marshal(b)
	if err != nil {
		return domain.Answer{}, fmt.Errorf("answer body: %w", err)
	}
	var a domain.Answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return domain.Answer{}, fmt.Errorf("answer body: %w", err)
	}
	return a, nil
}

// windowClosed is the 409 of an answer outside the customer's service window; closedAt is
// when it closed, nil when the customer never wrote or the platform said so (131047).
func windowClosed(closedAt *time.Time) *apiError {
	return &apiError{Status: http.StatusConflict, Code: gen.ErrorCodeWindowClosed, Message: domain.WindowClosedMessage(closedAt),
		WindowClosedAt: closedAt}
}

// answerLive is a live answer, from the API (source "api") or a contact's page on the
// dashboard ("panel"): the number, the quoted and reacted-to messages, the record (which
// refuses a blocked contact and a closed window), the platform call and its outcome, as a
// template send records them.
func (s *Server) answerLive(ctx context.Context, accountID int64, ans domain.Answer, source string) (gen.SendResult, error) {
	conn, _, err := s.store.SendTarget(ctx, accountID, 0, "", "")
	if errors.Is(err, store.ErrNotFound) {
		return gen.SendResult{}, errNotConnected
	}
	if err != nil {
		return gen.SendResult{}, err
	}
	msg, err := s.platformMessage(ctx, accountID, ans)
	if err != nil {
		return gen.SendResult{}, err
	}
	if s.platform == nil {
		return gen.SendResult{}, errors.New("no messaging platform configured")
	}
	content, err := domain.AnswerContent(ans)
	if err != nil {
		return gen.SendResult{}, err
	}
	held := heldKeyFrom(ctx)
	idemKey := ""
	if held != nil {
		idemKey = held.key
	}
	campaign := ans.CampaignName
	if campaign == "" {
		campaign = domain.DefaultCampaign
	}
	// The same statement as a template send's (shared with concurrent sends), which also reads
	// the person's service window: nothing is written when it is closed.
	begin, err := s.begins.Do(store.SendBegin{AccountID: accountID, SendInput: store.SendInput{Mobile: ans.Destination,
		UserID: ans.UserID, Name: ans.Name, CampaignName: campaign, Type: ans.Type, Content: content,
		ClientReference: ans.ClientReference, IdempotencyKey: idemKey, Source: source, Answer: true, Now: s.now()}})
	if err == nil {
		err = begin.err
	}
	if err != nil {
		return gen.SendResult{}, err
	}
	rec := begin.rec
	switch {
	case rec.Blocked:
		return gen.SendResult{}, errBlocked
	case rec.WindowClosed:
		return gen.SendResult{}, windowClosed(rec.WindowExpiresAt)
	}

	// The message row is committed: the platform call and its recording go on even when the
	// client goes away (as for a template send).
	ctx = context.WithoutCancel(ctx)
	msg.CallbackData = strconv.FormatInt(rec.MessageID, 10)
	pctx, cancel := context.WithTimeout(ctx, s.opts.SendTimeout)
	res, err := s.platform.SendMessage(pctx, conn.AccessToken, conn.PhoneNumberID, msg)
	cancel()
	if errors.Is(err, whatsapp.ErrOutsideWindow) {
		// The platform's own window says closed (131047): the message fails, and the client
		// gets the same 409 as when ours says so.
		f, _ := platformFailure(err, s.opts.SendTimeout)
		if rerr := s.store.RecordSendFailure(ctx, accountID, rec.MessageID, f, s.now()); rerr != nil {
			return gen.SendResult{}, fmt.Errorf("record failed answer %d (%v): %w", rec.MessageID, err, rerr)
		}
		s.metrics.observeSend(domain.ModeLive, string(gen.ErrorCodeWindowClosed), strconv.Itoa(whatsapp.CodeReengagement))
		fail := windowClosed(nil)
		fail.cause = err
		return gen.SendResult{}, fail
	}
	if err != nil {
		_, err := s.sendFailed(ctx, accountID, rec.MessageID, held, err)
		return gen.SendResult{}, err
	}
	if err := s.settleAccepted(ctx, accountID, rec.MessageID, held, res); err != nil {
		return gen.SendResult{}, err
	}
	typ := gen.OutgoingType(ans.Type)
	return gen.SendResult{MessageId: rec.MessageID, ChatMessageId: res.MessageID, CampaignId: rec.CampaignID,
		ConversationId: rec.ConversationID, ContactId: rec.ContactID, ContactCreated: rec.ContactCreated,
		Status: gen.Sent, ClientReference: optional(ans.ClientReference), Type: &typ}, nil
}

// settleAccepted records a send the platform accepted and applies the status reports parked
// for it meanwhile, as sendLive does; a recording that keeps failing goes on in the background
// and the client gets the 502 with the outcome unknown.
func (s *Server) settleAccepted(ctx context.Context, accountID, messageID int64, held *heldKey, res whatsapp.SendResult) error {
	recorded, err := s.recordAccepted(ctx, accountID, messageID, res)
	if err != nil {
		if held != nil {
			held.outcomeUnknown.Store(true)
		}
		s.log.ErrorContext(ctx, "accepted send not recorded; recording it in the background", "message_id", messageID,
			"wamid", res.MessageID, "error", err.Error())
		s.recordLater(accountID, messageID, res)
		return &apiError{Status: http.StatusBadGateway, Code: gen.ErrorCodePlatformUnavailable,
			Message: fmt.Sprintf("The platform accepted the send but it could not be recorded yet; its outcome is being confirmed "+
				"and it will not be sent again. Read GET /v1/messages/%d", messageID),
			MessageID: messageID, OutcomeUnknown: true, cause: err}
	}
	parked := recorded.Parked
	if !recorded.Checked {
		parked, err = s.store.HasParkedStatuses(ctx, accountID, res.MessageID)
	}
	if err == nil && parked {
		err = s.store.ApplyParkedStatuses(ctx, accountID, res.MessageID)
	}
	if err != nil {
		// The reconciler (server/worker/reconcile.go) applies them on its next pass.
		s.log.WarnContext(ctx, "apply parked statuses", "message_id", messageID, "error", err.Error())
	}
	return nil
}

// platformMessage is the answer as the platform receives it: the recipient, the content of
// its kind, and the platform's ids of the quoted and reacted-to messages, which must be
// messages of the account that reached the platform (a 422 naming the field otherwise).
func (s *Server) platformMessage(ctx context.Context, accountID int64, a domain.Answer) (whatsapp.Message, error) {
	m := whatsapp.Message{To: a.Destination, ToUserID: a.UserID}
	var fe refusal.Fields
	if a.ReplyTo != 0 {
		m.ReplyTo = s.platformIDOf(ctx, accountID, a.ReplyTo, "reply_to", &fe)
	}
	media := func(md *domain.AnswerMedia) *whatsapp.MediaMessage {
		return &whatsapp.MediaMessage{ID: md.ID, Link: md.Link, Caption: md.Caption, Filename: md.Filename}
	}
	switch a.Type {
	case domain.AnswerText:
		m.Text = &whatsapp.TextMessage{Body: a.Text.Body, PreviewURL: a.Text.PreviewURL}
	case domain.AnswerImage:
		m.Image = media(a.Image)
	case domain.AnswerVideo:
		m.Video = media(a.Video)
	case domain.AnswerAudio:
		m.Audio = media(a.Audio)
	case domain.AnswerDocument:
		m.Document = media(a.Document)
	case domain.AnswerSticker:
		m.Sticker = media(a.Sticker)
	case domain.AnswerLocation:
		l := a.Location
		m.Location = &whatsapp.LocationMessage{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}
	case domain.AnswerContacts:
		if err := json.Unmarshal(a.Contacts, &m.Contacts); err != nil {
			return m, fmt.Errorf("contact cards: %w", err)
		}
	case domain.AnswerReaction:
		m.Reaction = &whatsapp.Reaction{MessageID: s.platformIDOf(ctx, accountID, a.Reaction.MessageID, "reaction.message_id", &fe),
			Emoji: a.Reaction.Emoji}
	case domain.AnswerInteractive:
		im := a.Interactive
		w := &whatsapp.InteractiveMessage{Type: im.Type, Header: im.Header, Body: im.Body, Footer: im.Footer, ListButton: im.Button}
		for _, b := range im.Buttons {
			w.Buttons = append(w.Buttons, whatsapp.ReplyButton{ID: b.ID, Title: b.Title})
		}
		for _, sec := range im.Sections {
			ws := whatsapp.ListSection{Title: sec.Title}
			for _, r := range sec.Rows {
				ws.Rows = append(ws.Rows, whatsapp.ListRow{ID: r.ID, Title: r.Title, Description: r.Description})
			}
			w.Sections = append(w.Sections, ws)
		}
		m.Interactive = w
	}
	if len(fe) > 0 {
		return m, invalid(fe)
	}
	return m, nil
}

// platformIDOf is the platform's id of the account's message id (sent or received), or "" with
// a reason added at path when the account has no such message or it never reached the platform.
func (s *Server) platformIDOf(ctx context.Context, accountID, id int64, path string, fe *refusal.Fields) string {
	m, err := s.store.MessageRefByID(ctx, accountID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		fe.Add(path, fmt.Sprintf("no message %d in this account", id))
	case err != nil:
		fe.Add(path, "the message could not be read; try again")
	case m.PlatformMessageID == "":
		fe.Add(path, fmt.Sprintf("message %d has not reached the platform (it is %s)", id, m.Status))
	}
	return m.PlatformMessageID
}

// MarkMessageRead marks a received message read on the platform (POST /v1/messages/{id}/read).
func (a *api) MarkMessageRead(ctx context.Context, req gen.MarkMessageReadRequestObject) (gen.MarkMessageReadResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	wamid, err := p.data.markRead(ctx, p, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.MarkMessageRead200JSONResponse{Body: gen.MarkReadEnvelope{Success: true, Message: "Marked read",
		Data: gen.MarkReadResult{MessageId: req.Id, ChatMessageId: wamid}}}, nil
}

// markReadLive marks the account's received message read through its number.
func (s *Server) markReadLive(ctx context.Context, accountID, id int64) (string, error) {
	m, err := s.store.MessageRefByID(ctx, accountID, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", errMessageNotFound
	}
	if err != nil {
		return "", err
	}
	if m.Direction != "in" {
		return "", invalid(refusal.One("path.id", "only a message a customer sent can be marked read; this one was sent by the account"))
	}
	conn, _, err := s.store.SendTarget(ctx, accountID, 0, "", "")
	if errors.Is(err, store.ErrNotFound) {
		return "", errNotConnected
	}
	if err != nil {
		return "", err
	}
	return m.PlatformMessageID, s.markRead(ctx, conn.AccessToken, conn.PhoneNumberID, m.PlatformMessageID)
}

// markRead makes the platform call of a read receipt; a refusal or no answer is a 502.
func (s *Server) markRead(ctx context.Context, token, phoneNumberID, wamid string) error {
	if s.platform == nil {
		return errors.New("no messaging platform configured")
	}
	pctx, cancel := context.WithTimeout(ctx, s.opts.SendTimeout)
	defer cancel()
	err := s.platform.MarkRead(pctx, token, phoneNumberID, wamid, false)
	var pe *whatsapp.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe):
		return &apiError{Status: http.StatusBadGateway, Code: gen.ErrorCodePlatformRejected,
			Message: fmt.Sprintf("The platform refused to mark the message read: %s (code %d)", pe.Reason(), pe.Code), cause: err}
	case errors.Is(err, whatsapp.ErrInvalidArgument):
		return err
	}
	return &apiError{Status: http.StatusBadGateway, Code: gen.ErrorCodePlatformUnavailable,
		Message: "The messaging platform did not answer; the message may not be marked read. Try again.", cause: err}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
