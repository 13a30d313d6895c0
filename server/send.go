package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"gateway/gen"
	"gateway/platform/whatsapp"
	"gateway/server/domain"
	"gateway/server/refusal"
	"gateway/store"
)

// invalid is a 422 naming the offending fields: the API renders fe as its errors object, and
// the dashboard reads fe itself (apiError.Fields).
func invalid(fe refusal.Fields) *apiError {
	return &apiError{Status: http.StatusUnprocessableEntity, Code: gen.ErrorCodeValidationFailed,
		Message: "Invalid request: " + strings.Join(fe.Paths(), ", "), Errors: fe.ByPath(), Fields: fe}
}

func templateNotFound(msg string) *apiError {
	return &apiError{Status: http.StatusNotFound, Code: gen.ErrorCodeTemplateNotFound, Message: msg}
}

var (
	errNotConnected = &apiError{Status: http.StatusConflict, Code: gen.ErrorCodeNumberNotConnected,
		Message: "No number is connected to this account"}
	errBlocked = &apiError{Status: http.StatusConflict, Code: gen.ErrorCodeContactBlocked,
		Message: "The contact has opted out and cannot be messaged"}
)

// SendTemplateMessage sends an approved template (POST /v1/messages/template in openapi/openapi.yaml). Live keys reach the
// platform with the account's number; test and demo keys are simulated (or delivered for real
// through the sandbox number to a phone that joined it): the key's messaging (keymode.go).
func (a *api) SendTemplateMessage(ctx context.Context, req gen.SendTemplateMessageRequestObject) (gen.SendTemplateMessageResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if fe := checkSendRequest(req.Body); len(fe) > 0 {
		err := invalid(fe)
		a.s.countSend(p.Mode, err)
		return nil, err
	}
	return p.data.send(ctx, p, req.Body)
}

// countSend counts a send by its outcome: sent, or the code of its failure (internal_error for
// an unexpected one).
func (s *Server) countSend(mode string, err error) {
	outcome := "sent"
	if err != nil {
		outcome = string(gen.ErrorCodeInternalError)
		var ae *apiError
		if errors.As(err, &ae) {
			outcome = string(ae.Code)
		}
	}
	s.metrics.observeSend(mode, outcome, "")
}

// checkSendRequest is what the schema cannot say: one of template_name or template_id, and a
// destination that starts with a country code.
func checkSendRequest(b *gen.SendTemplateRequest) refusal.Fields {
	var fe refusal.Fields
	if b.TemplateName == nil && b.TemplateId == nil {
		fe.Add("template_name", "one of template_name or template_id is required")
	}
	if strings.HasPrefix(b.Destination, "0") {
		fe.Add("destination", "must start with the country code, not 0")
	}
	return fe
}

