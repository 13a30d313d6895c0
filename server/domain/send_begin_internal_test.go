package domain

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// A send the database refuses fails alone: the shared statement fails, and its other sends are
// each recorded once, on their own.
func TestBeginSendsFallsBackOneByOne(t *testing.T) {
	t.Parallel()
	st, ctx := storetest.New(t), context.Background()
	a, err := st.CreateAccount(ctx, "acme", "acme@example.com", fmt.Sprintf("acme-%d", time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	s := NewSends(SendsConfig{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer s.Close()
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
// statement: their keys meet (the batcher keeps writes whose keys meet apart, as
// server/groupcommit's tests hold). Sends to different people, or to one number in different
// accounts, may share one.
func TestBeginKeysKeepOnePersonApart(t *testing.T) {
	t.Parallel()
	send := func(account int64, mobile string) store.SendBegin {
		return store.SendBegin{AccountID: account, SendInput: store.SendInput{Mobile: mobile}}
	}
	meet := func(a, b store.SendBegin) bool {
		for _, ka := range beginKey(a) {
			for _, kb := range beginKey(b) {
				if ka == kb {
					return true
				}
			}
		}
		return false
	}
	for _, c := range []struct {
		a, b store.SendBegin
		want bool
	}{
		{send(1, "5511987654321"), send(1, "5511987654321"), true},
		{send(1, "5511987654321"), send(1, "551187654321"), true}, // the same person without the ninth digit
		{send(1, "5511987654321"), send(1, "15550000001"), false},
		{send(1, "5511987654321"), send(2, "5511987654321"), false},
	} {
		if got := meet(c.a, c.b); got != c.want {
			t.Errorf("%d:%s and %d:%s meet: %t, want %t", c.a.AccountID, c.a.Mobile, c.b.AccountID, c.b.Mobile, got, c.want)
		}
	}
}
