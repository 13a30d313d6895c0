package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"gateway/server"
	"gateway/server/domain"
	"gateway/server/servertest"
	"gateway/server/servertest/wait"
)

// everyOperation is one valid request per operation of the spec.
func everyOperation() []servertest.Request {
	return append([]servertest.Request{
		{Method: "GET", Path: "/v1/me"},
		{Method: "GET", Path: "/v1/templates"},
		{Method: "POST", Path: "/v1/messages/template", Body: map[string]any{"destination": "15551234567", "template_name": "welcome"}},
		{Method: "GET", Path: "/v1/messages/1"},
		{Method: "GET", Path: "/v1/contacts"},
		{Method: "POST", Path: "/v1/contacts", Body: map[string]any{"mobile": "15551234567"}},
		{Method: "GET", Path: "/v1/messages"},
		{Method: "GET", Path: "/v1/campaigns"},
		{Method: "GET", Path: "/v1/campaigns/1"},
		{Method: "GET", Path: "/v1/events/examples"},
		{Method: "GET", Path: "/v1/media/1037543291543636"},
		{Method: "POST", Path: "/v1/media", Body: "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\nPNG\r\n--b--\r\n",
			Header: map[string]string{"Content-Type": "multipart/form-data; boundary=b"}},
		{Method: "POST", Path: "/v1/messages", Body: map[string]any{"destination": "15551234567", "type": "text", "text": map[string]any{"body": "Hi"}}},
		{Method: "POST", Path: "/v1/messages/1/read"},
	}, broadcastOps(1)...)
}

// An inactive account's key is refused with 403 on every operation.
func TestEveryOperationInactiveAccount(t *testing.T) {
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Dormant Ltd")
	if _, err := env.Store.SetAccountActive(context.Background(), a.Account.ID, false); err != nil {
		t.Fatal(err)
	}
	for _, r := range everyOperation() {
		r.Key = a.Live
		if got := env.Do(r); got.Status != http.StatusForbidden || got.Code(t) != "account_inactive" {
			t.Errorf("%s %s: %d %s", r.Method, r.Path, got.Status, got.Body)
		}
	}
}

// The demo key's limit applies to every operation.
func TestEveryOperationDemoLimit(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	env := servertest.New(t, servertest.Config{Clock: clock.Now})
	a := env.NewTenant("Demo Co")
	demo, _ := env.NewKey(a.Account.ID, domain.ModeDemo)
	for i := 0; i < 20; i++ {
		env.Do(servertest.Request{Method: "GET", Path: "/v1/me", Key: demo})
	}
	for _, r := range everyOperation() {
		if r.Method == "POST" && (r.Path == "/v1/messages/template" || r.Path == "/v1/messages") {
			continue // sends have their own bucket (TestDemoKeySendLimit, TestAnswerDemoLimit)
		}
		r.Key = demo
		if got := env.Do(r); got.Status != http.StatusTooManyRequests || got.Code(t) != "rate_limited" {
			t.Errorf("%s %s: %d %s", r.Method, r.Path, got.Status, got.Body)
		}
	}
}

// When the database fails, every operation answers the 500 envelope with a generic message
// that leaks nothing of the cause.
func TestEveryOperationDatabaseDown(t *testing.T) {
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	env.Store.DB().Close()
	for _, r := range everyOperation() {
		r.Key = a.Live
		got := env.Do(r)
		if got.Status != http.StatusInternalServerError || got.Code(t) != "internal_error" || strings.Contains(string(got.Body), "sql") {
			t.Errorf("%s %s: %d %s", r.Method, r.Path, got.Status, got.Body)
		}
	}
}

// A send body over 1 MiB is a 413 envelope.
func TestSendBodyTooLarge(t *testing.T) {
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	big := `{"destination":"15551234567","template_name":"welcome","name":"` + strings.Repeat("x", 1<<20) + `"}`
	got := env.Do(servertest.Request{Method: "POST", Path: "/v1/messages/template", Key: a.Live, Body: big})
	if got.Status != http.StatusRequestEntityTooLarge || got.Code(t) != "payload_too_large" {
		t.Fatalf("%d %s", got.Status, got.Body)
	}
}

// A retry that arrives while the first request with its Idempotency-Key is still running waits
// for it; past the wait it is a 409 idempotency_in_progress. The first request is held by a row
// lock on the contact it updates.
func TestUpsertContactIdempotencyInProgress(t *testing.T) {
	env := servertest.New(t, servertest.Config{Options: server.Options{IdempotencyWait: 200 * time.Millisecond}})
	a := env.NewTenant("Acme Ltd")
	body := map[string]any{"mobile": "15551234567", "firstname": "Ana"}
	if r := env.Do(servertest.Request{Method: "POST", Path: "/v1/contacts", Key: a.Live, Body: body}); r.Status != http.StatusOK {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	tx, err := env.Store.DB().Beginx()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`SELECT 1 FROM contacts WHERE account_id = $1 AND mobile = '15551234567' FOR UPDATE`, a.Account.ID); err != nil {
		t.Fatal(err)
	}
	req := servertest.Request{Method: "POST", Path: "/v1/contacts", Key: a.Live, Body: body,
		Header: map[string]string{"Idempotency-Key": "held"}}
	first := make(chan *servertest.Response, 1)
	go func() {
		r, err := env.DoConcurrent(req)
		if err != nil {
			t.Error(err)
		}
		first <- r
	}()
	// Wait until the first request holds the key.
	wait.For(t, func() bool {
		var n int
		env.Store.DB().Get(&n, `SELECT count(*) FROM idempotency_keys WHERE account_id = $1 AND status_code IS NULL`, a.Account.ID)
		return n == 1
	}, 10*time.Second, "the first request to take the key")
	second := env.Do(req)
	if second.Status != http.StatusConflict || second.Code(t) != "idempotency_in_progress" {
		t.Fatalf("retry while in flight: %d %s", second.Status, second.Body)
	}
	tx.Rollback()
	r := <-first
	if r == nil || r.Status != http.StatusOK {
		t.Fatalf("first request: %+v", r)
	}
	third := env.Do(req)
	if third.Status != http.StatusOK || string(third.Body) != string(r.Body) || third.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay after it finished: %d %s", third.Status, third.Body)
	}
}
