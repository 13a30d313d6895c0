package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/server/broadcast"
	"gateway/server/servertest"
	"gateway/store"
)

type broadcastCounts struct {
	Total, Pending, Sending, Unknown, Sent, Delivered, Read, Failed, Cancelled int
}

type preflightData struct {
	Recipients       int `json:"recipients"`
	Duplicates       int `json:"duplicates"`
	OptedOut         int `json:"opted_out"`
	Blocked          int `json:"blocked"`
	USMarketing      int `json:"us_marketing"`
	Throughput       int `json:"throughput"`
	EstimatedSeconds int `json:"estimated_seconds"`
	Budget           struct {
		Limit  *int     `json:"limit"`
		Used   int      `json:"used"`
		Needed int      `json:"needed"`
		Share  *float64 `json:"share"`
	} `json:"budget"`
}

type broadcastData struct {
	ID          int64           `json:"id"`
	Name        string          `json:"name"`
	CampaignID  int64           `json:"campaign_id"`
	State       string          `json:"state"`
	PauseReason string          `json:"pause_reason"`
	ScheduledAt *time.Time      `json:"scheduled_at"`
	TimeZone    string          `json:"time_zone"`
	Counts      broadcastCounts `json:"counts"`
	Rate        float64         `json:"rate"`
	Preflight   preflightData   `json:"preflight"`
	Mode        string          `json:"mode"`
}

type recipientData struct {
	ID         int64  `json:"id"`
	Mobile     string `json:"mobile"`
	UserID     string `json:"user_id"`
	Status     string `json:"status"`
	Attempts   int    `json:"attempts"`
	MessageID  string `json:"message_id"`
	ErrorCode  *int   `json:"error_code"`
	ErrorTitle string `json:"error_title"`
}

type recipientPage struct {
	Recipients []recipientData `json:"recipients"`
	NextCursor *string         `json:"next_cursor"`
}

// startBroadcastEngine runs the broadcast engine over the env's gateway send path, as serve
// does, until the test ends.
func startBroadcastEngine(t *testing.T, env *servertest.Env, throughput int) {
	t.Helper()
	e, err := broadcast.New(env.Store, broadcast.Config{Sender: env.Server.BroadcastSender(), Share: 1,
		Poll: 50 * time.Millisecond, Throughput: func(context.Context, string) int { return throughput }})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
}

func createBroadcast(t *testing.T, env *servertest.Env, key string, body map[string]any) broadcastData {
	t.Helper()
	r := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/broadcasts", Key: key, Body: body})
	b := decodeEnv(t, r)
	if r.Status != http.StatusCreated || !b.Success {
		t.Fatalf("want 201, got %d %s", r.Status, r.Body)
	}
	var out broadcastData
	r.JSON(t, &struct {
		Data *broadcastData `json:"data"`
	}{&out})
	return out
}

func getBroadcast(t *testing.T, env *servertest.Env, key string, id int64) broadcastData {
	t.Helper()
	var out broadcastData
	wantOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: fmt.Sprintf("/v1/broadcasts/%d", id), Key: key}), &out)
	return out
}

// waitBroadcast polls the broadcast until its state is want.
func waitBroadcast(t *testing.T, env *servertest.Env, key string, id int64, want string) broadcastData {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b := getBroadcast(t, env, key, id)
		if b.State == want {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("broadcast %d still %s (%+v), want %s", id, b.State, b.Counts, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func allRecipients(t *testing.T, env *servertest.Env, key string, id int64, limit int) []recipientData {
	t.Helper()
	var out []recipientData
	path := fmt.Sprintf("/v1/broadcasts/%d/recipients?limit=%d", id, limit)
	for {
		var p recipientPage
		wantOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: path, Key: key}), &p)
		out = append(out, p.Recipients...)
		if p.NextCursor == nil {
			return out
		}
		path = fmt.Sprintf("/v1/broadcasts/%d/recipients?limit=%d&cursor=%s", id, limit, *p.NextCursor)
	}
}

