package domain

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// inboxFixture is a workspace with two members and a stranger (a member of another), and the
// conversation of a customer who wrote once.
type inboxFixture struct {
	st                     *store.Store
	in                     Inbox
	acc                    int64
	owner, mate, stranger  int64
	conv, msg, otherAccMsg int64
}

func newInboxFixture(t *testing.T) inboxFixture {
	t.Helper()
	st, ctx := storetest.New(t), context.Background()
	a, err := st.CreateAccount(ctx, "acme", "a@example.com", fmt.Sprintf("acme-%d", time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.CreateAccount(ctx, "beta", "b@example.com", fmt.Sprintf("beta-%d", time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	f := inboxFixture{st: st, in: Inbox{Store: st}, acc: a.ID}
	for _, u := range []struct {
		id    *int64
		acc   int64
		email string
	}{{&f.owner, a.ID, "owner@example.com"}, {&f.mate, a.ID, "mate@example.com"}, {&f.stranger, b.ID, "s@example.com"}} {
		user, err := st.CreateUser(ctx, u.acc, u.email, "x", store.RoleOwner)
		if err != nil {
			t.Fatal(err)
		}
		*u.id = user.ID
	}
	for i, acc := range []int64{a.ID, b.ID} {
		r, err := st.RecordInbound(ctx, acc, store.InboundMessage{PlatformMessageID: fmt.Sprintf("wamid.I%d", i), From: "15550000001",
			ProfileName: "Ana", Type: "text", SentAt: time.Now(), Destination: "15550009999",
			Content: json.RawMessage(`{"text":{"body":"hi"}}`)})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			f.conv, f.msg = r.ConversationID, r.MessageID
		} else {
			f.otherAccMsg = r.MessageID
		}
	}
	return f
}

func wantRefusal(t *testing.T, what string, err error, kind ErrorKind, field string) {
	t.Helper()
	se := AsSendError(err)
	if se == nil || se.Kind != kind || (field != "" && !se.Fields.Has(field)) {
		t.Fatalf("%s: %v (%+v), want kind %d on %q", what, err, se, kind, field)
	}
}

// The inbox's rules: an assignee is a member of the workspace; a note is not blank, is text,
// and holds at most NoteMaxLen characters (trimmed); resolve and reopen are idempotent; the
// message read must be the conversation's; another workspace's conversation is not found.
func TestInboxRules(t *testing.T) {
	f := newInboxFixture(t)
	ctx := context.Background()
	me := Actor{AccountID: f.acc, UserID: f.owner}
	_, err := f.in.Assign(ctx, me, f.conv, f.stranger)
	wantRefusal(t, "assign a stranger", err, KindInvalid, "assignee")
	if changed, err := f.in.Assign(ctx, me, f.conv, f.mate); err != nil || !changed {
		t.Fatalf("assign a member: %v %v", changed, err)
	}
	for _, body := range []string{"", "   \n", strings.Repeat("é", NoteMaxLen+1), "a\x00b"} {
		_, err := f.in.AddNote(ctx, me, f.conv, body)
		wantRefusal(t, fmt.Sprintf("note of %d bytes", len(body)), err, KindInvalid, "body")
	}
	n, err := f.in.AddNote(ctx, me, f.conv, "  "+strings.Repeat("é", NoteMaxLen)+"\n")
	if err != nil || n.Body != strings.Repeat("é", NoteMaxLen) {
		t.Fatalf("the longest note: %v", err)
	}
	for i, want := range []bool{true, false} {
		if changed, err := f.in.Resolve(ctx, me, f.conv); err != nil || changed != want {
			t.Fatalf("resolve %d: %v %v", i, changed, err)
		}
	}
	for i, want := range []bool{true, false} {
		if changed, err := f.in.Reopen(ctx, me, f.conv); err != nil || changed != want {
			t.Fatalf("reopen %d: %v %v", i, changed, err)
		}
	}
	if unread, err := f.in.MarkRead(ctx, me, f.conv, f.msg); err != nil || unread != 0 {
		t.Fatalf("read: %d %v", unread, err)
	}
	_, err = f.in.MarkRead(ctx, me, f.conv, f.otherAccMsg)
	wantRefusal(t, "read another's message", err, KindInvalid, "message_id")

	stranger := Actor{AccountID: f.acc + 1, UserID: f.stranger}
	if stranger.AccountID == f.acc {
		t.Fatal("fixture")
	}
	for name, do := range map[string]func() error{
		"assign":  func() error { _, err := f.in.Assign(ctx, stranger, f.conv, 0); return err },
		"resolve": func() error { _, err := f.in.Resolve(ctx, stranger, f.conv); return err },
		"reopen":  func() error { _, err := f.in.Reopen(ctx, stranger, f.conv); return err },
		"note":    func() error { _, err := f.in.AddNote(ctx, stranger, f.conv, "x"); return err },
		"read":    func() error { _, err := f.in.MarkRead(ctx, stranger, f.conv, f.msg); return err },
		"row":     func() error { _, err := f.in.Conversation(ctx, stranger, f.conv); return err },
	} {
		wantRefusal(t, name+" in another workspace", do(), KindNotFound, "")
	}
	_, err = f.in.List(ctx, me, store.InboxFilter{View: "everything"})
	wantRefusal(t, "an unknown view", err, KindInvalid, "view")
	p, err := f.in.List(ctx, Actor{AccountID: f.acc, UserID: f.mate}, store.InboxFilter{View: store.InboxMine})
	if err != nil || len(p.Rows) != 1 || p.Rows[0].AssigneeName != "mate@example.com" {
		t.Fatalf("the mate's Mine: %+v %v", p, err)
	}
	es, err := f.st.AuditLog(ctx, f.acc, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range es {
		actions = append(actions, e.Action)
	}
	if got := strings.Join(actions, " "); !strings.HasPrefix(got, "conversation.reopened conversation.resolved conversation.note_added conversation.assigned") {
		t.Fatalf("audit newest first: %s", got)
	}
}

// A sent answer makes its conversation the inbox's latest activity; an answer to a
// conversation the inbox does not have is not an error.
func TestAnsweredIsActivity(t *testing.T) {
	f := newInboxFixture(t)
	ctx := context.Background()
	before, err := f.st.InboxConversation(ctx, f.acc, f.conv)
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	s := NewSends(SendsConfig{Store: f.st, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	defer s.Close()
	s.answered(ctx, f.acc, f.conv)
	s.answered(ctx, f.acc, f.conv+1000)
	after, err := f.st.InboxConversation(ctx, f.acc, f.conv)
	if err != nil || !after.LastActivityAt.After(before.LastActivityAt) {
		t.Fatalf("activity %v then %v (%v)", before.LastActivityAt, after.LastActivityAt, err)
	}
	if buf.Len() != 0 {
		t.Fatalf("logged: %s", buf.String())
	}
}
