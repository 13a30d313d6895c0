package server_test

import (
	"net/http"
	"testing"

	"gateway/platform/simulator"
	"gateway/server/servertest"
)

// 50 concurrent identical sends with one Idempotency-Key: one platform send, 50 identical
// answers (status and body bytes), 49 of them replays.
func TestSendIdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	const n = 50
	body := map[string]any{"destination": "15551234567", "template_name": "order_confirmation",
		"body_variables": []string{"Ana", "ORD-7781"}, "name": "Ana"}
	reqs := make([]servertest.Request, n)
	for i := range reqs {
		reqs[i] = servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template",
			Key: a.Live, Body: body, Header: map[string]string{"Idempotency-Key": "order-7781-confirmation"}}
	}
	res := env.DoAtOnce(reqs)
	replays := 0
	for i := range n {
		if res[i].Status != http.StatusOK || string(res[i].Body) != string(res[0].Body) {
			t.Fatalf("response %d: %d %s; response 0: %d %s", i, res[i].Status, res[i].Body, res[0].Status, res[0].Body)
		}
		if res[i].Header.Get("Idempotent-Replayed") == "true" {
			replays++
		}
	}
	if replays != n-1 {
		t.Fatalf("%d replays, want %d", replays, n-1)
	}
	if sent := env.Sim.Sent(); len(sent) != 1 {
		t.Fatalf("%d platform sends, want exactly 1", len(sent))
	}
	for q, want := range map[string]int64{
		`SELECT count(*) FROM messages WHERE account_id = $1`:                            1,
		`SELECT count(*) FROM events WHERE account_id = $1 AND type = 'message.sent'`:    1,
		`SELECT count(*) FROM events WHERE account_id = $1 AND type = 'contact.created'`: 1,
	} {
		if got := dbInt(t, env, q, a.Account.ID); got != want {
			t.Fatalf("%s = %d, want %d", q, got, want)
		}
	}

	// A later retry with the same key and body replays too, even after the platform would now
	// refuse the number.
	env.Sim.Script("15551234567", simulator.Outcome{FailSync: 131026})
	r := send(env, a.Live, body, "Idempotency-Key", "order-7781-confirmation")
	if r.Status != http.StatusOK || string(r.Body) != string(res[0].Body) || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("late retry: %d %s", r.Status, r.Body)
	}
	if sent := env.Sim.Sent(); len(sent) != 1 {
		t.Fatalf("%d platform sends after the retry", len(sent))
	}
}

func TestSendIdempotencyConflictAndReplayedFailures(t *testing.T) {
	t.Parallel()
	env, a := sendEnv(t, servertest.Config{})
	body := map[string]any{"destination": "15551234567", "template_name": "welcome"}
	first := send(env, a.Live, body, "Idempotency-Key", "k1")
	mustOK(t, first, nil)

	// Same key, another body: 422 idempotency_conflict, and nothing is sent.
	other := map[string]any{"destination": "15557654321", "template_name": "welcome"}
	r := send(env, a.Live, other, "Idempotency-Key", "k1")
	e := mustFail(t, r, http.StatusUnprocessableEntity, "idempotency_conflict")
	if len(e.Errors["header.Idempotency-Key"]) == 0 {
		t.Fatalf("conflict: %s", r.Body)
	}
	// Same key on the other POST endpoint is another request too.
	r = env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: a.Live,
		Body: map[string]any{"mobile": "15551234567"}, Header: map[string]string{"Idempotency-Key": "k1"}})
	mustFail(t, r, http.StatusUnprocessableEntity, "idempotency_conflict")
	if n := len(env.Sim.Sent()); n != 1 {
		t.Fatalf("%d platform sends", n)
	}

	// A platform rejection is a final answer: replayed as is, the platform is not asked again.
	env.Sim.Script("15550001234", simulator.Outcome{FailSync: 131026})
	bad := map[string]any{"destination": "15550001234", "template_name": "welcome"}
	r1 := send(env, a.Live, bad, "Idempotency-Key", "k2")
	mustFail(t, r1, http.StatusBadGateway, "platform_rejected")
	env.Sim.Script("15550001234", simulator.Outcome{})
	r2 := send(env, a.Live, bad, "Idempotency-Key", "k2")
	if r2.Status != http.StatusBadGateway || string(r2.Body) != string(r1.Body) || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replayed rejection: %d %s", r2.Status, r2.Body)
	}
	if n := dbInt(t, env, `SELECT count(*) FROM messages WHERE account_id = $1 AND destination = '15550001234'`, a.Account.ID); n != 1 {
		t.Fatalf("%d message rows for the rejected key", n)
	}

	// Keys are per account: B's "k1" is its own request.
	b := env.NewTenant("Beta Inc")
	connectAndSync(t, env, b)
	var d sendData
	rb := send(env, b.Live, other, "Idempotency-Key", "k1")
	mustOK(t, rb, &d)
	if rb.Header.Get("Idempotent-Replayed") != "" || !d.ContactCreated {
		t.Fatalf("B's first use of k1: %s", rb.Body)
	}
}