// A test key's broadcast is simulated end to end: created with its pre-flight (a duplicate
// merged), sent by the engine without the platform, its recipients paged with their message
// ids (one known only by a user id recorded as a test send to it), the counts moving to
// delivered and read as test messages do; a live key does not see it.
func TestBroadcastTestModeSimulated(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	startBroadcastEngine(t, env, 80)
	const userID = "US.13491208655302741918"
	b := createBroadcast(t, env, a.Test, map[string]any{
		"name": "spring sale", "template_name": "order_confirmation_update",
		"parameters": []any{map[string]any{"variable": "name"}, map[string]any{"value": "ORD-1"}},
		"recipients": []any{
			map[string]any{"mobile": "447700900001", "variables": map[string]any{"name": "Ana"}},
			map[string]any{"mobile": "447700900002", "variables": map[string]any{"name": "Ben"}},
			map[string]any{"mobile": "447700900001", "variables": map[string]any{"name": "Ana"}},
			map[string]any{"user_id": userID, "variables": map[string]any{"name": "Cy"}},
		},
	})
	if b.Mode != "test" || b.Preflight.Recipients != 3 || b.Preflight.Duplicates != 1 || b.Counts.Total != 3 {
		t.Fatalf("created %+v", b)
	}
	done := waitBroadcast(t, env, a.Test, b.ID, "completed")
	if c := done.Counts; c.Sent+c.Delivered+c.Read != 3 || c.Failed != 0 {
		t.Fatalf("counts %+v", c)
	}
	rs := allRecipients(t, env, a.Test, b.ID, 1)
	if len(rs) != 3 || rs[0].Status != "sent" || rs[0].MessageID == "" || rs[1].Attempts != 1 {
		t.Fatalf("recipients %+v", rs)
	}
	var byUserID recipientData
	for _, r := range rs {
		if r.Mobile == "" {
			byUserID = r
		}
	}
	if r := byUserID; r.UserID != userID || r.Status != "sent" || r.MessageID == "" {
		t.Fatalf("the user id's recipient %+v", r)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM test_messages WHERE account_id = $1 AND destination = $2 AND platform_message_id = $3`,
		a.Account.ID, userID, byUserID.MessageID); n != 1 {
		t.Fatalf("test sends to the user id: %d, want 1", n)
	}
	deadline := time.Now().Add(20 * time.Second)
	for getBroadcast(t, env, a.Test, b.ID).Counts.Read != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("not read: %+v", getBroadcast(t, env, a.Test, b.ID).Counts)
		}
		time.Sleep(200 * time.Millisecond)
	}
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: fmt.Sprintf("/v1/broadcasts/%d", b.ID), Key: a.Live}), http.StatusNotFound, "not_found")
	var live, test struct {
		Broadcasts []broadcastData `json:"broadcasts"`
	}
	wantOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/broadcasts", Key: a.Live}), &live)
	wantOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/broadcasts", Key: a.Test}), &test)
	if len(live.Broadcasts) != 0 || len(test.Broadcasts) != 1 || test.Broadcasts[0].ID != b.ID {
		t.Fatalf("live sees %d, test sees %+v", len(live.Broadcasts), test.Broadcasts)
	}
	var events int
	if err := env.Store.DB().Get(&events, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'broadcast.completed'
		AND test AND (data->>'broadcast_id')::bigint = $2`, a.Account.ID, b.ID); err != nil || events != 1 {
		t.Fatalf("broadcast.completed events: %d (%v)", events, err)
	}
}