// sendLive is a live send, from the API (source "api") or the dashboard's send form
// ("panel"): the same checks, records and events either way.
func (s *Server) sendLive(ctx context.Context, accountID int64, b *gen.SendTemplateRequest, source string) (gen.SendTemplateMessageResponseObject, error) {
	// The number and the candidate templates, in one statement.
	conn, candidates, err := s.store.SendTarget(ctx, accountID, deref(b.TemplateId), deref(b.TemplateName), deref(b.Language))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNotConnected
	}
	if err != nil {
		return nil, err
	}
	tpl, fail := resolveTemplate(candidates, b)
	if fail != nil {
		return nil, fail
	}
	params, fail := sendParams(tpl, b)
	if fail != nil {
		return nil, fail
	}
	header, body := params.header, params.body
	send := whatsapp.TemplateSend{To: b.Destination, Name: tpl.Name, Language: tpl.Language,
		HeaderParams: header, BodyParams: body, HeaderMedia: params.media, HeaderLocation: params.location, Buttons: params.buttons}
	if tpl.ParameterFormat == "NAMED" {
		if send.HeaderParamNames, send.BodyParamNames, err = namedParams(tpl); err != nil {
			return nil, err
		}
	}
	if s.platform == nil {
		return nil, errors.New("no messaging platform configured")
	}
	content, err := json.Marshal(sentContent{Language: tpl.Language, HeaderVariables: orEmpty(header), BodyVariables: orEmpty(body),
		HeaderMedia: b.HeaderMedia, HeaderLocation: b.HeaderLocation, Buttons: params.buttons})
	if err != nil {
		return nil, err
	}
	campaign := domain.DefaultCampaign
	if b.CampaignName != nil {
		campaign = *b.CampaignName
	}
	name := ""
	if b.Name != nil {
		name = *b.Name
	}
	held := heldKeyFrom(ctx)
	idemKey := ""
	if held != nil {
		idemKey = held.key
	}
	// The contact check. A STOP that commits after this statement's snapshot does not stop this
	// send (it is on its way to the platform: the window is this statement plus the platform
	// call); it does stop every send whose BeginSend starts after the STOP committed, under any
	// form of the number, because blocking and this check both resolve the person through
	// store.MobileForms and the aliases, and the check sees every contact that is the person.
	// The statement is shared with concurrent sends (s.begins): it runs to its end even when this
	// client goes away meanwhile, and then this send goes on like any other that began.
	begin, err := s.begins.Do(store.SendBegin{AccountID: accountID, SendInput: store.SendInput{Mobile: b.Destination, Name: name,
		CampaignName: campaign, TemplateID: tpl.ID, TemplateName: tpl.Name, Content: content,
		ClientReference: deref(b.ClientReference), IdempotencyKey: idemKey, Source: source}})
	if err == nil {
		err = begin.err
	}
	if err != nil {
		return nil, err
	}
	rec := begin.rec
	if rec.Blocked {
		return nil, errBlocked
	}

	// The message row is committed: from here on the client going away must not stop the
	// platform call or the recording of its answer, or an accepted message would lose its id.
	ctx = context.WithoutCancel(ctx)
	send.CallbackData = strconv.FormatInt(rec.MessageID, 10)
	pctx, cancel := context.WithTimeout(ctx, s.opts.SendTimeout)
	res, err := s.platform.SendTemplate(pctx, conn.AccessToken, conn.PhoneNumberID, send)
	cancel()
	if err != nil {
		return s.sendFailed(ctx, accountID, rec.MessageID, held, err)
	}
	recorded, err := s.recordAccepted(ctx, accountID, rec.MessageID, res)
	if err != nil {
		// The platform accepted the send but it is not recorded. The key stays held (bound to
		// the message), so a retry never sends again; the recording goes on in the background,
		// and the platform's status reports, which echo our message id, adopt the wamid in any
		// case (store.ApplyStatus).
		if held != nil {
			held.outcomeUnknown.Store(true)
		}
		s.log.ErrorContext(ctx, "accepted send not recorded; recording it in the background", "message_id", rec.MessageID,
			"wamid", res.MessageID, "error", err.Error())
		s.recordLater(accountID, rec.MessageID, res)
		return nil, &apiError{Status: http.StatusBadGateway, Code: gen.ErrorCodePlatformUnavailable,
			Message: fmt.Sprintf("The platform accepted the send but it could not be recorded yet; its outcome is being confirmed "+
				"and it will not be sent again. Read GET /v1/messages/%d", rec.MessageID),
			MessageID: rec.MessageID, OutcomeUnknown: true, cause: err}
	}
	// Reports that arrived before the id was recorded were parked: apply them. Both reads run
	// after the id is committed (store.ApplyStatus explains why that closes the race); the
	// first came with the recording, unless it failed or another path recorded the id.
	parked := recorded.Parked
	if !recorded.Checked {
		parked, err = s.store.HasParkedStatuses(ctx, accountID, res.MessageID)
	}
	if err == nil && parked {
		err = s.store.ApplyParkedStatuses(ctx, accountID, res.MessageID)
	}
	if err != nil {
		// The reports stay parked; the parked-status reconciliation service
		// (server/worker/reconcile.go) applies them on its next pass.
		s.log.WarnContext(ctx, "apply parked statuses", "message_id", rec.MessageID, "error", err.Error())
	}
	return gen.SendTemplateMessage200JSONResponse{Body: gen.SendEnvelope{Success: true, Message: "Message sent", Data: gen.SendResult{
		MessageId: rec.MessageID, ChatMessageId: res.MessageID, CampaignId: rec.CampaignID,
		ConversationId: rec.ConversationID, ContactId: rec.ContactID, ContactCreated: rec.ContactCreated,
		Status: gen.Sent, ClientReference: b.ClientReference,
	}}}, nil
}

