package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gateway/platform/simulator"
	"gateway/server/servertest"
	"gateway/store"
)

// The inbox's routes keep to the session's workspace and refuse what they cannot do: another
// workspace's conversation is a 404 on every route, as is a media id the workspace does not
// have; an assignee who is not a member is refused on the page and nothing changes; a blank
// note is refused; the live feed answers JSON with the next cursor and refuses a malformed one;
// a reaction goes to the platform as the API's reaction to the customer's message.
func TestInboxBoundaries(t *testing.T) {
	clock := &inboxClock{}
	env := inboxEnv(t, clock)
	a := signUp(t, env, "Acme", "owner@acme.example")
	other := signUp(t, env, "Other", "owner@other.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	conn := env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Acme"}})
	in, err := env.Sim.Inject(simulator.Inbound{PhoneNumberID: conn.PhoneNumberID, From: "5511987654321", Name: "Ana", Type: "text",
		Payload: map[string]any{"body": "Hi"}})
	if err != nil {
		t.Fatal(err)
	}
	conv := conversationOf(t, env, acc, "5511987654321")
	page := fmt.Sprintf("/dashboard/inbox/%d", conv)
	if p := a.get(page); p.Status != http.StatusOK || !strings.Contains(p.Body, "Hi") {
		t.Fatalf("own thread: %d", p.Status)
	}
	for _, path := range []string{page, "/dashboard/inbox/999999", "/dashboard/media/" + "123456"} {
		if p := other.get(path); p.Status != http.StatusNotFound {
			t.Errorf("GET %s from another workspace: %d", path, p.Status)
		}
	}
	for _, action := range []string{"/assign", "/resolve", "/reopen", "/notes", "/answer"} {
		if p := other.post(page+action, url.Values{"assignee": {"0"}, "note": {"x"}, "body": {"x"}}); p.Status != http.StatusNotFound {
			t.Errorf("POST %s from another workspace: %d", action, p.Status)
		}
	}
	outsider := userOf(t, env, "owner@other.example")
	if p := a.post(page+"/assign", url.Values{"assignee": {fmt.Sprint(outsider)}}); p.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(p.Body, "not a member of this workspace") {
		t.Fatalf("assigning a non-member: %d", p.Status)
	}
	if p := a.post(page+"/notes", url.Values{"note": {"   "}}); p.Status != http.StatusUnprocessableEntity {
		t.Fatalf("blank note: %d", p.Status)
	}
	var n int
	if err := env.Store.DB().Get(&n, `SELECT count(*) FROM audit_log WHERE account_id = $1 AND action LIKE 'conversation.%'`, acc); err != nil || n != 0 {
		t.Fatalf("%d audit entries after refused actions (%v)", n, err)
	}

	p := a.get("/dashboard/live/inbox?since=0")
	var live struct {
		Next    string  `json:"next"`
		Changed []int64 `json:"changed"`
		Unread  string  `json:"unread"`
	}
	if p.Status != http.StatusOK || json.Unmarshal([]byte(p.Body), &live) != nil || live.Next == "" || live.Unread != "" {
		t.Fatalf("live inbox: %d %s", p.Status, p.Body)
	}
	if _, err := env.Sim.Inject(simulator.Inbound{PhoneNumberID: conn.PhoneNumberID, From: "5511987654321", Type: "text",
		Payload: map[string]any{"body": "Still there?"}}); err != nil {
		t.Fatal(err)
	}
	p = a.get("/dashboard/live/inbox?since=" + url.QueryEscape(live.Next))
	if json.Unmarshal([]byte(p.Body), &live) != nil || len(live.Changed) != 1 || live.Changed[0] != conv || live.Unread != "1" {
		t.Fatalf("live inbox after a message: %s", p.Body)
	}
	if p := a.get("/dashboard/live/inbox?since=not-a-cursor"); p.Status != http.StatusBadRequest {
		t.Fatalf("malformed cursor: %d", p.Status)
	}

	// A reaction from the thread reaches the platform as a reaction to the customer's message.
	var msgID int64
	if err := env.Store.DB().Get(&msgID, `SELECT id FROM messages WHERE account_id = $1 AND platform_message_id = $2`, acc, in.Wamid); err != nil {
		t.Fatal(err)
	}
	if p := a.post(page+"/answer", url.Values{"react_to": {fmt.Sprint(msgID)}, "emoji": {"👍"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("reaction: %d %s", p.Status, p.Body)
	}
	sent := env.Sim.Sent()
	if len(sent) != 1 || sent[0].Type != "reaction" || !strings.Contains(string(sent[0].Content), in.Wamid) || !strings.Contains(string(sent[0].Content), "👍") {
		t.Fatalf("the platform got %+v", sent)
	}
}
