package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/server/servertest"
	"gateway/server/servertest/wait"
	"gateway/store"
)

// messageData is data of GET /messages/{id}.
type messageData struct {
	MessageID     int64  `json:"message_id"`
	ChatMessageID string `json:"chat_message_id"`
	Status        string `json:"status"`
	SentAt        string `json:"sent_at"`
	History       []struct {
		Status    string `json:"status"`
		Timestamp string `json:"timestamp"`
	} `json:"history"`
	Error *struct {
		Code    int    `json:"code"`
		Title   string `json:"title"`
		Details string `json:"details"`
	} `json:"error"`
}

func getMessage(env *servertest.Env, key string, id any) *servertest.Response {
	env.T.Helper()
	return env.Do(servertest.Request{Method: http.MethodGet, Path: fmt.Sprintf("/v1/messages/%v", id), Key: key})
}

// An ISO 8601 timestamp with an explicit UTC offset (Z or ±hh:mm).
var isoWithOffset = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`)

func TestGetMessage(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	var d sendData
	mustOK(t, send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "welcome"}), &d)

	var m messageData
	r := getMessage(env, a.Live, d.MessageID)
	mustOK(t, r, &m)
	if m.MessageID != d.MessageID || m.ChatMessageID != d.ChatMessageID || m.Status != "sent" || !isoWithOffset.MatchString(m.SentAt) ||
		len(m.History) != 1 || m.History[0].Status != "sent" || m.Error != nil {
		t.Fatalf("GET after send: %s", r.Body)
	}
	sentAt, _ := time.Parse(time.RFC3339, m.SentAt)
	if time.Since(sentAt) > time.Minute || time.Since(sentAt) < 0 {
		t.Fatalf("sent_at %s", m.SentAt)
	}

	// The platform reports delivered and read: the last status shows, with the history and
	// each status's platform timestamp.
	// (After the send: the history is ordered by time.)
	delivered := time.Now().UTC().Truncate(time.Second).Add(2 * time.Second)
	read := delivered.Add(90 * time.Second)
	for _, rep := range []store.StatusReport{
		{PlatformMessageID: d.ChatMessageID, Status: "read", OccurredAt: read},
		{PlatformMessageID: d.ChatMessageID, Status: "delivered", OccurredAt: delivered},
	} {
		if _, err := env.Store.ApplyStatus(context.Background(), a.Account.ID, rep); err != nil {
			t.Fatal(err)
		}
	}
	r = getMessage(env, a.Live, d.MessageID)
	mustOK(t, r, &m)
	if m.Status != "read" || len(m.History) != 3 || m.History[0].Status != "sent" ||
		m.History[1].Status != "delivered" || m.History[1].Timestamp != delivered.Format(time.RFC3339) ||
		m.History[2].Status != "read" || m.History[2].Timestamp != read.Format(time.RFC3339) {
		t.Fatalf("GET after delivered and read: %s", r.Body)
	}
}

// A failed status from the platform shows as failed with the platform's error.
func TestGetMessageFailedAsync(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	var d sendData
	mustOK(t, send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "welcome"}), &d)
	code := 131047
	if _, err := env.Store.ApplyStatus(context.Background(), a.Account.ID, store.StatusReport{PlatformMessageID: d.ChatMessageID,
		Status: "failed", OccurredAt: time.Now(), ErrorCode: &code, ErrorTitle: "Re-engagement message",
		ErrorDetails: "more than 24 hours have passed"}); err != nil {
		t.Fatal(err)
	}
	var m messageData
	r := getMessage(env, a.Live, d.MessageID)
	mustOK(t, r, &m)
	if m.Status != "failed" || m.Error == nil || m.Error.Code != 131047 || m.Error.Title != "Re-engagement message" ||
		m.Error.Details != "more than 24 hours have passed" || len(m.History) != 2 || m.History[1].Status != "failed" {
		t.Fatalf("failed message: %s", r.Body)
	}
}

// End to end with the simulator's signed status webhooks, including a status that arrives
// before the send is recorded (parked, then applied once the platform id is known). The early
// status is read (the statuses come in reverse order), so a parked report left unapplied leaves
// the message delivered. With the callback data the webhook path adopts the send's platform id
// itself; without it only the send, once it has recorded the id, can apply the parked report.
func TestGetMessageFollowsPlatformStatuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		outcome simulator.Outcome
	}{
		{"callback data", simulator.Outcome{EarlyStatus: true, Reorder: true}},
		{"no callback data", simulator.Outcome{EarlyStatus: true, Reorder: true, NoCallbackData: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env, a := sendEnv(t, servertest.Config{Simulator: &simulator.Config{}})
			env.Sim.Script("15551234567", c.outcome)
			var d sendData
			mustOK(t, send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "welcome"}), &d)
			if d.Status != "sent" {
				t.Fatalf("send answered %q", d.Status)
			}
			if err := env.Sim.WaitIdle(context.Background()); err != nil {
				t.Fatal(err)
			}
			var m messageData
			wait.For(t, func() bool {
				mustOK(t, getMessage(env, a.Live, d.MessageID), &m)
				return m.Status == "read" && len(m.History) == 3
			}, 10*time.Second, "the message to reach read with 3 history rows")
			if n := dbInt(t, env, `SELECT count(*) FROM parked_statuses WHERE account_id = $1`, a.Account.ID); n != 0 {
				t.Fatalf("%d statuses still parked", n)
			}
			checkEventBodies(t, env, a.Account.ID)
		})
	}
}

func TestGetMessageNotFound(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	b := env.NewTenant("Beta Inc")
	connectAndSync(t, env, b)
	var da, db sendData
	mustOK(t, send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "welcome"}), &da)
	mustOK(t, send(env, b.Live, map[string]any{"destination": "15551234567", "template_name": "welcome"}), &db)

	// A pending send (platform not answered yet) and an inbound message are not readable here.
	var pending, inbound int64
	if err := env.Store.DB().Get(&pending, `INSERT INTO messages (account_id, contact_id, conversation_id, direction, type,
			destination, status) SELECT account_id, contact_id, conversation_id, 'out', 'template', destination, 'pending'
		FROM messages WHERE id = $1 RETURNING id`, da.MessageID); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.DB().Get(&inbound, `INSERT INTO messages (account_id, contact_id, conversation_id, direction, type,
			destination, status, platform_message_id, sent_at) SELECT account_id, contact_id, conversation_id, 'in', 'text',
			destination, 'received', 'wamid.inbound', now()
		FROM messages WHERE id = $1 RETURNING id`, da.MessageID); err != nil {
		t.Fatal(err)
	}

	missing := mustFail(t, getMessage(env, a.Live, 987654321), http.StatusNotFound, "not_found")
	for name, r := range map[string]*servertest.Response{
		"another account's": getMessage(env, a.Live, db.MessageID),
		"pending":           getMessage(env, a.Live, pending),
		"inbound":           getMessage(env, a.Live, inbound),
		"live id, test key": getMessage(env, a.Test, da.MessageID),
		"B reads A's":       getMessage(env, b.Live, da.MessageID),
	} {
		e := mustFail(t, r, http.StatusNotFound, "not_found")
		if e.Message != missing.Message {
			t.Fatalf("%s: %q, a missing id: %q", name, e.Message, missing.Message)
		}
	}
	for _, id := range []string{"0", "abc", "-3"} {
		e := mustFail(t, getMessage(env, a.Live, id), http.StatusUnprocessableEntity, "validation_failed")
		if len(e.Errors["path.id"]) == 0 {
			t.Fatalf("id %s: errors %v", id, e.Errors)
		}
	}
	// Unauthenticated: 401.
	mustFail(t, getMessage(env, "", da.MessageID), http.StatusUnauthorized, "unauthorized")
	var raw map[string]any
	json.Unmarshal(getMessage(env, a.Live, da.MessageID).Body, &raw)
	if raw["success"] != true {
		t.Fatalf("owner cannot read its message: %v", raw)
	}
}

// A poll reads its key and its message in one statement (readahead.go), and the key's checks
// still come first: an inactive account gets 403 and a revoked key 401 for a message their
// account has, and the answer after re-activation is the message as read alone.
func TestGetMessageReadAheadKeepsKeyChecks(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	ctx := context.Background()
	var d sendData
	mustOK(t, send(env, a.Live, map[string]any{"destination": "15551234567", "template_name": "welcome"}), &d)

	if _, err := env.Store.SetAccountActive(ctx, a.Account.ID, false); err != nil {
		t.Fatal(err)
	}
	mustFail(t, getMessage(env, a.Live, d.MessageID), http.StatusForbidden, "account_inactive")
	if _, err := env.Store.SetAccountActive(ctx, a.Account.ID, true); err != nil {
		t.Fatal(err)
	}
	var m messageData
	mustOK(t, getMessage(env, a.Live, d.MessageID), &m)
	want, err := env.Store.MessageByID(ctx, a.Account.ID, d.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if m.MessageID != want.ID || m.ChatMessageID != want.PlatformMessageID || m.Status != want.Status ||
		len(m.History) != len(want.History) {
		t.Fatalf("polled %+v, read alone %+v", m, want)
	}

	if _, err := env.Store.RevokeAPIKey(ctx, a.LiveKey.ID); err != nil {
		t.Fatal(err)
	}
	r := getMessage(env, a.Live, d.MessageID)
	mustFail(t, r, http.StatusUnauthorized, "unauthorized")
	if strings.Contains(string(r.Body), d.ChatMessageID) {
		t.Fatalf("a revoked key's 401 carries the message: %s", r.Body)
	}
}
