package broadcast_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/platform/whatsapp"
	"gateway/server/broadcast"
	"gateway/server/groupcommit"
	"gateway/store"
	"gateway/store/storetest"
)

const (
	phoneID = "106540352242922"
	wabaID  = "102290129340398"
	bizID   = "biz-portfolio-1"
	token   = "token"
)

// rig is a store on a fresh database, the simulator on loopback and an account.
type rig struct {
	t       testing.TB
	st      *store.Store
	sim     *simulator.Simulator
	client  *whatsapp.Client
	account int64
	// statuses applies the simulator's status reports to the messages, concurrent ones
	// sharing a statement, as the gateway's status path does.
	statuses *groupcommit.Batcher[store.StatusWrite, store.StatusApplied]
	adopted  atomic.Int64 // messages whose platform id a status report gave (store.ApplyStatus)
}

// newRig starts the simulator with cfg (its webhooks go to a receiver that applies the status
// reports to the messages, as the gateway's status path does).
func newRig(t testing.TB, cfg simulator.Config, throughput int) *rig {
	t.Helper()
	r := &rig{t: t, st: storetest.New(t)}
	a, err := r.st.CreateAccount(context.Background(), "acme", "acme@example.com", fmt.Sprintf("join-%d", time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	r.account = a.ID
	r.statuses = groupcommit.New(r.st.ApplyStatusWrites, func(w store.StatusWrite) []any { return []any{w.Report.PlatformMessageID} }, 10*time.Second)
	hook := httptest.NewServer(http.HandlerFunc(r.receive))
	t.Cleanup(hook.Close)
	cfg.WebhookURL = hook.URL
	r.sim = simulator.New(cfg)
	t.Cleanup(func() { r.sim.Close() })
	base, err := r.sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.sim.AddNumber(simulator.Number{PhoneNumberID: phoneID, WabaID: wabaID, DisplayPhoneNumber: "15550783881",
		AccessToken: token, Throughput: throughput, BusinessID: bizID})
	r.sim.SeedTemplates(wabaID, simulator.DefaultTemplates())
	r.client = whatsapp.NewClient(base+"/v23.0", nil)
	return r
}

// receive takes the simulator's status webhooks and applies their first reports (sent) to the
// messages: a report whose message has no platform id yet (its answer was lost) gives it the
// id through the callback data (our message id), which settles its recipient sent
// (store.SettleBroadcastRecipients). The later reports (delivered, read) are left out: the
// engine reads none of them.
func (r *rig) receive(w http.ResponseWriter, req *http.Request) {
	var p whatsapp.WebhookPayload
	if err := json.NewDecoder(req.Body).Decode(&p); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, e := range p.Entry {
		for _, c := range e.Changes {
			for _, s := range c.Value.Statuses {
				if s.Status != "sent" {
					continue
				}
				rep := store.StatusReport{PlatformMessageID: s.ID, Status: s.Status, OccurredAt: time.Now()}
				if id, err := strconv.ParseInt(s.BizOpaqueCallbackData, 10, 64); err == nil {
					rep.CallbackMessageID = id
				}
				sw := store.StatusWrite{AccountID: r.account, Report: rep}
				a, err := r.statuses.Do(sw)
				if err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
				res, err := r.st.SettleStatus(req.Context(), sw, a)
				if err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
				if res.Adopted {
					r.adopted.Add(1)
				}
			}
		}
	}
	w.WriteHeader(http.StatusOK)
}

// sender returns a keyedSender over the rig's store and simulator.
func (r *rig) sender() *keyedSender {
	return &keyedSender{r: r,
		begins: groupcommit.New(r.st.BeginSends, func(w store.SendBegin) []any { return store.SendKeysOf(w.AccountID, w.SendInput) }, 15*time.Second),
		sents:  groupcommit.New(r.st.RecordSentWrites, func(w store.SentWrite) []any { return []any{w.MessageID} }, 15*time.Second),
	}
}

// keyedSender is the gateway's send path (server.BroadcastSender over domain.Sends.Deliver)
// cut down to what the engine relies on, with the same store calls: the recipient's message is
// recorded with the recipient's key (store.BroadcastKey) bound to it before the platform call
// (store.BeginSends, concurrent ones sharing a statement), the call carries the message's id as
// callback data, and the platform's id (store.RecordSentWrites) or its refusal
// (store.RecordSendFailure) is recorded on the message after it.
type keyedSender struct {
	r      *rig
	begins *groupcommit.Batcher[store.SendBegin, store.SendRecord]
	sents  *groupcommit.Batcher[store.SentWrite, store.SentApplied]
	// dies, when set, says whether the process dies at a step of a recipient's send: then the
	// send goes no further and never returns, so nothing after that step is written.
	dies func(to string, at step) bool
	// dead is closed when the test ends; a send that died ends its goroutine then.
	dead chan struct{}
	// stall, when set, is how long a recipient's send (by number and calls made before it)
	// stops between recording its message and the pace gate, as a send whose writes took long.
	stall func(to string, attempts int) time.Duration
}

// step is a point of a send at which keyedSender.dies can end the process.
type step int

const (
	beforeMessage step = iota // marked sending, no message recorded: the call did not happen
	beforeCall                // the message recorded and the key bound, not called
	beforeAnswer              // called and accepted, the platform's id not recorded
)

// die ends the send's goroutine at step at if k.dies says so, as a crash there would: the
// engine's worker never gets an answer to record.
func (k *keyedSender) die(to string, at step) {
	if k.dies != nil && k.dies(to, at) {
		<-k.dead
		runtime.Goexit()
	}
}

// dyingSender returns a keyedSender whose process dies at each scripted recipient's step (by
// number), the first time that recipient's send reaches it, and the count of those deaths.
func (r *rig) dyingSender(script map[string]step) (*keyedSender, *atomic.Int64) {
	k := r.sender()
	k.dead = make(chan struct{})
	r.t.Cleanup(func() { close(k.dead) })
	var died atomic.Int64
	var done sync.Map
	k.dies = func(to string, at step) bool {
		if want, ok := script[to]; !ok || want != at {
			return false
		}
		if _, again := done.LoadOrStore(to, true); again {
			return false
		}
		died.Add(1)
		return true
	}
	return k, &died
}

// SendBroadcast implements broadcast.Sender.
func (k *keyedSender) SendBroadcast(ctx context.Context, m broadcast.Message) (string, error) {
	b, rc := m.Broadcast, m.Recipient
	k.die(rc.To(), beforeMessage)
	rec, err := k.begins.Do(store.SendBegin{AccountID: b.AccountID, SendInput: store.SendInput{Mobile: rc.Mobile, UserID: rc.UserID,
		CampaignName: b.Name, TemplateName: b.TemplateName, Content: json.RawMessage(`{}`), IdempotencyKey: store.BroadcastKey(rc.ID)}})
	if err != nil {
		return "", err
	}
	if rec.Blocked {
		return "", fmt.Errorf("%w: the contact opted out", broadcast.ErrNotSent)
	}
	// The message is recorded: from here on its outcome is recorded whatever becomes of ctx.
	wctx := context.WithoutCancel(ctx)
	k.die(rc.To(), beforeCall)
	if k.stall != nil {
		time.Sleep(k.stall(rc.To(), rc.Attempts))
	}
	if m.BeforeCall != nil {
		if err := m.BeforeCall(ctx); err != nil {
			return "", k.failed(wctx, b.AccountID, rec.MessageID, store.SendFailure{Title: "Not sent", Details: err.Error()},
				fmt.Errorf("%w: %v", broadcast.ErrNotSent, err))
		}
	}
	res, err := k.r.client.SendTemplate(ctx, token, b.PhoneNumberID, whatsapp.TemplateSend{To: rc.Mobile, ToUserID: rc.UserID,
		Name: b.TemplateName, Language: b.TemplateLanguage, BodyParams: m.BodyParams, CallbackData: strconv.FormatInt(rec.MessageID, 10)})
	var pe *whatsapp.Error
	switch {
	case err == nil:
	case errors.As(err, &pe):
		code := pe.Code
		return "", k.failed(wctx, b.AccountID, rec.MessageID, store.SendFailure{Code: &code, Title: pe.Title, Details: pe.Details}, err)
	case errors.Is(err, whatsapp.ErrInvalidArgument):
		return "", k.failed(wctx, b.AccountID, rec.MessageID, store.SendFailure{Title: "Not sent", Details: err.Error()}, err)
	default:
		// The call may have happened: the message stays pending until a status report gives
		// it the platform's id.
		if merr := k.r.st.MarkOutcomeUnknown(wctx, b.AccountID, rec.MessageID); merr != nil {
			return "", fmt.Errorf("%v (mark outcome unknown: %v)", err, merr)
		}
		return "", err
	}
	k.die(rc.To(), beforeAnswer)
	a, err := k.sents.Do(store.SentWrite{AccountID: b.AccountID, MessageID: rec.MessageID, PlatformMessageID: res.MessageID,
		WaID: res.WaID, At: time.Now()})
	if err != nil {
		return "", err
	}
	if !a.Recorded {
		// Not pending any more: a status report gave the message this id first.
		msg, err := k.r.st.MessageByID(wctx, b.AccountID, rec.MessageID)
		if err != nil || msg.PlatformMessageID != res.MessageID {
			return "", fmt.Errorf("message %d not recorded as %s (%v)", rec.MessageID, res.MessageID, err)
		}
	} else if a.Parked || !a.Checked {
		if err := k.r.st.ApplyParkedStatuses(wctx, b.AccountID, res.MessageID); err != nil {
			return "", err
		}
	}
	return res.MessageID, nil
}

// failed records the platform's refusal on the message and returns err, or an error that is
// not err's kind when the refusal could not be recorded (the engine takes it as unknown).
func (k *keyedSender) failed(ctx context.Context, accountID, messageID int64, f store.SendFailure, err error) error {
	if rerr := k.r.st.RecordSendFailure(ctx, accountID, messageID, f, time.Now()); rerr != nil {
		return fmt.Errorf("record failed send %d (%v): %v", messageID, err, rerr)
	}
	return err
}

// crashThenComplete runs broadcast id with cfg's engine sending through a sender that dies as
// script says, crashes that engine once crashed(deaths so far) holds (waiting for what), then
// runs a second engine with cfg until the broadcast completes, and stops it.
func (r *rig) crashThenComplete(id int64, cfg broadcast.Config, script map[string]step, what string, crashed func(died int64) bool) {
	r.t.Helper()
	dying, died := r.dyingSender(script)
	first := cfg
	first.Sender = dying
	ctx1, crash := context.WithCancel(context.Background())
	r.engine(ctx1, first)
	r.waitFor(30*time.Second, what, func() bool { return crashed(died.Load()) })
	crash()
	ctx2, cancel := context.WithCancel(context.Background())
	defer cancel()
	e2 := r.engine(ctx2, cfg)
	r.waitFor(60*time.Second, "the broadcast to complete", func() bool { return r.broadcast(id).State == store.BroadcastCompleted })
	if err := e2.Stop(context.Background()); err != nil {
		r.t.Fatal(err)
	}
}

// engine returns a started engine; cancel its context to crash it.
func (r *rig) engine(ctx context.Context, cfg broadcast.Config) *broadcast.Engine {
	r.t.Helper()
	if cfg.Sender == nil {
		cfg.Sender = r.sender()
	}
	cfg.Poll = cmpOr(cfg.Poll, 50*time.Millisecond)
	e, err := broadcast.New(r.st, cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := e.Start(ctx); err != nil {
		r.t.Fatal(err)
	}
	return e
}

func cmpOr(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

// numbers returns n distinct recipients.
func numbers(n int) []store.RecipientInput {
	out := make([]store.RecipientInput, n)
	for i := range out {
		out[i] = store.RecipientInput{Mobile: fmt.Sprintf("4477%08d", i), Variables: map[string]string{"name": fmt.Sprintf("P%d", i)}}
	}
	return out
}

func (r *rig) create(template string, rs []store.RecipientInput) store.Broadcast {
	r.t.Helper()
	in := store.BroadcastInput{Name: "spring sale", PhoneNumberID: phoneID, Portfolio: bizID, TemplateName: template, TemplateLanguage: "en_US"}
	if template == "order_confirmation" {
		in.Params = []store.BroadcastParam{{Variable: "name"}, {Value: "ORD-1"}}
	}
	b, err := r.st.CreateBroadcast(context.Background(), r.account, in, rs)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// waitFor polls cond every 50 ms until it holds or limit passes.
func (r *rig) waitFor(limit time.Duration, what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out after %s waiting for %s (%d accepted by the simulator)", limit, what, len(r.sim.Sent()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *rig) broadcast(id int64) store.Broadcast {
	r.t.Helper()
	b, err := r.st.BroadcastByID(context.Background(), r.account, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

func (r *rig) counts(id int64) map[string]int {
	r.t.Helper()
	c, err := r.st.BroadcastCounts(context.Background(), r.account, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// accepted counts the simulator's accepted sends per recipient number.
func (r *rig) accepted() map[string]int {
	out := map[string]int{}
	for _, m := range r.sim.Sent() {
		out[m.WaID]++
	}
	return out
}

// recipients returns every recipient of the broadcast.
func (r *rig) recipients(id int64) []store.BroadcastRecipient {
	r.t.Helper()
	var out []store.BroadcastRecipient
	after := int64(0)
	for range 1000 {
		page, err := r.st.BroadcastRecipients(context.Background(), r.account, id, after, 1000)
		if err != nil {
			r.t.Fatal(err)
		}
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
		after = page[len(page)-1].ID
	}
	return out
}

// fakeClock is an injected clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}
