package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/server/domain"
	"gateway/server/servertest"
)

// sbReplies returns the texts the sandbox number sent to a handset (wa_id digits).
func sbReplies(env *servertest.Env, to string) []string {
	var out []string
	for _, m := range env.Sim.Sent() {
		if m.PhoneNumberID == "sandbox-pnid" && m.WaID == to && m.Type == "text" {
			out = append(out, m.TextBody)
		}
	}
	return out
}

// sbWaitReply waits for the n-th reply to a handset and returns it.
func sbWaitReply(t *testing.T, env *servertest.Env, to string, n int) string {
	t.Helper()
	pwWait(t, "a sandbox reply", func() bool { return len(sbReplies(env, to)) >= n })
	return sbReplies(env, to)[n-1]
}

func TestSandboxEndToEnd(t *testing.T) {
	env := servertest.New(t, servertest.Config{Simulator: &simulator.Config{}})
	env.Sim.AddNumber(simulator.Number{PhoneNumberID: "sandbox-pnid", WabaID: "sandbox-waba", DisplayPhoneNumber: "15550001111",
		AccessToken: "sandbox-token", VerifiedName: "Gateway Sandbox"})
	tn := env.NewTenant("Acme Ltd")
	other := env.NewTenant("Other Co")
	const handset = "447700900123"

	// Joining: a reply through the sandbox number says which workspace and until when.
	if _, err := env.Sim.InjectInboundMessage(simulator.Inbound{PhoneNumberID: "sandbox-pnid", From: "+" + handset, Name: "Hana", Type: "text", Payload: map[string]any{"body": "Join " + tn.Account.JoinCode}}); err != nil {
		t.Fatal(err)
	}
	reply := sbWaitReply(t, env, handset, 1)
	until := time.Now().UTC().Add(24 * time.Hour)
	if !strings.Contains(reply, `"Acme Ltd"`) || !strings.Contains(reply, until.Format("2 Jan 2006")) {
		t.Fatalf("join reply %q", reply)
	}

	// Its messages now reach the workspace as test events; nothing live is written.
	wamid, err := env.Sim.InjectInboundMessage(simulator.Inbound{PhoneNumberID: "sandbox-pnid", From: handset, Name: "Hana", Type: "text", Payload: map[string]any{"body": "Hi there"}})
	if err != nil {
		t.Fatal(err)
	}
	evs := pwEvents(t, env, tn.Account.ID, "message.received")
	if len(evs) != 1 || !evs[0].Test {
		t.Fatalf("events %+v", evs)
	}
	d := pwData(t, evs[0])
	if d["from"] != handset || d["name"] != "Hana" || d["text"] != "Hi there" || d["type"] != "text" {
		t.Fatalf("message.received data %v", d)
	}
	var body map[string]any
	if err := json.Unmarshal(domain.EventBody(evs[0]), &body); err != nil || body["mode"] != "test" {
		t.Fatalf("delivered body %v (%v)", body, err)
	}
	if n := pwCount(t, env, `SELECT (SELECT count(*) FROM contacts) + (SELECT count(*) FROM messages) + (SELECT count(*) FROM conversations)`); n != 0 {
		t.Fatalf("%d live rows written for sandbox traffic", n)
	}
	if n := len(pwEvents(t, env, other.Account.ID, "")); n != 0 {
		t.Fatalf("%d events for another workspace", n)
	}
	// A message id is handled once: a redelivery fires no second event.
	raw := pwInbound(t, "sandbox-pnid", handset, "Hana", wamid, "text", map[string]any{"body": "Hi there"})
	pwPostOK(t, env, raw)
	if n := len(pwEvents(t, env, tn.Account.ID, "message.received")); n != 1 {
		t.Fatalf("%d events after a redelivery", n)
	}
	if n := len(sbReplies(env, handset)); n != 1 {
		t.Fatalf("%d replies: a message inside the window gets none", n)
	}

	// Joining another workspace moves the handset there.
	if _, err := env.Sim.InjectInboundMessage(simulator.Inbound{PhoneNumberID: "sandbox-pnid", From: handset, Name: "Hana", Type: "text", Payload: map[string]any{"body": "join " + other.Account.JoinCode}}); err != nil {
		t.Fatal(err)
	}
	if reply := sbWaitReply(t, env, handset, 2); !strings.Contains(reply, `"Other Co"`) {
		t.Fatalf("second join reply %q", reply)
	}
	if _, err := env.Sim.InjectInboundMessage(simulator.Inbound{PhoneNumberID: "sandbox-pnid", From: handset, Name: "Hana", Type: "image", Payload: map[string]any{"id": "media-1", "mime_type": "image/jpeg"}}); err != nil {
		t.Fatal(err)
	}
	if evs := pwEvents(t, env, other.Account.ID, "message.received"); len(evs) != 1 || pwData(t, evs[0])["type"] != "image" {
		t.Fatalf("events of the second workspace %+v", evs)
	}

	// An unknown code, and a handset in no sandbox, get replies saying so.
	const stranger = "15557654321"
	if _, err := env.Sim.InjectInboundMessage(simulator.Inbound{PhoneNumberID: "sandbox-pnid", From: stranger, Name: "Sam", Type: "text", Payload: map[string]any{"body": "join no-such-code"}}); err != nil {
		t.Fatal(err)
	}
	if reply := sbWaitReply(t, env, stranger, 1); !strings.Contains(reply, `"no-such-code" does not match any sandbox`) {
		t.Fatalf("unknown code reply %q", reply)
	}
	if _, err := env.Sim.InjectInboundMessage(simulator.Inbound{PhoneNumberID: "sandbox-pnid", From: stranger, Name: "Sam", Type: "text", Payload: map[string]any{"body": "hello?"}}); err != nil {
		t.Fatal(err)
	}
	if reply := sbWaitReply(t, env, stranger, 2); !strings.Contains(reply, "not in a sandbox") {
		t.Fatalf("no-sandbox reply %q", reply)
	}

	// A deactivated workspace's code.
	if _, err := env.Store.SetAccountActive(context.Background(), other.Account.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Sim.InjectInboundMessage(simulator.Inbound{PhoneNumberID: "sandbox-pnid", From: stranger, Name: "Sam", Type: "text", Payload: map[string]any{"body": "join " + other.Account.JoinCode}}); err != nil {
		t.Fatal(err)
	}
	if reply := sbWaitReply(t, env, stranger, 3); !strings.Contains(reply, "no longer available") {
		t.Fatalf("deactivated reply %q", reply)
	}
}

func TestSandboxWindowEnded(t *testing.T) {
	env := servertest.New(t, servertest.Config{Simulator: &simulator.Config{}})
	env.Sim.AddNumber(simulator.Number{PhoneNumberID: "sandbox-pnid", WabaID: "sandbox-waba", DisplayPhoneNumber: "15550001111",
		AccessToken: "sandbox-token"})
	tn := env.NewTenant("Acme Ltd")
	const handset = "15551230000"
	// Joined 25 hours before the message (pwInbound's timestamp is 1767268800).
	joined := time.Unix(1767268800, 0).Add(-25 * time.Hour)
	if _, err := env.Store.JoinSandbox(context.Background(), tn.Account.JoinCode, handset, joined); err != nil {
		t.Fatal(err)
	}
	pwPostOK(t, env, pwInbound(t, "sandbox-pnid", handset, "Al", "wamid.late", "text", map[string]any{"body": "still there?"}))
	reply := sbWaitReply(t, env, handset, 1)
	if !strings.Contains(reply, "ended on 1 Jan 2026 11:00 UTC") || !strings.Contains(reply, "join "+tn.Account.JoinCode) {
		t.Fatalf("window-ended reply %q", reply)
	}
	if n := len(pwEvents(t, env, tn.Account.ID, "")); n != 0 {
		t.Fatalf("%d events after the window ended", n)
	}
	// Inside the window (joined 23 hours before) the same handset's message is an event.
	if _, err := env.Store.JoinSandbox(context.Background(), tn.Account.JoinCode, handset, joined.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	pwPostOK(t, env, pwInbound(t, "sandbox-pnid", handset, "Al", "wamid.ontime", "text", map[string]any{"body": "now?"}))
	if n := len(pwEvents(t, env, tn.Account.ID, "message.received")); n != 1 {
		t.Fatalf("%d events inside the window", n)
	}
}
