package server

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"gateway/store"
)

// A send the database refuses fails alone: the shared statement fails, and its other sends are
// each recorded once, on their own.
func TestBeginSendsFallsBackOneByOne(t *testing.T) {
	t.Parallel()
	s, a := storeOnlyServer(t)
	st, ctx := s.store, context.Background()
	in := func(mobile, source string) store.SendBegin {
		return store.SendBegin{AccountID: a.ID, SendInput: store.SendInput{Mobile: mobile, Name: "Ana", CampaignName: "API",
			TemplateID: 7, TemplateName: "welcome", Content: json.RawMessage(`{}`), Source: source}}
	}
	ws := []store.SendBegin{in("15550000001", "api"), in("15550000002", "nowhere"), in("15550000003", "panel")}
	got, err := s.beginSends(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if got[1].err == nil {
		t.Fatalf("the refused send has no error: %+v", got[1])
	}
	for _, i := range []int{0, 2} {
		if got[i].err != nil || got[i].rec.MessageID == 0 {
			t.Fatalf("send %d: %+v", i, got[i])
		}
	}
	var n int
	if err := st.DB().Get(&n, `SELECT count(*) FROM messages WHERE account_id = $1`, a.ID); err != nil || n != 2 {
		t.Fatalf("%d messages (%v), want 2", n, err)
	}
	if err := st.DB().Get(&n, `SELECT count(*) FROM contacts WHERE account_id = $1 AND mobile = '15550000002'`, a.ID); err != nil || n != 0 {
		t.Fatalf("%d contacts of the refused send (%v)", n, err)
	}
}

// The send batcher never puts two sends to one person (a number and another form of it) in one
// statement, and keeps the later one for the next.
func TestBeginKeysKeepOnePersonApart(t *testing.T) {
	t.Parallel()
	b := newGroupCommit(func(context.Context, []store.SendBegin) ([]begun, error) { return nil, nil }, beginKey, time.Minute)
	for _, m := range []string{"5511987654321", "15550000001", "551187654321", "5511987654321"} {
		b.queue = append(b.queue, &batchCall[store.SendBegin, begun]{w: store.SendBegin{AccountID: 1,
			SendInput: store.SendInput{Mobile: m}}})
	}
	b.queue = append(b.queue, &batchCall[store.SendBegin, begun]{w: store.SendBegin{AccountID: 2,
		SendInput: store.SendInput{Mobile: "5511987654321"}}})
	var batches [][]string
	for len(b.queue) > 0 {
		var ms []string
		for _, c := range b.take() {
			ms = append(ms, fmt.Sprint(c.w.AccountID, ":", c.w.Mobile))
		}
		batches = append(batches, ms)
	}
	want := "[[1:5511987654321 1:15550000001 2:5511987654321] [1:551187654321] [1:5511987654321]]"
	if fmt.Sprint(batches) != want {
		t.Fatalf("batches %v, want %s", batches, want)
	}
}
