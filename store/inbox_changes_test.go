package store_test

import (
	"context"
	"fmt"
	"testing"

	"gateway/store"
)

// The feed reports each changed conversation: a first poll only gives the position; a customer
// message, an assignment, a read that changes the count are seen by the next poll; an idle poll
// sees nothing; a change committed after a later one was polled is still seen; other workspaces'
// changes are not.
func TestInboxChanges(t *testing.T) {
	w := newInboxWorkspace(t)
	ctx := context.Background()
	poll := func(c store.InboxChangeCursor) store.InboxChanges {
		t.Helper()
		ch, err := w.st.InboxChanges(ctx, w.acc, c)
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	first := poll(store.InboxChangeCursor{})
	if len(first.ConversationIDs) != 0 || first.Next.From == 0 {
		t.Fatalf("first poll %+v", first)
	}
	c := first.Next
	w.write(t, "wamid.B2", "15550000002", "Ben Okafor", "again")
	if _, err := w.st.AssignConversation(ctx, w.acc, w.cy, w.owner, w.mate); err != nil {
		t.Fatal(err)
	}
	ch := poll(c)
	if fmt.Sprint(ch.ConversationIDs) != fmt.Sprint([]int64{w.ben, w.cy}) || ch.Reload {
		t.Fatalf("after a message and an assignment %+v, want %d %d", ch, w.ben, w.cy)
	}
	c = ch.Next
	if ch := poll(c); len(ch.ConversationIDs) != 0 {
		t.Fatalf("idle poll %+v", ch)
	}

	// A transaction that changed Ana's conversation commits after a later change was polled.
	tx, err := w.st.DB().Beginx()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`UPDATE conversations SET change_xid = pg_current_xact_id() WHERE account_id = $1 AND id = $2`,
		w.acc, w.ana); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.ResolveConversation(ctx, w.acc, w.ben, w.owner); err != nil {
		t.Fatal(err)
	}
	ch = poll(c)
	if fmt.Sprint(ch.ConversationIDs) != fmt.Sprint([]int64{w.ben}) {
		t.Fatalf("while Ana's change runs %+v", ch)
	}
	// The cursor names the running transaction, and survives its string.
	if c, err = store.ParseInboxChangeCursor(ch.Next.String()); err != nil || fmt.Sprint(c) != fmt.Sprint(ch.Next) || len(c.Running) == 0 {
		t.Fatalf("cursor %+v round trip %+v %v", ch.Next, c, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	ch = poll(c)
	if fmt.Sprint(ch.ConversationIDs) != fmt.Sprint([]int64{w.ana}) {
		t.Fatalf("Ana's late change is missed: %+v", ch)
	}
	rows, err := w.st.InboxConversations(ctx, w.acc, ch.ConversationIDs)
	if err != nil || len(rows) != len(ch.ConversationIDs) {
		t.Fatalf("re-read %+v %v", rows, err)
	}

	// Reading changes the feed only when the unread count changes.
	c = poll(c).Next
	var last int64
	if err := w.st.DB().Get(&last, `SELECT max(id) FROM messages WHERE conversation_id = $1`, w.ana); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.MarkConversationRead(ctx, w.acc, w.ana, last); err != nil {
		t.Fatal(err)
	}
	ch = poll(c)
	if fmt.Sprint(ch.ConversationIDs) != fmt.Sprint([]int64{w.ana}) {
		t.Fatalf("after a read %+v", ch)
	}
	c = ch.Next
	w.write(t, "wamid.A9", "15550000001", "Ana Souza", "x")
	if _, err := w.st.MarkConversationRead(ctx, w.acc, w.ana, last); err != nil {
		t.Fatal(err)
	}
	c = poll(c).Next
	if _, err := w.st.MarkConversationRead(ctx, w.acc, w.ana, last); err != nil {
		t.Fatal(err)
	}
	if ch := poll(c); len(ch.ConversationIDs) != 0 {
		t.Fatalf("a read that changes nothing is a change: %+v", ch)
	}

	other, _ := w.st.CreateAccount(ctx, "beta", "b@example.com", "beta-1")
	oc := mustPollNext(t, w.st, other.ID)
	w.write(t, "wamid.A10", "15550000001", "Ana Souza", "y")
	if ch, err := w.st.InboxChanges(ctx, other.ID, oc); err != nil || len(ch.ConversationIDs) != 0 {
		t.Fatalf("another workspace's feed %+v %v", ch, err)
	}
	if rows, _ := w.st.InboxConversations(ctx, other.ID, []int64{w.ana}); len(rows) != 0 {
		t.Fatalf("another workspace re-reads %+v", rows)
	}
	if _, err := store.ParseInboxChangeCursor("-1"); err == nil {
		t.Fatal("a bad cursor parses")
	}
	if c, err := store.ParseInboxChangeCursor(""); err != nil || c.From != 0 || len(c.Running) != 0 {
		t.Fatalf("the empty cursor: %+v %v", c, err)
	}
}

func mustPollNext(t *testing.T, st *store.Store, acc int64) store.InboxChangeCursor {
	t.Helper()
	ch, err := st.InboxChanges(context.Background(), acc, store.InboxChangeCursor{})
	if err != nil {
		t.Fatal(err)
	}
	return ch.Next
}
