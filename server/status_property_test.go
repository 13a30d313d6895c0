package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"gateway/platform/whatsapp"
	"gateway/server/servertest"
	"gateway/store"
	"gateway/store/storetest"
)

// The status property: whatever order, duplication and batching the platform's status reports
// come in, through the signed inbound webhook, a message ends at the highest rank reported,
// writes exactly one message.status event per real change (a report whose rank is above the
// current one), keeps one history row per distinct status, and a report that arrives before
// the send recorded its platform id is parked and applied when it is.

var propStatuses = []string{"sent", "delivered", "read", "failed"}

// propSeed is fixed so a failure reproduces; STATUS_PROPERTY_SEED overrides it.
func propSeed(t *testing.T) uint64 {
	if s := os.Getenv("STATUS_PROPERTY_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("STATUS_PROPERTY_SEED: %v", err)
		}
		return n
	}
	return 20260301
}

type propCase struct {
	n        int
	wamid    string
	initial  string   // the message's status when it is recorded: pending or sent
	parked   int      // reports sent before the send is recorded (the message has no platform id yet)
	reports  []string // in arrival order, duplicates included
	batches  []int    // sizes of the POSTs the reports are split into
	stamp    map[string]int64
	msgID    int64
	distinct map[string]bool
}

func (c propCase) String() string {
	return fmt.Sprintf("case %d (%s): initial %s, parked first %d, reports %v in batches %v", c.n, c.wamid, c.initial, c.parked, c.reports, c.batches)
}

func newPropCase(r *rand.Rand, n int) *propCase {
	c := &propCase{n: n, wamid: fmt.Sprintf("wamid.PROP%04d", n), stamp: map[string]int64{}, distinct: map[string]bool{}}
	c.initial = []string{"pending", "sent"}[r.IntN(2)]
	var subset []string
	for len(subset) == 0 {
		for _, s := range propStatuses {
			if r.IntN(2) == 0 {
				subset = append(subset, s)
			}
		}
	}
	base := int64(1767268800 + n*100)
	for i, s := range propStatuses {
		c.stamp[s] = base + int64(i) + 1
	}
	for _, s := range subset {
		c.distinct[s] = true
		for range 1 + r.IntN(3) {
			c.reports = append(c.reports, s)
		}
	}
	r.Shuffle(len(c.reports), func(i, j int) { c.reports[i], c.reports[j] = c.reports[j], c.reports[i] })
	if c.initial == "pending" && r.IntN(2) == 0 {
		c.parked = r.IntN(len(c.reports) + 1)
	}
	for left := len(c.reports); left > 0; {
		k := min(left, 1+r.IntN(3))
		c.batches = append(c.batches, k)
		left -= k
	}
	return c
}

// expected returns the final status and the number of message.status events the model
// predicts: reports before recording are parked and applied in rank order once the message is
// recorded as sent; after that each report whose rank is above the current one is a change.
func (c *propCase) expected() (final string, events int) {
	cur := c.initial
	if c.parked > 0 {
		cur = "sent" // the send records the platform id and status sent, then applies the parked ones
		parked := slices.Clone(c.reports[:c.parked])
		slices.SortFunc(parked, func(a, b string) int { return store.StatusRank(a) - store.StatusRank(b) })
		for _, s := range parked {
			if store.StatusRank(s) > store.StatusRank(cur) {
				cur, events = s, events+1
			}
		}
	}
	for _, s := range c.reports[c.parked:] {
		if store.StatusRank(s) > store.StatusRank(cur) {
			cur, events = s, events+1
		}
	}
	return cur, events
}

// kept is the statuses whose times the message keeps: every distinct reported one, and sent
// when the message was recorded as sent (with the platform's sent time, so that every kept
// time is the platform's).
func (c *propCase) kept() map[string]bool {
	k := maps.Clone(c.distinct)
	if c.initial == "sent" || c.parked > 0 {
		k["sent"] = true
	}
	return k
}