// A live broadcast goes through the gateway's send path against the simulator: the pre-flight
// leaves out an opted-out contact and a duplicate, each remaining recipient is accepted once
// by the platform, its message is in the broadcast's campaign, the recipients carry the
// platform's ids, and the broadcast completes with its event. The pre-flight of a MARKETING
// template leaves out US numbers.
func TestBroadcastLiveThroughSendPath(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{Simulator: &simulator.Config{}})
	a := env.NewTenant("Acme Ltd")
	env.ConnectNumber(a)
	syncTemplates(t, env, a.Account.ID)
	if r := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: a.Live, Body: map[string]any{"mobile": "447700900009"}}); r.Status != http.StatusOK {
		t.Fatalf("contact: %d %s", r.Status, r.Body)
	}
	if _, err := env.Store.SetContactBlocked(context.Background(), a.Account.ID, "447700900009", true); err != nil {
		t.Fatal(err)
	}
	startBroadcastEngine(t, env, 80)
	mobiles := []string{"447700900001", "447700900002", "447700900003", "447700900009", "447700900002"}
	var rs []any
	for i, m := range mobiles {
		rs = append(rs, map[string]any{"mobile": m, "variables": map[string]any{"name": fmt.Sprintf("P%d", i)}})
	}
	b := createBroadcast(t, env, a.Live, map[string]any{"name": "november", "template_name": "order_confirmation",
		"parameters": []any{map[string]any{"variable": "name"}, map[string]any{"value": "ORD-1"}}, "recipients": rs})
	if pf := b.Preflight; pf.Recipients != 3 || pf.Duplicates != 1 || pf.Blocked+pf.OptedOut != 1 || pf.Throughput != 80 || pf.EstimatedSeconds != 1 {
		t.Fatalf("preflight %+v", pf)
	}
	waitBroadcast(t, env, a.Live, b.ID, "completed")
	got := map[string]int{}
	for _, m := range env.Sim.Sent() {
		got[m.WaID]++
	}
	for _, m := range mobiles[:3] {
		if got[m] != 1 {
			t.Errorf("%s: %d platform sends, want 1 (%v)", m, got[m], got)
		}
	}
	if len(got) != 3 {
		t.Errorf("the simulator accepted sends to %v", got)
	}
	for _, r := range allRecipients(t, env, a.Live, b.ID, 100) {
		if r.Status != "sent" || !strings.HasPrefix(r.MessageID, "wamid.") {
			t.Errorf("recipient %+v", r)
		}
	}
	c := getCampaign(t, env, a.Live, b.CampaignID)
	if c.Name != "november" || c.Counts.Total != 3 {
		t.Errorf("campaign %+v", c)
	}
	var events int
	if err := env.Store.DB().Get(&events, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'broadcast.completed'
		AND NOT test`, a.Account.ID); err != nil || events != 1 {
		t.Fatalf("broadcast.completed events: %d (%v)", events, err)
	}
	var pf preflightData
	wantOK(t, env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/broadcasts/preflight", Key: a.Live, Body: map[string]any{
		"name": "promo", "template_name": "welcome",
		"recipients": []any{map[string]any{"mobile": "15551234567"}, map[string]any{"mobile": "447700900001"}}}}), &pf)
	if pf.Recipients != 1 || pf.USMarketing != 1 || pf.Budget.Limit != nil || pf.Budget.Needed != 1 {
		t.Fatalf("marketing preflight %+v (limit %v)", pf, pf.Budget.Limit)
	}
}

// A live broadcast reaches customers known only by a user id: an audience of contacts by
// number, by user id alone and by both is sent once per contact, to the number when it is
// known and otherwise to the user id in the platform's recipient field, with the contact's
// variables; the pre-flight counts them, the recipients list them by user id, their
// message.sent events name it, and no contact is made twice. Inline recipients name a user id
// too: a duplicate is merged, one who opted out is left out, and a MARKETING template's
// pre-flight does not take a US user id for a US number.
func TestBroadcastLiveUserIDRecipients(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := servertest.New(t, servertest.Config{Simulator: &simulator.Config{}})
	a := env.NewTenant("Acme Ltd")
	env.ConnectNumber(a)
	syncTemplates(t, env, a.Account.ID)
	contact := func(mobile, userID, first string, blocked bool) int64 {
		t.Helper()
		var id int64
		if err := env.Store.DB().Get(&id, `INSERT INTO contacts (account_id, mobile, user_id, firstname, name, blocked)
			VALUES ($1, NULLIF($2, ''), NULLIF($3, ''), $4, $4, $5) RETURNING id`, a.Account.ID, mobile, userID, first, blocked); err != nil {
			t.Fatal(err)
		}
		return id
	}
	const (
		dee = "US.13491208655302741918"
		eve = "BR.98765432109876543210"
		fay = "US.40000000000000000004"
	)
	ids := []int64{contact("447700900001", "", "Ana", false), contact("447700900002", "", "Ben", false),
		contact("447700900003", "US.30000000000000000003", "Caro", false), contact("", dee, "Dee", false),
		contact("", eve, "Eve", false), contact("", fay, "Fay", true)}
	// Fay replied STOP: her block has no member, recorded under her user id.
	if _, err := env.Store.DB().Exec(`INSERT INTO audit_log (account_id, user_id, action, target) VALUES ($1, NULL, $2, $3)`,
		a.Account.ID, store.AuditContactBlocked, fay); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.TagContacts(ctx, a.Account.ID, "vip", ids); err != nil {
		t.Fatal(err)
	}
	aud, err := env.Store.SaveAudience(ctx, a.Account.ID, "VIPs", store.AudienceFilter{Tags: []string{"vip"}})
	if err != nil {
		t.Fatal(err)
	}
	startBroadcastEngine(t, env, 80)
	b := createBroadcast(t, env, a.Live, map[string]any{"name": "vip launch", "template_name": "order_confirmation",
		"parameters": []any{map[string]any{"variable": "first_name"}, map[string]any{"value": "ORD-1"}}, "audience_id": aud.ID})
	// Fay is blocked, so the audience leaves her out before the pre-flight.
	if pf := b.Preflight; pf.Recipients != 5 || pf.Duplicates != 0 || pf.Blocked+pf.OptedOut != 0 || pf.Budget.Needed != 5 {
		t.Fatalf("preflight %+v", pf)
	}
	done := waitBroadcast(t, env, a.Live, b.ID, "completed")
	if c := done.Counts; c.Total != 5 || c.Sent+c.Delivered+c.Read != 5 || c.Failed+c.Unknown != 0 {
		t.Fatalf("counts %+v", c)
	}
	byNumber, byUserID := map[string]int{}, map[string]int{}
	var deeParams []string
	for _, m := range env.Sim.Sent() {
		switch {
		case m.To != "" && m.Recipient == "":
			byNumber[m.WaID]++
		case m.To == "" && m.Recipient != "":
			byUserID[m.Recipient]++
			if m.Recipient == dee {
				deeParams = m.Params("body")
			}
		default:
			t.Errorf("a send with to %q and recipient %q, want exactly one", m.To, m.Recipient)
		}
	}
	if len(byNumber) != 3 || byNumber["447700900001"] != 1 || byNumber["447700900002"] != 1 || byNumber["447700900003"] != 1 {
		t.Errorf("sends by number %v, want one to each of the three numbers", byNumber)
	}
	if len(byUserID) != 2 || byUserID[dee] != 1 || byUserID[eve] != 1 {
		t.Errorf("sends by user id %v, want one to each of %s and %s", byUserID, dee, eve)
	}
	if strings.Join(deeParams, "|") != "Dee|ORD-1" {
		t.Errorf("%s's body parameters %q", dee, deeParams)
	}
	got := map[string]recipientData{}
	for _, r := range allRecipients(t, env, a.Live, b.ID, 2) {
		if r.Status != "sent" || !strings.HasPrefix(r.MessageID, "wamid.") || (r.Mobile == "") == (r.UserID == "") {
			t.Errorf("recipient %+v", r)
		}
		got[r.Mobile+r.UserID] = r
	}
	if len(got) != 5 || got[dee].UserID != dee || got[eve].UserID != eve || got["447700900003"].Mobile != "447700900003" {
		t.Errorf("recipients %+v", got)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'message.sent' AND data->>'user_id' IN ($2, $3)`,
		a.Account.ID, dee, eve); n != 2 {
		t.Errorf("message.sent naming a user id: %d, want 2", n)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM contacts WHERE account_id = $1`, a.Account.ID); n != 6 {
		t.Errorf("%d contacts, want the 6 there were", n)
	}
	if c := getCampaign(t, env, a.Live, b.CampaignID); c.Counts.Total != 5 {
		t.Errorf("campaign %+v", c)
	}

	const gus = "US.50000000000000000005"
	sent := len(env.Sim.Sent())
	inline := createBroadcast(t, env, a.Live, map[string]any{"name": "inline", "template_name": "order_confirmation",
		"parameters": []any{map[string]any{"variable": "name"}, map[string]any{"value": "ORD-2"}},
		"recipients": []any{
			map[string]any{"user_id": gus, "variables": map[string]any{"name": "Gus"}},
			map[string]any{"mobile": "447700900004", "variables": map[string]any{"name": "Hal"}},
			map[string]any{"user_id": fay, "variables": map[string]any{"name": "Fay"}},
			map[string]any{"user_id": gus, "variables": map[string]any{"name": "Gus"}},
		}})
	if pf := inline.Preflight; pf.Recipients != 2 || pf.Duplicates != 1 || pf.OptedOut != 1 || pf.Blocked != 0 {
		t.Fatalf("inline preflight %+v", pf)
	}
	waitBroadcast(t, env, a.Live, inline.ID, "completed")
	var to []string
	for _, m := range env.Sim.Sent()[sent:] {
		to = append(to, m.WaID+m.Recipient)
	}
	if len(to) != 2 || !slices.Contains(to, gus) || !slices.Contains(to, "447700900004") {
		t.Errorf("the inline broadcast's sends went to %v, want %s and 447700900004 once each", to, gus)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM contacts WHERE account_id = $1 AND user_id = $2 AND mobile IS NULL`, a.Account.ID, gus); n != 1 {
		t.Errorf("contacts known by %s: %d, want 1 (made by the send)", gus, n)
	}

	var pf preflightData
	wantOK(t, env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/broadcasts/preflight", Key: a.Live, Body: map[string]any{
		"name": "promo", "template_name": "welcome",
		"recipients": []any{map[string]any{"mobile": "15551234567"}, map[string]any{"user_id": dee}}}}), &pf)
	if pf.Recipients != 1 || pf.USMarketing != 1 || pf.Budget.Needed != 1 {
		t.Fatalf("marketing preflight %+v, want the US number left out and the user id kept", pf)
	}
}