// beginTimeout bounds one statement of sends' records (s.begins), and with it how long a send
// waits for its record.
const beginTimeout = 15 * time.Second

// begun is what recording one send before the platform call came to.
type begun struct {
	rec store.SendRecord
	err error
}

// beginSends records a batch of sends before their platform calls (store.BeginSends). When the
// shared statement fails, each send is tried again alone, so that one send the database refuses
// (or a deadlock between two batches) never fails the sends that happened to share its
// statement; a failed statement wrote nothing, so nothing is recorded twice.
func (s *Server) beginSends(ctx context.Context, ws []store.SendBegin) ([]begun, error) {
	out := make([]begun, len(ws))
	recs, err := s.store.BeginSends(ctx, ws)
	if err == nil {
		for i, r := range recs {
			out[i].rec = r
		}
		return out, nil
	}
	if len(ws) == 1 {
		out[0].err = err
		return out, nil
	}
	s.log.WarnContext(ctx, "shared send statement failed; recording its sends one by one", "sends", len(ws), "error", err.Error())
	for i, w := range ws {
		out[i].rec, out[i].err = s.store.BeginSend(ctx, w.AccountID, w.SendInput)
	}
	return out, nil
}

// sentContent is what the message row keeps of a template send.
type sentContent struct {
	Language        string                 `json:"language"`
	HeaderVariables []string               `json:"header_variables"`
	BodyVariables   []string               `json:"body_variables"`
	HeaderMedia     *gen.HeaderMedia       `json:"header_media,omitempty"`
	HeaderLocation  *gen.HeaderLocation    `json:"header_location,omitempty"`
	Buttons         []whatsapp.ButtonParam `json:"buttons,omitempty"`
}

// recordAccepted records the platform's acceptance (store.RecordSentWrites, in a statement
// shared with concurrent sends), retrying a failing database for at most Options.RecordRetry.
// A message that already has this wamid (a status report adopted it meanwhile) counts as
// recorded, with Recorded and Checked false.
func (s *Server) recordAccepted(ctx context.Context, accountID, messageID int64, res whatsapp.SendResult) (store.SentApplied, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RecordRetry)
	defer cancel()
	w := store.SentWrite{AccountID: accountID, MessageID: messageID, PlatformMessageID: res.MessageID, WaID: res.WaID, At: s.now()}
	for delay := 20 * time.Millisecond; ; delay = min(2*delay, time.Second) {
		a, err := s.sents.Do(w)
		if err == nil && !a.Recorded {
			m, merr := s.store.MessageByID(ctx, accountID, messageID)
			if merr == nil && m.PlatformMessageID == res.MessageID {
				return store.SentApplied{}, nil
			}
			return a, store.ErrNotFound
		}
		if err == nil {
			return a, nil
		}
		select {
		case <-ctx.Done():
			return a, err
		case <-time.After(delay):
		}
	}
}

// recordLaterFor bounds the background recording of an accepted send whose recording failed.
const recordLaterFor = 10 * time.Minute

