package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"gateway/store"
)

// Assign, resolve and reopen change the conversation once each (a repeat changes nothing and
// writes nothing), each change audited with its teammate; a customer message reopens a resolved
// conversation; an assignee must be a member, and removing the member unassigns.
func TestInboxTeamActions(t *testing.T) {
	w := newInboxWorkspace(t)
	ctx := context.Background()
	steps := []struct {
		name string
		do   func() (bool, error)
		want bool
	}{
		{"assign", func() (bool, error) { return w.st.AssignConversation(ctx, w.acc, w.ana, w.owner, w.mate) }, true},
		{"assign again", func() (bool, error) { return w.st.AssignConversation(ctx, w.acc, w.ana, w.owner, w.mate) }, false},
		{"resolve", func() (bool, error) { return w.st.ResolveConversation(ctx, w.acc, w.ana, w.mate) }, true},
		{"resolve again", func() (bool, error) { return w.st.ResolveConversation(ctx, w.acc, w.ana, w.mate) }, false},
		{"reopen", func() (bool, error) { return w.st.ReopenConversation(ctx, w.acc, w.ana, w.owner) }, true},
		{"reopen again", func() (bool, error) { return w.st.ReopenConversation(ctx, w.acc, w.ana, w.owner) }, false},
		{"unassign", func() (bool, error) { return w.st.AssignConversation(ctx, w.acc, w.ana, w.owner, 0) }, true},
	}
	for _, s := range steps {
		if changed, err := s.do(); err != nil || changed != s.want {
			t.Fatalf("%s: changed %v %v, want %v", s.name, changed, err, s.want)
		}
	}
	// Ana's conversation was the last acted on: it leads the inbox.
	if rows := w.list(t, store.InboxFilter{View: store.InboxAll}); rows[0].ConversationID != w.ana {
		t.Fatalf("after the team's actions: %s", names(rows))
	}
	es, err := w.st.AuditLog(ctx, w.acc, 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		if e.Target == fmt.Sprint(w.ana) {
			got = append(got, e.Action+" by "+e.UserEmail+": "+e.Detail)
		}
	}
	want := []string{
		"conversation.assigned by owner@example.com: unassigned",
		"conversation.reopened by owner@example.com: ",
		"conversation.resolved by mate@example.com: ",
		"conversation.assigned by owner@example.com: assigned to mate@example.com",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit newest first:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	if _, err := w.st.ResolveConversation(ctx, w.acc, w.ben, w.owner); err != nil {
		t.Fatal(err)
	}
	w.write(t, "wamid.B2", "15550000002", "Ben Okafor", "still there?")
	if r, err := w.st.InboxConversation(ctx, w.acc, w.ben); err != nil || r.ResolvedAt != nil || r.UnreadCount != 2 {
		t.Fatalf("a customer message reopens: %+v %v", r, err)
	}

	other, _ := w.st.CreateAccount(ctx, "beta", "b@example.com", "beta-1")
	stranger, _ := w.st.CreateUser(ctx, other.ID, "s@example.com", "x", store.RoleOwner)
	if _, err := w.st.AssignConversation(ctx, w.acc, w.cy, w.owner, stranger.ID); !errors.Is(err, store.ErrNotMember) {
		t.Fatalf("a non-member is assigned: %v", err)
	}
	for _, f := range []func() (bool, error){
		func() (bool, error) { return w.st.AssignConversation(ctx, other.ID, w.cy, stranger.ID, 0) },
		func() (bool, error) { return w.st.ResolveConversation(ctx, other.ID, w.cy, stranger.ID) },
		func() (bool, error) { return w.st.ReopenConversation(ctx, other.ID, w.cy, stranger.ID) },
	} {
		if _, err := f(); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another workspace's conversation: %v", err)
		}
	}
	if _, err := w.st.AssignConversation(ctx, w.acc, w.cy, w.owner, w.mate); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.RemoveMember(ctx, w.acc, w.mate); err != nil {
		t.Fatal(err)
	}
	if r, err := w.st.InboxConversation(ctx, w.acc, w.cy); err != nil || r.AssigneeID != nil {
		t.Fatalf("a removed member's conversation stays assigned: %+v %v", r, err)
	}
}