// An inline recipient is a mobile or a user id, exactly one, and a user id is never a number:
// each break is a 422 on the recipient's field with the template send's words, on create and
// pre-flight alike, and nothing is made. An authentication template with a code button, which
// the platform sends only to a number, cannot be a broadcast's template at all.
func TestBroadcastUserIDRefusals(t *testing.T) {
	t.Parallel()
	env, tn := richEnv(t)
	params := []any{map[string]any{"variable": "name"}, map[string]any{"value": "ORD-1"}}
	cases := []struct {
		name      string
		recipient map[string]any
		field     string
		says      string
	}{
		{"neither", map[string]any{"variables": map[string]any{"name": "Ana"}}, "recipients.1.mobile", "required unless user_id"},
		{"both", map[string]any{"mobile": "447700900002", "user_id": "US.13491208655302741918", "variables": map[string]any{"name": "Ana"}},
			"recipients.1.user_id", "not both"},
		{"a number as user id", map[string]any{"user_id": "447700900002", "variables": map[string]any{"name": "Ana"}},
			"recipients.1.user_id", "business-scoped user id"},
	}
	for _, path := range []string{"/v1/broadcasts", "/v1/broadcasts/preflight"} {
		for _, c := range cases {
			r := env.Do(servertest.Request{Method: http.MethodPost, Path: path, Key: tn.Live, Body: map[string]any{
				"name": "n", "template_name": "order_confirmation", "parameters": params,
				"recipients": []any{map[string]any{"mobile": "447700900001", "variables": map[string]any{"name": "Ben"}}, c.recipient}}})
			e := wantFailure(t, r, http.StatusUnprocessableEntity, "validation_failed")
			if got := strings.Join(e.Errors[c.field], " "); !strings.Contains(got, c.says) {
				t.Errorf("%s %s: errors[%s] = %q, want it to say %q: %s", path, c.name, c.field, got, c.says, r.Body)
			}
		}
		r := env.Do(servertest.Request{Method: http.MethodPost, Path: path, Key: tn.Live, Body: map[string]any{
			"name": "codes", "template_name": "login_code", "parameters": []any{map[string]any{"value": "482913"}},
			"recipients": []any{map[string]any{"user_id": "US.13491208655302741918"}}}})
		if e := wantFailure(t, r, http.StatusUnprocessableEntity, "validation_failed"); len(e.Errors["template_name"]) == 0 {
			t.Errorf("%s login_code: errors %v, want one on template_name", path, e.Errors)
		}
	}
	if n := dbInt(t, env, `SELECT count(*) FROM broadcasts WHERE account_id = $1`, tn.Account.ID); n != 0 {
		t.Fatalf("%d broadcasts made, want none", n)
	}
}

