package domain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"gateway/server/groupcommit"
	"gateway/store"
)

// The send pipeline every outgoing message goes through: recorded before the platform call
// (the contact, the conversation, the campaign, the pending message and the Idempotency-Key
// bound to it, in a statement shared with concurrent sends), the platform call, then the
// outcome recorded (accepted, refused, or unknown), with its metrics. The template send
// (templatesend.go) is its first front; test mode's send is testsend.go.

// Messenger is the messaging platform's send as the pipeline uses it. Package server adapts the
// platform client to it (server/platform.go) and turns the client's failures into
// *PlatformError.
type Messenger interface {
	// Send sends p from the connected number to a destination (digits); callbackData comes
	// back in the platform's status reports of the message.
	Send(ctx context.Context, from store.Connection, to string, p Payload, callbackData string) (Accepted, error)
	// SendText sends a plain text (test mode's sandbox number).
	SendText(ctx context.Context, token, phoneNumberID, to, body string) (Accepted, error)
	// ParamNames reads a NAMED template's placeholder names, in order, from its components as
	// the store keeps them.
	ParamNames(components json.RawMessage) (header, body []string, err error)
}

// Payload is what one message says to the platform; the Messenger sends the kinds it knows.
// TemplatePayload is the template send's.
type Payload interface {
	// MessageType is the message's type label ("template", ...).
	MessageType() string
}

// Accepted is the platform's answer to a send it accepted.
type Accepted struct {
	MessageID string // the platform's message id (wamid)
	WaID      string // the platform's id of the recipient
}

// SendObserver counts sends by key mode, outcome ("sent" or the API's error code) and the
// platform's error code when it refused the send; package server's metrics implement it.
type SendObserver interface {
	ObserveSend(mode, outcome, platformCode string)
}

// SendsConfig wires a Sends.
type SendsConfig struct {
	Store     *store.Store
	Messenger Messenger // nil: no platform is configured and every live send fails
	Observer  SendObserver
	Logger    *slog.Logger
	Clock     func() time.Time
	// SendTimeout bounds one platform call; RecordRetry how long recording an accepted send is
	// retried before the send answers with its outcome unknown (recording then goes on in the
	// background).
	SendTimeout, RecordRetry time.Duration
	// Sandbox is test mode's shared number, Fixtures the templates test and demo keys send.
	Sandbox  Sandbox
	Fixtures []store.Template
}

// Sandbox is the shared number test keys deliver through to joined phones.
type Sandbox struct {
	PhoneNumber, PhoneNumberID, AccessToken string
}

// Sends is the send pipeline of one process.
type Sends struct {
	cfg SendsConfig
	log *slog.Logger

	// The group commits of sends' records before the platform call and of their recordings
	// after it.
	begins *groupcommit.Batcher[store.SendBegin, begun]
	sents  *groupcommit.Batcher[store.SentWrite, store.SentApplied]

	// Background recordings of accepted sends (recordLater); Close cancels and waits.
	later     sync.WaitGroup
	laterCtx  context.Context
	laterStop context.CancelFunc
}

// NewSends builds the pipeline; it starts no goroutine until a send needs one.
func NewSends(cfg SendsConfig) *Sends {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Sends{cfg: cfg, log: cfg.Logger}
	s.laterCtx, s.laterStop = context.WithCancel(context.Background())
	s.begins = groupcommit.New(s.beginSends, beginKey, beginTimeout)
	s.sents = groupcommit.New(cfg.Store.RecordSentWrites, sentKey, cfg.RecordRetry)
	return s
}

// Close cancels the background recordings of accepted sends and waits for them (they give up:
// the platform's status reports adopt those sends). It is idempotent.
func (s *Sends) Close() {
	s.laterStop()
	s.later.Wait()
}

// observe counts a send by its outcome: sent, or the code of its failure (internal_error for
// an unexpected one).
func (s *Sends) observe(mode string, err error) {
	if s.cfg.Observer == nil {
		return
	}
	outcome := "sent"
	if err != nil {
		outcome = "internal_error"
		if se := AsSendError(err); se != nil {
			outcome = se.Code
		}
	}
	s.cfg.Observer.ObserveSend(mode, outcome, "")
}