// recordLater keeps recording an accepted send in the background (bounded by recordLaterFor),
// so that the message gets its wamid as soon as the database is back even when no status
// report comes. A process that dies meanwhile loses nothing the platform's status reports
// cannot restore (store.ApplyStatus adopts through the callback data).
func (s *Server) recordLater(accountID, messageID int64, res whatsapp.SendResult) {
	s.later.Add(1)
	go func() {
		defer s.later.Done()
		ctx, cancel := context.WithTimeout(s.laterCtx, recordLaterFor)
		defer cancel()
		for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
			_, err := s.recordAccepted(ctx, accountID, messageID, res)
			if err == nil || errors.Is(err, store.ErrNotFound) {
				if err == nil {
					s.log.Info("accepted send recorded late", "message_id", messageID, "wamid", res.MessageID)
				}
				return
			}
			select {
			case <-ctx.Done():
				s.log.Error("accepted send still not recorded; the platform's status reports will adopt it",
					"message_id", messageID, "wamid", res.MessageID, "error", err.Error())
				return
			case <-time.After(delay):
			}
		}
	}()
}

// sendFailed closes a send the platform did not accept and answers 502 (or 500 for a request
// our own client refused to make). A send whose outcome is unknown (no answer, an unreadable
// answer) is not closed as failed: it is marked outcome_unknown, its key stays held, and the
// 502 says so; the platform's status reports settle it.
func (s *Server) sendFailed(ctx context.Context, accountID, messageID int64, held *heldKey, err error) (gen.SendTemplateMessageResponseObject, error) {
	f, fail := platformFailure(err, s.opts.SendTimeout)
	if fail != nil && fail.Code == gen.ErrorCodePlatformUnavailable {
		if held != nil {
			held.outcomeUnknown.Store(true)
		}
		fail.MessageID, fail.OutcomeUnknown = messageID, true
		if merr := s.store.MarkOutcomeUnknown(ctx, accountID, messageID); merr != nil {
			// The reconciler marks orphaned pending sends (store.MarkOrphanedSends).
			s.log.WarnContext(ctx, "mark send outcome unknown", "message_id", messageID, "error", merr.Error())
		}
		s.log.WarnContext(ctx, "platform send outcome unknown", "message_id", messageID, "error", err.Error())
		return nil, fail
	}
	if rerr := s.store.RecordSendFailure(ctx, accountID, messageID, f, s.now()); rerr != nil {
		return nil, fmt.Errorf("record failed send %d (%v): %w", messageID, err, rerr)
	}
	if fail == nil {
		return nil, fmt.Errorf("send %d: %w", messageID, err)
	}
	s.log.WarnContext(ctx, "platform refused send", "message_id", messageID, "error", err.Error())
	fail.cause = err // the platform's error, for a caller that acts on its code (a broadcast)
	platformCode := ""
	if f.Code != nil {
		platformCode = strconv.Itoa(*f.Code)
	}
	s.metrics.observeSend(domain.ModeLive, string(fail.Code), platformCode)
	return nil, fail
}

// platformFailure maps a platform client error to what the message row records and the 502 the
// client sees; fail is nil for errors that are ours (an argument the client refused).
func platformFailure(err error, timeout time.Duration) (store.SendFailure, *apiError) {
	var pe *whatsapp.Error
	switch {
	case errors.As(err, &pe):
		code := pe.Code
		f := store.SendFailure{Code: &code, Title: platformTitle(pe), Details: pe.Details}
		where := fmt.Sprintf("code %d", pe.Code)
		if pe.Code == 0 {
			where = fmt.Sprintf("HTTP %d", pe.HTTPStatus)
		}
		return f, &apiError{Status: http.StatusBadGateway, Code: gen.ErrorCodePlatformRejected,
			Message: fmt.Sprintf("The platform rejected the send: %s (%s)", pe.Reason(), where)}
	case errors.Is(err, whatsapp.ErrInvalidArgument):
		return store.SendFailure{Title: "Not sent", Details: err.Error()}, nil
	case errors.Is(err, whatsapp.ErrMalformedResponse):
		return store.SendFailure{Title: "Platform answer unreadable", Details: "platform answered with an unreadable body; the outcome is unknown"},
			&apiError{Status: http.StatusBadGateway, Code: gen.ErrorCodePlatformUnavailable,
				Message: "The messaging platform's answer could not be read; the message may or may not have been sent"}
	case whatsapp.IsTimeout(err):
		return store.SendFailure{Title: "Platform unavailable", Details: "platform did not answer; the outcome is unknown"},
			&apiError{Status: http.StatusBadGateway, Code: gen.ErrorCodePlatformUnavailable,
				Message: "The messaging platform did not answer within " + seconds(timeout) + "; the message may or may not have been sent"}
	default:
		return store.SendFailure{Title: "Platform unavailable", Details: "platform could not be reached; the outcome is unknown"},
			&apiError{Status: http.StatusBadGateway, Code: gen.ErrorCodePlatformUnavailable,
				Message: "The messaging platform could not be reached; the message may or may not have been sent"}
	}
}