// A broadcast whose template became an authentication template with a code button after it
// was made cannot send it to a user id: the gateway's sender refuses the recipient before
// any platform call, in words, as a failure the engine does not retry.
func TestBroadcastSenderRefusesCodeTemplateToUserID(t *testing.T) {
	t.Parallel()
	env, tn := richEnv(t)
	before := len(env.Sim.Sent())
	_, err := env.Server.BroadcastSender().SendBroadcast(context.Background(), broadcast.Message{
		Broadcast:  store.Broadcast{ID: 1, AccountID: tn.Account.ID, Name: "codes", TemplateName: "login_code", TemplateLanguage: "en_US"},
		Recipient:  store.ClaimedRecipient{ID: 1, AccountID: tn.Account.ID, BroadcastID: 1, UserID: "US.13491208655302741918"},
		BodyParams: []string{"482913"}})
	if !errors.Is(err, broadcast.ErrNotSent) || !strings.Contains(err.Error(), "only to a phone number") {
		t.Fatalf("err = %v, want ErrNotSent saying the template goes only to a phone number", err)
	}
	if v := broadcast.Classify(err, 1, 5); v.State != store.RecipientFailed || v.RetryIn != 0 {
		t.Fatalf("verdict %+v, want a failure not retried", v)
	}
	if n := len(env.Sim.Sent()) - before; n != 0 {
		t.Fatalf("%d sends reached the platform", n)
	}
}

