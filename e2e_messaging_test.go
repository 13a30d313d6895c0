package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"gateway/server/servertest"
	"gateway/server/servertest/wait"
	"gateway/store/storetest"
)

// TestE2EMessaging runs the built binary with the platform simulator on loopback: an operator
// creates an account and a key, connects a number, syncs templates; a client sends a template
// and watches GET /messages/{id} move sent → delivered → read as the simulator's signed
// webhooks arrive. Every response is checked against openapi.yaml.
func TestE2EMessaging(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	simAddr, gwAddr := freeAddr(t), freeAddr(t)
	env := []string{
		"DATABASE_URL=" + storetest.DSN(t),
		"GATEWAY_ADDR=" + gwAddr,
		"GATEWAY_SECRET_KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
		"PLATFORM_BASE_URL=http://" + simAddr + "/v23.0",
		"PLATFORM_APP_SECRET=e2e-app-secret",
		"PLATFORM_SIM_ADDR=" + simAddr,
		"PLATFORM_SIM_WEBHOOK_URL=http://" + gwAddr + "/platform/webhook",
		"LOG_LEVEL=warn",
	}
	startProcess(t, env, "platform-sim", "--seed")
	startProcess(t, env, "serve")
	waitHTTP(t, "http://"+gwAddr+"/readyz", 30*time.Second)
	waitHTTP(t, "http://"+simAddr+"/_sim/config", 10*time.Second)

	acct := adminJSON(t, env, "account", "create", "--name", "E2E Ltd", "--email", "e2e@example.com")
	id := fmt.Sprint(int64(acct["id"].(float64)))
	key := adminJSON(t, env, "key", "create", "--account", id, "--mode", "live")["key"].(string)
	adminJSON(t, append(env[:len(env):len(env)], "GATEWAY_ADMIN_ACCESS_TOKEN="+devNumber.AccessToken), "number", "connect", "--account", id, "--waba-id", devNumber.WabaID,
		"--phone-number-id", devNumber.PhoneNumberID, "--phone-number", devNumber.DisplayPhoneNumber,
		"--display-name", "E2E")
	synced := adminJSON(t, env, "templates", "sync", "--account", id)
	t.Logf("templates sync: %v", synced)

	api := servertest.NewContract(t, "http://"+gwAddr)
	do := func(r servertest.Request) *servertest.Response {
		t.Helper()
		r.Key = key
		resp, err := api.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	me := do(servertest.Request{Method: "GET", Path: "/v1/me"}).Map(t)
	if chat := me["data"].(map[string]any)["chat"].(map[string]any); chat["connected"] != true || chat["phone_number_id"] != devNumber.PhoneNumberID {
		t.Fatalf("GET /me: %v", me)
	}
	tpls := do(servertest.Request{Method: "GET", Path: "/v1/templates"}).Map(t)
	found := false
	for _, tp := range tpls["data"].(map[string]any)["templates"].([]any) {
		if tp.(map[string]any)["name"] == "order_confirmation" {
			found = true
		}
	}
	if !found {
		t.Fatalf("order_confirmation not listed: %v", tpls)
	}

	send := do(servertest.Request{Method: "POST", Path: "/v1/messages/template", Body: map[string]any{
		"destination": "15551234567", "template_name": "order_confirmation", "name": "Ana",
		"body_variables": []string{"Ana", "ORD-7781"}}})
	if send.Status != http.StatusOK {
		t.Fatalf("send: %d %s", send.Status, send.Body)
	}
	var sent struct {
		Data struct {
			MessageID     int64  `json:"message_id"`
			ChatMessageID string `json:"chat_message_id"`
			Status        string
		}
	}
	send.JSON(t, &sent)
	if sent.Data.Status != "sent" || sent.Data.ChatMessageID == "" {
		t.Fatalf("send: %s", send.Body)
	}

	// The simulator reports sent, delivered, read (50/150/300 ms); the status only ever rises.
	rank := map[string]int{"sent": 1, "delivered": 2, "read": 3}
	seen, last := []string{}, 0
	var msg struct {
		Data struct {
			Status  string
			History []struct{ Status string }
		}
	}
	wait.For(t, func() bool {
		do(servertest.Request{Method: "GET", Path: fmt.Sprintf("/v1/messages/%d", sent.Data.MessageID)}).JSON(t, &msg)
		r := rank[msg.Data.Status]
		if r < last {
			t.Fatalf("status went back from rank %d to %q", last, msg.Data.Status)
		}
		if r > last {
			seen, last = append(seen, msg.Data.Status), r
		}
		return msg.Data.Status == "read"
	}, 20*time.Second, "the message to reach read")
	if len(msg.Data.History) != 3 {
		t.Fatalf("history %+v, want sent, delivered, read", msg.Data.History)
	}
	t.Logf("statuses seen while polling: %v", seen)
}