// propSeedMessage seeds the case's message: recorded as sent at the platform's sent time, or
// pending (with its platform id when pid is not "").
func propSeedMessage(t *testing.T, env *servertest.Env, tn *pwTenant, pid string, c *propCase) int64 {
	t.Helper()
	id := pwSeedMessage(t, env, tn, pid, c.initial)
	if c.initial == "sent" {
		if _, err := env.Store.DB().Exec(`UPDATE messages SET sent_at = $2 WHERE id = $1`, id, time.Unix(c.stamp["sent"], 0)); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

// propPost sends a signed status webhook; safe from many goroutines.
func propPost(env *servertest.Env, c store.Connection, statuses []map[string]any) error {
	list := make([]any, len(statuses))
	for i, s := range statuses {
		list[i] = s
	}
	body, err := json.Marshal(pwEnvelope(c.WabaID, pwMessagesChange(c.PhoneNumberID, map[string]any{"statuses": list})))
	if err != nil {
		return err
	}
	r, err := env.DoConcurrent(servertest.Request{Method: http.MethodPost, Path: "/platform/webhook", Body: body,
		Header: map[string]string{whatsapp.SignatureHeaderName: pwSign(body)}})
	if err != nil {
		return err
	}
	if r.Status != http.StatusOK {
		return fmt.Errorf("platform webhook answered %d %s", r.Status, r.Body)
	}
	return nil
}

// propRecord does what the send does once the platform accepted it: record the platform id
// (status sent), then apply what was parked.
func propRecord(env *servertest.Env, accountID, msgID int64, wamid string, at time.Time) error {
	if _, err := env.Store.DB().Exec(`UPDATE messages SET platform_message_id = $3, status = 'sent', sent_at = $4
		WHERE account_id = $1 AND id = $2 AND status = 'pending'`, accountID, msgID, wamid, at); err != nil {
		return err
	}
	return env.Store.ApplyParkedStatuses(context.Background(), accountID, wamid)
}

type propObserved struct {
	status  string
	events  []map[string]any
	history map[string]time.Time
}

func propObserve(t *testing.T, env *servertest.Env, accountID int64) map[int64]*propObserved {
	t.Helper()
	out := map[int64]*propObserved{}
	var msgs []struct {
		ID     int64  `db:"id"`
		Status string `db:"status"`
	}
	if err := env.Store.DB().Select(&msgs, `SELECT id, status FROM messages WHERE account_id = $1`, accountID); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		out[m.ID] = &propObserved{status: m.Status, history: map[string]time.Time{}}
	}
	var hist []struct {
		MessageID  int64     `db:"message_id"`
		Status     string    `db:"status"`
		OccurredAt time.Time `db:"occurred_at"`
	}
	if err := env.Store.DB().Select(&hist, `SELECT message_id, status, occurred_at FROM (`+storetest.History+`) h WHERE account_id = $1`, accountID); err != nil {
		t.Fatal(err)
	}
	for _, h := range hist {
		out[h.MessageID].history[h.Status] = h.OccurredAt
	}
	// pwEvents validates every event body against its schema in openapi.yaml.
	for _, e := range pwEvents(t, env, accountID, "message.status") {
		d := pwData(t, e)
		id := int64(d["message_id"].(float64))
		out[id].events = append(out[id].events, d)
	}
	return out
}

func TestStatusPropertySequential(t *testing.T) {
	seed := propSeed(t)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	env := servertest.New(t, servertest.Config{})
	tn := pwNewTenant(t, env, "Prop Ltd")
	const cases = 200
	cs := make([]*propCase, cases)
	for i := range cs {
		c := newPropCase(r, i)
		pid := c.wamid
		if c.initial == "pending" {
			pid = "" // recorded later: by propRecord, or right before the reports when none is parked
		}
		c.msgID = propSeedMessage(t, env, tn, pid, c)
		cs[i] = c
	}

	// Cases run in parallel; each case's reports go out in order.
	var wg sync.WaitGroup
	errs := make(chan error, cases)
	work := make(chan *propCase)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				if err := propRun(env, tn, c); err != nil {
					errs <- fmt.Errorf("%v: %w", c, err)
				}
			}
		}()
	}
	for _, c := range cs {
		work <- c
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("seed %d: %v", seed, err)
	}

	obs := propObserve(t, env, tn.Account.ID)
	failures := 0
	for _, c := range cs {
		o := obs[c.msgID]
		final, events := c.expected()
		problem := ""
		switch {
		case o.status != final:
			problem = fmt.Sprintf("status %s, want %s", o.status, final)
		case len(o.events) != events:
			problem = fmt.Sprintf("%d message.status events, want %d: %v", len(o.events), events, o.events)
		case len(o.history) != len(c.kept()):
			problem = fmt.Sprintf("history %v, want one time per distinct status %v", o.history, c.kept())
		}
		for s, at := range o.history {
			if !at.Equal(time.Unix(c.stamp[s], 0)) {
				problem = fmt.Sprintf("history %s at %v, want the platform's timestamp %v", s, at, time.Unix(c.stamp[s], 0))
			}
		}
		for i, e := range o.events {
			s := e["status"].(string)
			if i > 0 && store.StatusRank(s) <= store.StatusRank(o.events[i-1]["status"].(string)) {
				problem = fmt.Sprintf("events do not rise: %v", o.events)
			}
			if e["timestamp"] != time.Unix(c.stamp[s], 0).UTC().Format(time.RFC3339) || e["chat_message_id"] != c.wamid {
				problem = fmt.Sprintf("event data %v", e)
			}
		}
		if problem != "" {
			failures++
			t.Errorf("seed %d, %v: %s", seed, c, problem)
			if failures > 10 {
				t.FailNow()
			}
		}
	}
	if n := pwCount(t, env, `SELECT count(*) FROM parked_statuses`); n != 0 {
		t.Fatalf("seed %d: %d statuses left parked", seed, n)
	}
}