// broadcastOps are the broadcast operations, on broadcast id.
func broadcastOps(id int64) []servertest.Request {
	body := map[string]any{"name": "n", "template_name": "order_confirmation_update",
		"parameters": []any{map[string]any{"value": "a"}, map[string]any{"value": "b"}},
		"recipients": []any{map[string]any{"mobile": "447700900001"}}}
	p := fmt.Sprintf("/v1/broadcasts/%d", id)
	return []servertest.Request{
		{Method: http.MethodPost, Path: "/v1/broadcasts", Body: body},
		{Method: http.MethodPost, Path: "/v1/broadcasts/preflight", Body: body},
		{Method: http.MethodGet, Path: "/v1/broadcasts"},
		{Method: http.MethodGet, Path: p},
		{Method: http.MethodPost, Path: p + "/pause"},
		{Method: http.MethodPost, Path: p + "/resume"},
		{Method: http.MethodPost, Path: p + "/cancel"},
		{Method: http.MethodGet, Path: p + "/recipients"},
	}
}

// Pause, resume and cancel move a broadcast through its states and refuse what its state does
// not allow with a 409 naming it; each pause writes broadcast.paused. A missing id, or one of
// another account, is a 404 on every operation, and no key is a 401.
func TestBroadcastControl(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a, other := env.NewTenant("Acme Ltd"), env.NewTenant("Other Ltd")
	body := broadcastOps(0)[0].Body.(map[string]any)
	body["send_at"], body["time_zone"] = time.Now().Add(48*time.Hour).In(time.UTC).Format("2006-01-02T15:04"), "America/New_York"
	b := createBroadcast(t, env, a.Test, body)
	if b.State != "scheduled" || b.ScheduledAt == nil || b.TimeZone != "America/New_York" {
		t.Fatalf("created %+v", b)
	}
	do := func(action string, status int) broadcastData {
		t.Helper()
		r := env.Do(servertest.Request{Method: http.MethodPost, Path: fmt.Sprintf("/v1/broadcasts/%d/%s", b.ID, action), Key: a.Test})
		var out broadcastData
		if status == http.StatusOK {
			wantOK(t, r, &out)
		} else {
			wantFailure(t, r, status, "broadcast_state")
		}
		return out
	}
	if p := do("pause", http.StatusOK); p.State != "paused" || p.PauseReason != "operator" {
		t.Fatalf("paused %+v", p)
	}
	do("pause", http.StatusOK)
	if r := do("resume", http.StatusOK); r.State != "scheduled" {
		t.Fatalf("resumed %+v", r)
	}
	do("resume", http.StatusConflict)
	if c := do("cancel", http.StatusOK); c.State != "cancelled" || c.Counts.Cancelled != 1 {
		t.Fatalf("cancelled %+v", c)
	}
	do("cancel", http.StatusConflict)
	do("pause", http.StatusConflict)
	var paused int
	if err := env.Store.DB().Get(&paused, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'broadcast.paused'`,
		a.Account.ID); err != nil || paused != 1 {
		t.Fatalf("broadcast.paused events: %d (%v); a second pause with the same reason writes none", paused, err)
	}
	for _, r := range broadcastOps(b.ID)[3:] {
		r.Key = other.Test
		wantFailure(t, env.Do(r), http.StatusNotFound, "not_found")
	}
	for _, r := range broadcastOps(b.ID) {
		if got := env.Do(r); got.Status != http.StatusUnauthorized || got.Code(t) != "unauthorized" {
			t.Errorf("%s %s without a key: %d %s", r.Method, r.Path, got.Status, got.Body)
		}
	}
}

// What a broadcast refuses: no number connected (409), an unknown template (404), parameters
// that do not fit the template, recipients and an audience at once, a missing variable, an
// unknown time zone or audience, a bad cursor or id (422), and a body over 4 MiB (413). A
// create retried with its Idempotency-Key is replayed, not made twice.
func TestBroadcastRefusals(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{Simulator: &simulator.Config{}})
	a := env.NewTenant("Acme Ltd")
	base := func() map[string]any {
		return map[string]any{"name": "n", "template_name": "order_confirmation",
			"parameters": []any{map[string]any{"variable": "name"}, map[string]any{"value": "b"}},
			"recipients": []any{map[string]any{"mobile": "447700900001", "variables": map[string]any{"name": "Ana"}}}}
	}
	paths := []string{"/v1/broadcasts", "/v1/broadcasts/preflight"}
	for _, path := range paths {
		wantFailure(t, env.Do(servertest.Request{Method: http.MethodPost, Path: path, Key: a.Live, Body: base()}), http.StatusConflict, "number_not_connected")
	}
	env.ConnectNumber(a)
	syncTemplates(t, env, a.Account.ID)
	for _, path := range paths {
		post := func(body any) *servertest.Response {
			return env.Do(servertest.Request{Method: http.MethodPost, Path: path, Key: a.Live, Body: body})
		}
		b := base()
		b["template_name"] = "nope"
		wantFailure(t, post(b), http.StatusNotFound, "template_not_found")
		for field, change := range map[string]func(map[string]any){
			"parameters":                  func(b map[string]any) { b["parameters"] = []any{map[string]any{"value": "a"}} },
			"parameters.1":                func(b map[string]any) { b["parameters"] = []any{map[string]any{"variable": "name"}, map[string]any{}} },
			"recipients":                  func(b map[string]any) { b["audience_id"] = 7 },
			"recipients.0.variables.name": func(b map[string]any) { b["recipients"] = []any{map[string]any{"mobile": "447700900001"}} },
			"time_zone":                   func(b map[string]any) { b["time_zone"] = "Mars/Olympus" },
			"template_name": func(b map[string]any) {
				b["template_name"] = "shipping_update"
				b["parameters"] = []any{map[string]any{"value": "x"}}
			},
			"audience_id": func(b map[string]any) {
				delete(b, "recipients")
				b["audience_id"] = 7
				b["parameters"] = []any{map[string]any{"variable": "name"}, map[string]any{"value": "b"}}
			},
		} {
			b := base()
			change(b)
			if e := wantFailure(t, post(b), http.StatusUnprocessableEntity, "validation_failed"); len(e.Errors[field]) == 0 {
				t.Errorf("%s: errors %v, want one on %s", path, e.Errors, field)
			}
		}
		big := base()
		big["name"] = strings.Repeat("x", 100)
		rs := make([]any, 0, 9000)
		for i := range 9000 {
			rs = append(rs, map[string]any{"mobile": fmt.Sprintf("4477%08d", i), "variables": map[string]any{"name": strings.Repeat("y", 500)}})
		}
		big["recipients"] = rs
		wantFailure(t, post(big), http.StatusRequestEntityTooLarge, "payload_too_large")
	}
	key := map[string]string{"Idempotency-Key": "bc-1"}
	r1 := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/broadcasts", Key: a.Live, Body: base(), Header: key})
	r2 := env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/broadcasts", Key: a.Live, Body: base(), Header: key})
	if r1.Status != http.StatusCreated || string(r1.Body) != string(r2.Body) || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry: %d %s / %d %s", r1.Status, r1.Body, r2.Status, r2.Body)
	}
	for _, path := range []string{"/v1/broadcasts?cursor=%21", "/v1/broadcasts/0", "/v1/broadcasts/1/recipients?cursor=%21"} {
		wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: path, Key: a.Live}), http.StatusUnprocessableEntity, "validation_failed")
	}
	for _, action := range []string{"pause", "resume", "cancel"} {
		wantFailure(t, env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/broadcasts/0/" + action, Key: a.Live}), http.StatusUnprocessableEntity, "validation_failed")
	}
}
