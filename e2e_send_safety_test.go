package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"gateway/server/servertest"
	"gateway/server/servertest/wait"
	"gateway/store/storetest"
)

// pgProxy is a TCP proxy on loopback in front of PostgreSQL that a test can cut: every open
// connection is closed, and new ones are closed on accept, until it is restored.
type pgProxy struct {
	ln       net.Listener
	upstream string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

func startPGProxy(t testing.TB, upstream string) *pgProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { ln.Close(); p.Cut() })
	go p.serve()
	return p
}

func (p *pgProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.mu.Unlock()
		u, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[u] = struct{}{}, struct{}{}
		p.mu.Unlock()
		go p.pipe(c, u)
		go p.pipe(u, c)
	}
}

func (p *pgProxy) pipe(dst, src net.Conn) {
	io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// Cut closes every connection and refuses new ones: the database is gone.
func (p *pgProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
}

// Restore lets connections through again.
func (p *pgProxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// TestE2ESendDatabaseFailsAfterPlatformAccepted is the fault-injection test of issue 8: the
// gateway reaches PostgreSQL through a TCP proxy on loopback, which the test cuts right after
// the platform accepted a send (the simulator holds its answer for a second; the test cuts when
// the simulator's control API lists the send). The send answers 502 with outcome_unknown; the
// client retries with its Idempotency-Key, during and after the outage; the simulator saw
// exactly one send, and the message ends with its wamid and its statuses.
func TestE2ESendDatabaseFailsAfterPlatformAccepted(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	dsn, err := url.Parse(storetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := startPGProxy(t, dsn.Host)
	dsn.Host = proxy.ln.Addr().String()
	simAddr, gwAddr := freeAddr(t), freeAddr(t)
	env := []string{
		"DATABASE_URL=" + dsn.String(),
		"GATEWAY_ADDR=" + gwAddr,
		"GATEWAY_SECRET_KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
		"GATEWAY_SEND_RECORD_RETRY=1s",
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

	acct := adminJSON(t, env, "account", "create", "--name", "Fault Ltd", "--email", "fault@example.com")
	id := fmt.Sprint(int64(acct["id"].(float64)))
	key := adminJSON(t, env, "key", "create", "--account", id, "--mode", "live")["key"].(string)
	adminJSON(t, append(env[:len(env):len(env)], "GATEWAY_ADMIN_ACCESS_TOKEN="+devNumber.AccessToken), "number", "connect", "--account", id, "--waba-id", devNumber.WabaID,
		"--phone-number-id", devNumber.PhoneNumberID, "--phone-number", devNumber.DisplayPhoneNumber,
		"--display-name", "Fault")
	adminJSON(t, env, "templates", "sync", "--account", id)

	sim := func(method, path string, body any) []byte {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, "http://"+simAddr+"/_sim/"+path, rd)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("simulator %s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return b
	}
	type simSent struct {
		Wamid    string `json:"wamid"`
		Callback string `json:"biz_opaque_callback_data"`
	}
	sims := func() []simSent {
		var out struct{ Data []simSent }
		json.Unmarshal(sim("GET", "sent", nil), &out)
		return out.Data
	}
	// The statuses come 2.5 s after the platform's answer, once the database is back.
	sim("POST", "config", map[string]any{"sent_delay_ms": 2500, "delivered_delay_ms": 2700, "read_delay_ms": 2900})
	sim("POST", "script", map[string]any{"recipient": "15551234567", "hang_ms": 1000})

	api := servertest.NewContract(t, "http://"+gwAddr)
	body := map[string]any{"destination": "15551234567", "template_name": "order_confirmation", "name": "Ana",
		"body_variables": []string{"Ana", "ORD-7781"}}
	sendReq := servertest.Request{Method: "POST", Path: "/v1/messages/template", Key: key, Body: body,
		Header: map[string]string{"Idempotency-Key": "fault-7781"}}
	do := func(r servertest.Request) *servertest.Response {
		t.Helper()
		resp, err := api.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	first := make(chan *servertest.Response, 1)
	go func() {
		resp, err := api.Do(sendReq)
		if err != nil {
			t.Error(err)
		}
		first <- resp
	}()
	wait.For(t, func() bool { return len(sims()) == 1 }, 10*time.Second, "the platform to accept the send")
	proxy.Cut()
	r := <-first
	if r == nil {
		t.FailNow()
	}
	var e struct {
		Code           string `json:"code"`
		MessageID      int64  `json:"message_id"`
		OutcomeUnknown bool   `json:"outcome_unknown"`
	}
	r.JSON(t, &e)
	if r.Status != http.StatusBadGateway || e.Code != "platform_unavailable" || !e.OutcomeUnknown || e.MessageID == 0 {
		t.Fatalf("send while the database is cut: %d %s", r.Status, r.Body)
	}
	// The client retries during the outage: no answer from the database, no second send.
	if r := do(sendReq); r.Status == http.StatusOK {
		t.Fatalf("retry during the outage: %d %s", r.Status, r.Body)
	}
	proxy.Restore()
	// And right after it: the recorded send, or a 409 while it is being confirmed.
	if r := do(sendReq); r.Status != http.StatusOK && r.Status != http.StatusConflict {
		t.Fatalf("retry after the outage: %d %s", r.Status, r.Body)
	}

	sent := sims()
	if len(sent) != 1 || sent[0].Callback != fmt.Sprint(e.MessageID) {
		t.Fatalf("the platform saw %+v, want one send carrying callback data %d", sent, e.MessageID)
	}
	var msg struct {
		Data struct {
			ChatMessageID  string `json:"chat_message_id"`
			Status         string `json:"status"`
			OutcomeUnknown *bool  `json:"outcome_unknown"`
			History        []struct{ Status string }
		}
	}
	wait.For(t, func() bool {
		do(servertest.Request{Method: "GET", Path: fmt.Sprintf("/v1/messages/%d", e.MessageID), Key: key}).JSON(t, &msg)
		return msg.Data.Status == "read"
	}, 20*time.Second, "the message to reach read")
	if msg.Data.ChatMessageID != sent[0].Wamid || len(msg.Data.History) != 3 || msg.Data.OutcomeUnknown != nil {
		t.Fatalf("message %+v, want wamid %s with sent, delivered, read", msg.Data, sent[0].Wamid)
	}
	r = do(sendReq)
	var ok struct {
		Data struct {
			MessageID     int64  `json:"message_id"`
			ChatMessageID string `json:"chat_message_id"`
		}
	}
	r.JSON(t, &ok)
	if r.Status != http.StatusOK || ok.Data.MessageID != e.MessageID || ok.Data.ChatMessageID != sent[0].Wamid ||
		r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("final retry: %d %s", r.Status, r.Body)
	}
	if n := len(sims()); n != 1 {
		t.Fatalf("the platform saw %d sends, want exactly 1", n)
	}
}
