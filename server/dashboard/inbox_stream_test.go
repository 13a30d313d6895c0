package dashboard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/server/servertest"
	"gateway/store"
)

// sseEvent is one server-sent event as read off the stream.
type sseEvent struct {
	ID, Type string
	Data     struct {
		Changed []int64 `json:"changed"`
		Reload  bool    `json:"reload"`
		Unread  string  `json:"unread"`
		Patch   bool    `json:"patch"`
		Rows    []struct {
			ID       int64  `json:"id"`
			Activity string `json:"activity"`
			HTML     string `json:"html"`
		} `json:"rows"`
	}
}

// sseReader reads events (comments and the retry field skipped) from a stream.
type sseReader struct{ r *bufio.Reader }

func (s sseReader) next() (sseEvent, error) {
	var ev sseEvent
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if ev.Type != "" {
				return ev, nil
			}
		case strings.HasPrefix(line, "id: "):
			ev.ID = line[4:]
		case strings.HasPrefix(line, "event: "):
			ev.Type = line[7:]
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[6:]), &ev.Data); err != nil {
				return ev, err
			}
		}
	}
}

// openStream opens the live stream as the user's browser would.
func openStream(t *testing.T, ctx context.Context, u *user, query string) (*http.Response, sseReader) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", u.base+"/dashboard/live/inbox/stream"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := u.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return resp, sseReader{bufio.NewReader(resp.Body)}
}

// The live stream over HTTP: its first event gives the position and the badge; a customer's
// message reaches a list of the All view as its rendered row and a thread's stream as the
// conversation's id; a stream of another workspace hears nothing of it; a reconnection with
// Last-Event-ID catches up what changed since; a malformed position is a 400; the hub's Close
// (the server's shutdown) ends open streams, and new ones are answered 503 (the pages poll).
func TestInboxLiveStream(t *testing.T) {
	env := inboxEnv(t, &inboxClock{})
	a := signUp(t, env, "Acme", "owner@acme.example")
	other := signUp(t, env, "Other", "owner@other.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	conn := env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Acme"}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	_, list := openStream(t, ctx, a, "?since=&view=all&patch=1")
	_, thread := openStream(t, ctx, a, "?since=")
	_, outsider := openStream(t, ctx, other, "?since=&view=all&patch=1")
	first, err := list.next()
	if err != nil || first.Type != "change" || first.ID == "" || len(first.Data.Changed) != 0 || first.Data.Unread != "" {
		t.Fatalf("first event %+v %v", first, err)
	}
	if _, err := thread.next(); err != nil {
		t.Fatal(err)
	}
	if _, err := outsider.next(); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Sim.Inject(simulator.Inbound{PhoneNumberID: conn.PhoneNumberID, From: "447700900555", Name: "Ana Live",
		Type: "text", Payload: map[string]any{"body": "Streamed hello"}}); err != nil {
		t.Fatal(err)
	}
	conv := conversationOf(t, env, acc, "447700900555")
	ev, err := list.next()
	if err != nil || ev.Type != "change" || !ev.Data.Patch || len(ev.Data.Rows) != 1 || ev.Data.Rows[0].ID != conv ||
		!strings.Contains(ev.Data.Rows[0].HTML, "Ana Live") || !strings.Contains(ev.Data.Rows[0].HTML, "Streamed hello") ||
		ev.Data.Unread != "1" {
		t.Fatalf("list event %+v %v", ev, err)
	}
	tev, err := thread.next()
	if err != nil || len(tev.Data.Changed) != 1 || tev.Data.Changed[0] != conv || len(tev.Data.Rows) != 0 {
		t.Fatalf("thread event %+v %v", tev, err)
	}

	// A reconnection from before the message (the first event's id) catches it up.
	req, _ := http.NewRequestWithContext(ctx, "GET", a.base+"/dashboard/live/inbox/stream?since=0", nil)
	req.Header.Set("Last-Event-ID", first.ID)
	resp, err := a.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if again, err := (sseReader{bufio.NewReader(resp.Body)}).next(); err != nil || fmt.Sprint(again.Data.Changed) != fmt.Sprint([]int64{conv}) {
		t.Fatalf("reconnection's first event %+v %v", again, err)
	}
	if p := a.get("/dashboard/live/inbox/stream?since=not-a-cursor"); p.Status != http.StatusBadRequest {
		t.Fatalf("malformed position: %d", p.Status)
	}

	// Shutdown: the open streams end, and the other workspace's never heard of the message.
	env.LiveInbox.Close()
	if ev, err := outsider.next(); err != io.EOF && !strings.Contains(fmt.Sprint(err), "EOF") {
		t.Fatalf("the other workspace's stream after Close: %+v %v", ev, err)
	}
	if _, err := list.next(); err == nil {
		t.Fatal("a stream is still open after Close")
	}
	if p := a.get("/dashboard/live/inbox/stream?since="); p.Status != http.StatusServiceUnavailable {
		t.Fatalf("a stream after Close: %d", p.Status)
	}
}