// propRun delivers one case's reports in order, in its batches, recording the send after the
// first c.parked reports.
func propRun(env *servertest.Env, tn *pwTenant, c *propCase) error {
	if c.initial == "pending" && c.parked == 0 {
		// Recorded (as pending: the platform has not answered) before any report.
		if _, err := env.Store.DB().Exec(`UPDATE messages SET platform_message_id = $2 WHERE id = $1`, c.msgID, c.wamid); err != nil {
			return err
		}
	}
	sent := 0
	for _, k := range c.batches {
		var batch []map[string]any
		for _, s := range c.reports[sent : sent+k] {
			batch = append(batch, pwStatus(c.wamid, s, c.stamp[s]))
		}
		// A batch never straddles the recording point: split it there.
		for len(batch) > 0 {
			n := len(batch)
			if sent < c.parked && sent+n > c.parked {
				n = c.parked - sent
			}
			if err := propPost(env, tn.Conn, batch[:n]); err != nil {
				return err
			}
			batch, sent = batch[n:], sent+n
			if sent == c.parked && c.parked > 0 {
				if err := propRecord(env, tn.Account.ID, c.msgID, c.wamid, time.Unix(c.stamp["sent"], 0)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// TestStatusPropertyConcurrent fires every report of a message at once (and, for messages not
// yet recorded, records the send in the middle of them). The arrival order is up to the
// scheduler, so the event count is not predictable; what must hold: the message ends at the
// highest rank, the events rise strictly in rank (one per real change, never two for one
// rank), one history row per distinct status, and nothing stays parked.
func TestStatusPropertyConcurrent(t *testing.T) {
	seed := propSeed(t) + 1
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	env := servertest.New(t, servertest.Config{})
	tn := pwNewTenant(t, env, "Prop Ltd")
	const cases = 40
	cs := make([]*propCase, cases)
	for i := range cs {
		c := newPropCase(r, i)
		pid := c.wamid
		if c.initial == "pending" {
			pid = ""
		}
		c.msgID = propSeedMessage(t, env, tn, pid, c)
		cs[i] = c
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for _, c := range cs {
		for _, s := range c.reports {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := propPost(env, tn.Conn, []map[string]any{pwStatus(c.wamid, s, c.stamp[s])}); err != nil {
					errs <- err
				}
			}()
		}
		if c.initial == "pending" {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := propRecord(env, tn.Account.ID, c.msgID, c.wamid, time.Unix(c.stamp["sent"], 0)); err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("seed %d: %v", seed, err)
	}
	obs := propObserve(t, env, tn.Account.ID)
	for _, c := range cs {
		o := obs[c.msgID]
		want := c.initial
		if want == "pending" {
			want = "sent"
		}
		for s := range c.distinct {
			if store.StatusRank(s) > store.StatusRank(want) {
				want = s
			}
		}
		if o.status != want {
			t.Errorf("seed %d, %v: status %s, want %s", seed, c, o.status, want)
		}
		// Every message here is recorded as sent (pending ones in the middle of the reports).
		kept := c.kept()
		kept["sent"] = true
		if len(o.history) != len(kept) {
			t.Errorf("seed %d, %v: history %v", seed, c, o.history)
		}
		for i := 1; i < len(o.events); i++ {
			if store.StatusRank(o.events[i]["status"].(string)) <= store.StatusRank(o.events[i-1]["status"].(string)) {
				t.Errorf("seed %d, %v: events do not rise: %v", seed, c, o.events)
			}
		}
		if n := len(o.events); (want != c.initial && want != "sent") && n == 0 {
			t.Errorf("seed %d, %v: no event for a change to %s", seed, c, want)
		}
		if len(o.events) > 0 && o.events[len(o.events)-1]["status"] != want {
			t.Errorf("seed %d, %v: last event %v, want %s", seed, c, o.events[len(o.events)-1], want)
		}
	}
	if n := pwCount(t, env, `SELECT count(*) FROM parked_statuses`); n != 0 {
		t.Fatalf("seed %d: %d statuses left parked", seed, n)
	}
}