// Observe counts a send refused before it reached the pipeline (the API's request checks).
func (s *Sends) Observe(mode string, err error) { s.observe(mode, err) }

// HeldKey is the Idempotency-Key a send holds (as stored, scoped by its caller), and what the
// pipeline reports about the send's outcome. Its caller keeps the key held, unfinished, when
// OutcomeUnknown is true: a retry then answers from the message, never by sending again.
type HeldKey struct {
	Key     string
	unknown atomic.Bool
}

// OutcomeUnknown reports whether the send holding the key may have reached the platform
// without its outcome being recorded.
func (h *HeldKey) OutcomeUnknown() bool { return h != nil && h.unknown.Load() }

func (h *HeldKey) markUnknown() {
	if h != nil {
		h.unknown.Store(true)
	}
}

func (h *HeldKey) key() string {
	if h == nil {
		return ""
	}
	return h.Key
}

// Outgoing is one message to send, already checked by its front: the pipeline's input.
type Outgoing struct {
	AccountID   int64
	From        store.Connection // the account's connected number
	Destination string           // digits, country code first
	UserID      string           // or the recipient's business-scoped user id ("" with a Destination)
	Name        string           // the contact's name when the send creates the contact
	Campaign    string           // the campaign's name; "" is DefaultCampaign
	// Payload is what goes to the platform; its MessageType is the message's type.
	Payload Payload
	// TemplateID and TemplateName name the template of a template send (0 and "" otherwise).
	TemplateID   int64
	TemplateName string
	// Content is what the message row keeps of what was sent (a JSON object).
	Content         json.RawMessage
	ClientReference string
	Key             *HeldKey // the Idempotency-Key the send holds; nil for none
	Source          string   // "api" or "panel"
	// Answer: a non-template message, recorded only while the person's service window is
	// open (store.SendInput.Answer); a closed window, ours or the platform's (131047), is a
	// KindConflict window_closed refusal.
	Answer bool
}

// Sent is what the pipeline recorded of a send the platform accepted.
type Sent struct {
	MessageID, CampaignID, ConversationID, ContactID int64
	ContactCreated                                   bool
	PlatformMessageID                                string
}