// platformTitle is the error's title: error_user_title, else the message without its "(#code) "
// prefix.
func platformTitle(pe *whatsapp.Error) string {
	if pe.Title != "" {
		return pe.Title
	}
	msg := pe.Message
	if strings.HasPrefix(msg, "(#") {
		if i := strings.Index(msg, ") "); i > 0 {
			msg = msg[i+2:]
		}
	}
	return msg
}

// seconds renders a timeout for people: "10 seconds", "1 second", "250ms".
func seconds(d time.Duration) string {
	switch {
	case d == time.Second:
		return "1 second"
	case d%time.Second == 0:
		return fmt.Sprintf("%d seconds", d/time.Second)
	}
	return d.String()
}

// resolveTemplate picks the approved template a live send names among the candidates
// store.SendTarget found: by id (any status; only approved ones may be sent), or by name (and
// language).
func resolveTemplate(candidates []store.Template, b *gen.SendTemplateRequest) (store.Template, *apiError) {
	lang := deref(b.Language)
	if b.TemplateId != nil {
		if len(candidates) != 1 || candidates[0].Status != store.TemplateApproved {
			return store.Template{}, templateNotFound(fmt.Sprintf("No approved template with id %d", *b.TemplateId))
		}
		return candidates[0], agrees(candidates[0], b.TemplateName, lang)
	}
	return pickByName(candidates, *b.TemplateName, lang)
}

// agrees checks that the template_name and language sent with a template_id name that template.
func agrees(t store.Template, name *string, lang string) *apiError {
	var fe refusal.Fields
	if name != nil && *name != t.Name {
		fe.Add("template_name", fmt.Sprintf("template_id %d is the template %q, not %q", t.ID, t.Name, *name))
	}
	if lang != "" && lang != t.Language {
		fe.Add("language", fmt.Sprintf("template_id %d is in %s, not %s", t.ID, t.Language, lang))
	}
	if len(fe) == 0 {
		return nil
	}
	return invalid(fe)
}

// pickByName chooses among the approved templates with the requested name (already filtered by
// language when one was given).
func pickByName(ts []store.Template, name, lang string) (store.Template, *apiError) {
	switch {
	case len(ts) == 1:
		return ts[0], nil
	case len(ts) == 0 && lang != "":
		return store.Template{}, templateNotFound(fmt.Sprintf("No approved template named %q in language %s", name, lang))
	case len(ts) == 0:
		return store.Template{}, templateNotFound(fmt.Sprintf("No approved template named %q", name))
	}
	langs := make([]string, len(ts))
	for i, t := range ts {
		langs[i] = t.Language
	}
	var fe refusal.Fields
	fe.Add("language", fmt.Sprintf("the template %q is approved in several languages (%s); say which one", name, strings.Join(langs, ", ")))
	return store.Template{}, invalid(fe)
}

func variables(n int) string {
	if n == 1 {
		return "1 variable"
	}
	return strconv.Itoa(n) + " variables"
}

// namedParams returns the placeholder names of a NAMED template, in order.
func namedParams(t store.Template) (header, body []string, err error) {
	var wt whatsapp.Template
	if err := json.Unmarshal(t.Components, &wt.Components); err != nil {
		return nil, nil, fmt.Errorf("template %d components: %w", t.ID, err)
	}
	return wt.HeaderParamNames(), wt.BodyParamNames(), nil
}

// orEmpty keeps a missing list as [] in stored JSON.
func orEmpty(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