// Notes are kept per conversation, oldest first, with their author; each is audited without
// its text and makes the conversation the latest activity.
func TestConversationNotes(t *testing.T) {
	w := newInboxWorkspace(t)
	ctx := context.Background()
	for i, body := range []string{"called them", "wants a refund", "refund sent"} {
		n, err := w.st.AddConversationNote(ctx, w.acc, w.ana, w.mate, body)
		if err != nil || n.Body != body || n.UserEmail != "mate@example.com" || n.ConversationID != w.ana {
			t.Fatalf("note %d: %+v %v", i, n, err)
		}
	}
	ns, err := w.st.ConversationNotes(ctx, w.acc, w.ana, 2)
	if err != nil || len(ns) != 2 || ns[0].Body != "wants a refund" || ns[1].Body != "refund sent" {
		t.Fatalf("the newest two notes, oldest first: %+v %v", ns, err)
	}
	if ns, err := w.st.ConversationNotes(ctx, w.acc, w.ben, 10); err != nil || len(ns) != 0 {
		t.Fatalf("Ben's notes: %+v %v", ns, err)
	}
	if rows := w.list(t, store.InboxFilter{View: store.InboxAll}); rows[0].ConversationID != w.ana {
		t.Fatalf("a note is activity: %s", names(rows))
	}
	other, _ := w.st.CreateAccount(ctx, "beta", "b@example.com", "beta-1")
	if _, err := w.st.AddConversationNote(ctx, other.ID, w.ana, 0, "x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a note on another workspace's conversation: %v", err)
	}
	if ns, _ := w.st.ConversationNotes(ctx, other.ID, w.ana, 10); len(ns) != 0 {
		t.Fatalf("another workspace reads the notes: %+v", ns)
	}
	es, _ := w.st.AuditLog(ctx, w.acc, 0, 1)
	if len(es) != 1 || es[0].Action != store.AuditConversationNote || es[0].Detail != "11 characters" {
		t.Fatalf("the last audit entry %+v", es)
	}
}

// Reading up to a message leaves the customer messages after it unread, for every teammate;
// reading an earlier one changes nothing; a message of another conversation is refused. An
// answer's activity reorders the inbox.
func TestMarkConversationRead(t *testing.T) {
	w := newInboxWorkspace(t)
	ctx := context.Background()
	var first, second int64
	if err := w.st.DB().Get(&first, `SELECT id FROM messages WHERE platform_message_id = 'wamid.C1'`); err != nil {
		t.Fatal(err)
	}
	if err := w.st.DB().Get(&second, `SELECT id FROM messages WHERE platform_message_id = 'wamid.C2'`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id     int64
		unread int
	}{{first, 1}, {second, 0}, {first, 0}} {
		if n, err := w.st.MarkConversationRead(ctx, w.acc, w.cy, c.id); err != nil || n != c.unread {
			t.Fatalf("read up to %d: %d unread %v, want %d", c.id, n, err, c.unread)
		}
	}
	if _, err := w.st.MarkConversationRead(ctx, w.acc, w.ana, second); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another conversation's message: %v", err)
	}
	w.write(t, "wamid.C3", "15550000003", "Cy Tan", "third")
	if r, _ := w.st.InboxConversation(ctx, w.acc, w.cy); r.UnreadCount != 1 {
		t.Fatalf("after a new message Cy has %d unread", r.UnreadCount)
	}
	if n, err := w.st.InboxUnreadTotal(ctx, w.acc); err != nil || n != 3 {
		t.Fatalf("unread total %d %v", n, err)
	}
	if err := w.st.RecordConversationAnswer(ctx, w.acc, w.ana); err != nil {
		t.Fatal(err)
	}
	if rows := w.list(t, store.InboxFilter{View: store.InboxAll}); rows[0].ConversationID != w.ana {
		t.Fatalf("an answer is activity: %s", names(rows))
	}
	other, _ := w.st.CreateAccount(ctx, "beta", "b@example.com", "beta-1")
	if err := w.st.RecordConversationAnswer(ctx, other.ID, w.ana); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another workspace's answer: %v", err)
	}
}