// Deliver is the pipeline's core: it records o before the platform call, calls the platform,
// and records the outcome. A new kind of message uses it from a front of its own, as
// SendTemplate does: check the request (refusals as *SendError, KindInvalid with the API's
// field paths), find the account's number, build a Payload the Messenger knows (add its case
// to server/platform.go) and the Content the message row keeps, then call Deliver; the
// idempotency, the blocked contact's refusal (409 contact_blocked), the outcome's records,
// events and metrics are the same for every kind.
//
// The caller counts the send (its mode's observer) unless the error is KindUpstream or
// KindOutcomeUnknown, which Deliver counts or leaves uncounted itself.
func (s *Sends) Deliver(ctx context.Context, o Outgoing) (Sent, error) {
	if s.cfg.Messenger == nil {
		return Sent{}, errors.New("no messaging platform configured")
	}
	campaign := o.Campaign
	if campaign == "" {
		campaign = DefaultCampaign
	}
	// The contact check. A STOP that commits after this statement's snapshot does not stop this
	// send (it is on its way to the platform: the window is this statement plus the platform
	// call); it does stop every send whose BeginSend starts after the STOP committed, under any
	// form of the number, because blocking and this check both resolve the person through
	// store.MobileForms and the aliases, and the check sees every contact that is the person.
	// The statement is shared with concurrent sends (s.begins): it runs to its end even when this
	// client goes away meanwhile, and then this send goes on like any other that began.
	in := store.SendInput{Mobile: o.Destination, UserID: o.UserID, Name: o.Name,
		CampaignName: campaign, TemplateID: o.TemplateID, TemplateName: o.TemplateName, Content: o.Content,
		ClientReference: o.ClientReference, IdempotencyKey: o.Key.key(), Source: o.Source}
	if o.Answer {
		// The same statement reads the person's service window: nothing is written when it is
		// closed.
		in.Type, in.Answer, in.Now = o.Payload.MessageType(), true, s.cfg.Clock()
	}
	begin, err := s.begins.Do(store.SendBegin{AccountID: o.AccountID, SendInput: in})
	if err == nil {
		err = begin.err
	}
	if err != nil {
		return Sent{}, err
	}
	rec := begin.rec
	switch {
	case rec.Blocked:
		return Sent{}, errBlocked()
	case rec.WindowClosed:
		return Sent{}, errWindowClosed(rec.WindowExpiresAt, nil)
	}

	// The message row is committed: from here on the client going away must not stop the
	// platform call or the recording of its answer, or an accepted message would lose its id.
	ctx = context.WithoutCancel(ctx)
	pctx, cancel := context.WithTimeout(ctx, s.cfg.SendTimeout)
	res, err := s.cfg.Messenger.Send(pctx, o.From, o.Destination, o.Payload, strconv.FormatInt(rec.MessageID, 10))
	cancel()
	if err != nil && o.Answer && outsideWindow(err) {
		return Sent{}, s.windowClosedByPlatform(ctx, o.AccountID, rec.MessageID, err)
	}
	if err != nil {
		return Sent{}, s.sendFailed(ctx, o.AccountID, rec.MessageID, o.Key, err)
	}
	recorded, err := s.recordAccepted(ctx, o.AccountID, rec.MessageID, res)
	if err != nil {
		// The platform accepted the send but it is not recorded. The key stays held (bound to
		// the message), so a retry never sends again; the recording goes on in the background,
		// and the platform's status reports, which echo our message id, adopt the wamid in any
		// case (store.ApplyStatus).
		o.Key.markUnknown()
		s.log.ErrorContext(ctx, "accepted send not recorded; recording it in the background", "message_id", rec.MessageID,
			"wamid", res.MessageID, "error", err.Error())
		s.recordLater(o.AccountID, rec.MessageID, res)
		return Sent{}, &SendError{Kind: KindOutcomeUnknown, Code: CodePlatformUnavailable,
			Message: fmt.Sprintf("The platform accepted the send but it could not be recorded yet; its outcome is being confirmed "+
				"and it will not be sent again. Read GET /v1/messages/%d", rec.MessageID),
			MessageID: rec.MessageID, cause: err}
	}
	// Reports that arrived before the id was recorded were parked: apply them. Both reads run
	// after the id is committed (store.ApplyStatus explains why that closes the race); the
	// first came with the recording, unless it failed or another path recorded the id.
	parked := recorded.Parked
	if !recorded.Checked {
		parked, err = s.cfg.Store.HasParkedStatuses(ctx, o.AccountID, res.MessageID)
	}
	if err == nil && parked {
		err = s.cfg.Store.ApplyParkedStatuses(ctx, o.AccountID, res.MessageID)
	}
	if err != nil {
		// The reports stay parked; the parked-status reconciliation service
		// (server/worker/reconcile.go) applies them on its next pass.
		s.log.WarnContext(ctx, "apply parked statuses", "message_id", rec.MessageID, "error", err.Error())
	}
	return Sent{MessageID: rec.MessageID, CampaignID: rec.CampaignID, ConversationID: rec.ConversationID,
		ContactID: rec.ContactID, ContactCreated: rec.ContactCreated, PlatformMessageID: res.MessageID}, nil
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
func (s *Sends) beginSends(ctx context.Context, ws []store.SendBegin) ([]begun, error) {
	out := make([]begun, len(ws))
	recs, err := s.cfg.Store.BeginSends(ctx, ws)
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
		out[i].rec, out[i].err = s.cfg.Store.BeginSend(ctx, w.AccountID, w.SendInput)
	}
	return out, nil
}

// beginKey: two sends to one person never share a statement (store.SendKeysOf).
func beginKey(w store.SendBegin) []any { return store.SendKeysOf(w.AccountID, w.SendInput) }

// sentKey: the recordings of one message never share a statement (store.RecordSentWrites).
func sentKey(w store.SentWrite) []any { return []any{[2]int64{w.AccountID, w.MessageID}} }

