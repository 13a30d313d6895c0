package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"gateway/platform/simulator"
	"gateway/server/dashboard"
	"gateway/store"
	"gateway/store/storetest"
)

// Shutdown lets an in-flight send finish: the signal arrives while the platform is still
// answering (1.5 s), the client still gets its 200, the send is recorded with its platform
// id, and only then do the services stop and the pool close.
func TestShutdownLetsInFlightSendFinish(t *testing.T) {
	sim := simulator.New(simulator.Config{SentDelay: time.Hour, DeliveredDelay: time.Hour, ReadDelay: time.Hour})
	seedSimulator(sim)
	simURL, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	target, _ := url.Parse(simURL)
	rp := httputil.NewSingleHostReverseProxy(target)
	entered := make(chan struct{}, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages") {
			entered <- struct{}{}
			time.Sleep(1500 * time.Millisecond)
		}
		rp.ServeHTTP(w, r)
	}))
	defer slow.Close()

	dsn := storetest.DSN(t)
	vars := map[string]string{"DATABASE_URL": dsn, "PLATFORM_BASE_URL": slow.URL + "/v23.0", "GATEWAY_ADDR": "127.0.0.1:0",
		"GATEWAY_MIGRATE": "false", "LOG_LEVEL": "error", "PLATFORM_TIMEOUT": "5s"}
	cfg := mustConfig(t, func(k string) string { return vars[k] })
	bg := context.Background()
	a, err := openApp(bg, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	acct, err := createAccount(bg, a.store, "Drain Ltd", "drain@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.ConnectNumber(bg, store.Connection{AccountID: acct.ID, WabaID: devNumber.WabaID, PhoneNumberID: devNumber.PhoneNumberID,
		PhoneNumber: devNumber.DisplayPhoneNumber, DisplayName: "Drain", AccessToken: devNumber.AccessToken}); err != nil {
		t.Fatal(err)
	}
	if err := devSyncTemplates(bg, a, acct.ID); err != nil {
		t.Fatal(err)
	}
	key, err := createKey(bg, a.store, acct.ID, "live")
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	addrc, served := make(chan string, 1), make(chan error, 1)
	go func() {
		served <- a.serve(ctx, func(addr string) { addrc <- addr })
		a.close() // as serve() does: the pool closes after a.serve returns
	}()
	addr := <-addrc
	type result struct {
		status int
		body   []byte
		err    error
	}
	resc := make(chan result, 1)
	go func() {
		body := `{"destination":"15551234567","template_name":"order_confirmation","body_variables":["Ana","ORD-1"]}`
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/messages/template", bytes.NewReader([]byte(body)))
		req.Header.Set("Authorization", "Bearer "+key.Key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			resc <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		resc <- result{status: resp.StatusCode, body: b}
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the send never reached the platform")
	}
	cancel() // SIGTERM while the platform call is in flight
	r := <-resc
	if r.err != nil || r.status != http.StatusOK {
		t.Fatalf("in-flight send during shutdown: %d %s %v", r.status, r.body, r.err)
	}
	var env struct {
		Data struct {
			MessageID int64 `json:"message_id"`
		} `json:"data"`
	}
	json.Unmarshal(r.body, &env)
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not return after the drain")
	}
	db, err := sqlx.Open("postgres", storetest.DirectDSN(dsn))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var m struct {
		Status string  `db:"status"`
		WAMID  *string `db:"platform_message_id"`
	}
	if err := db.Get(&m, `SELECT status, platform_message_id FROM messages WHERE id = $1`, env.Data.MessageID); err != nil {
		t.Fatal(err)
	}
	if m.Status != "sent" || m.WAMID == nil || *m.WAMID == "" {
		t.Fatalf("recorded %+v", m)
	}
}

// Shutdown does not wait for the inbox's open live streams: they end when it starts (the
// browser reconnects elsewhere or later), so serve returns long before the drain's deadline.
func TestShutdownEndsLiveStreams(t *testing.T) {
	dsn := storetest.DSN(t)
	vars := map[string]string{"DATABASE_URL": dsn, "GATEWAY_ADDR": "127.0.0.1:0", "GATEWAY_MIGRATE": "false", "LOG_LEVEL": "error"}
	cfg := mustConfig(t, func(k string) string { return vars[k] })
	bg := context.Background()
	a, err := openApp(bg, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	acct, err := createAccount(bg, a.store, "Stream Ltd", "stream@example.com")
	if err != nil {
		t.Fatal(err)
	}
	u, err := a.store.CreateUser(bg, acct.ID, "teammate@example.com", "unused", store.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	const token = "shutdown-test-session-token"
	sum := sha256.Sum256([]byte(token))
	if err := a.store.CreateSession(bg, sum[:], acct.ID, u.ID, dashboard.SessionIdle, dashboard.SessionAbsolute); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	addrc, served := make(chan string, 1), make(chan error, 1)
	go func() {
		served <- a.serve(ctx, func(addr string) { addrc <- addr })
		a.close()
	}()
	addr := <-addrc
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/dashboard/live/inbox/stream?since=", nil)
	req.Header.Set("Cookie", "__Host-session="+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "event: change") {
			break
		}
	}
	cancel() // SIGTERM with the stream open
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(20 * time.Second): // the drain's deadline is 35 s: a stream held it
		t.Fatal("serve waited for the open stream")
	}
	if _, err := io.ReadAll(r); err != nil {
		t.Fatalf("the stream did not end cleanly: %v", err)
	}
}