// recordAccepted records the platform's acceptance (store.RecordSentWrites, in a statement
// shared with concurrent sends), retrying a failing database for at most RecordRetry.
// A message that already has this wamid (a status report adopted it meanwhile) counts as
// recorded, with Recorded and Checked false.
func (s *Sends) recordAccepted(ctx context.Context, accountID, messageID int64, res Accepted) (store.SentApplied, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RecordRetry)
	defer cancel()
	w := store.SentWrite{AccountID: accountID, MessageID: messageID, PlatformMessageID: res.MessageID, WaID: res.WaID, At: s.cfg.Clock()}
	for delay := 20 * time.Millisecond; ; delay = min(2*delay, time.Second) {
		a, err := s.sents.Do(w)
		if err == nil && !a.Recorded {
			m, merr := s.cfg.Store.MessageByID(ctx, accountID, messageID)
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
func (s *Sends) recordLater(accountID, messageID int64, res Accepted) {
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

// sendFailed closes a send the platform did not accept: KindUpstream (or an unexpected error
// for a request our own client refused to make). A send whose outcome is unknown (no answer,
// an unreadable answer) is not closed as failed: it is marked outcome_unknown, its key stays
// held, and the error is KindOutcomeUnknown; the platform's status reports settle it.
func (s *Sends) sendFailed(ctx context.Context, accountID, messageID int64, held *HeldKey, err error) error {
	f, fail := platformFailure(err, s.cfg.SendTimeout)
	if fail != nil && fail.Code == CodePlatformUnavailable {
		held.markUnknown()
		fail.Kind, fail.MessageID = KindOutcomeUnknown, messageID
		if merr := s.cfg.Store.MarkOutcomeUnknown(ctx, accountID, messageID); merr != nil {
			// The reconciler marks orphaned pending sends (store.MarkOrphanedSends).
			s.log.WarnContext(ctx, "mark send outcome unknown", "message_id", messageID, "error", merr.Error())
		}
		s.log.WarnContext(ctx, "platform send outcome unknown", "message_id", messageID, "error", err.Error())
		return fail
	}
	if rerr := s.cfg.Store.RecordSendFailure(ctx, accountID, messageID, f, s.cfg.Clock()); rerr != nil {
		return fmt.Errorf("record failed send %d (%v): %w", messageID, err, rerr)
	}
	if fail == nil {
		return fmt.Errorf("send %d: %w", messageID, err)
	}
	s.log.WarnContext(ctx, "platform refused send", "message_id", messageID, "error", err.Error())
	fail.cause = err // the platform's error, for a caller that acts on its code (a broadcast)
	platformCode := ""
	if f.Code != nil {
		platformCode = strconv.Itoa(*f.Code)
	}
	if s.cfg.Observer != nil {
		s.cfg.Observer.ObserveSend(ModeLive, fail.Code, platformCode)
	}
	return fail
}

// counted reports whether the send's caller counts err: Deliver counts the platform's refusals
// itself and leaves an unknown outcome uncounted.
func counted(err error) bool {
	se := AsSendError(err)
	return se == nil || (se.Kind != KindUpstream && se.Kind != KindOutcomeUnknown &&
		!(se.Code == CodeWindowClosed && outsideWindow(se.cause)))
}

// PlatformCodeOutsideWindow is the platform's error code for a message outside the customer's
// service window (whatsapp.CodeReengagement; TestDomainNamesAgree holds them equal).
const PlatformCodeOutsideWindow = 131047

// outsideWindow reports whether the platform refused a send because the customer's service
// window is closed.
func outsideWindow(err error) bool {
	var pe *PlatformError
	return errors.As(err, &pe) && pe.Outcome == PlatformRejected && pe.Code == PlatformCodeOutsideWindow
}

// windowClosedByPlatform closes an answer the platform refused with 131047: the message fails
// as any refused send, and the caller gets the same 409 window_closed as when our record of the
// window says so. It counts the send with the platform's code.
func (s *Sends) windowClosedByPlatform(ctx context.Context, accountID, messageID int64, err error) error {
	f, _ := platformFailure(err, s.cfg.SendTimeout)
	if rerr := s.cfg.Store.RecordSendFailure(ctx, accountID, messageID, f, s.cfg.Clock()); rerr != nil {
		return fmt.Errorf("record failed answer %d (%v): %w", messageID, err, rerr)
	}
	s.log.WarnContext(ctx, "platform refused answer: service window closed", "message_id", messageID)
	if s.cfg.Observer != nil {
		s.cfg.Observer.ObserveSend(ModeLive, CodeWindowClosed, strconv.Itoa(PlatformCodeOutsideWindow))
	}
	return errWindowClosed(nil, err)
}
