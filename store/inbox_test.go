package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// inboxWorkspace is an account with a second member, and the conversations of three customers
// who wrote in the order Ana, Ben, Cy (Cy twice), each message recorded at its own time.
type inboxWorkspace struct {
	st           *store.Store
	acc          int64
	owner, mate  int64
	ana, ben, cy int64 // conversation ids
}

func newInboxWorkspace(t *testing.T) inboxWorkspace {
	t.Helper()
	st := storetest.New(t)
	ctx := context.Background()
	a, err := st.CreateAccount(ctx, "acme", "a@example.com", "acme-1")
	if err != nil {
		t.Fatal(err)
	}
	owner, err := st.CreateUser(ctx, a.ID, "owner@example.com", "x", store.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	mate, err := st.CreateUser(ctx, a.ID, "mate@example.com", "x", store.RoleDeveloper)
	if err != nil {
		t.Fatal(err)
	}
	w := inboxWorkspace{st: st, acc: a.ID, owner: owner.ID, mate: mate.ID}
	w.ana = w.write(t, "wamid.A1", "15550000001", "Ana Souza", "hello")
	w.ben = w.write(t, "wamid.B1", "15550000002", "Ben Okafor", "price?")
	w.write(t, "wamid.C1", "15550000003", "Cy Tan", "first")
	w.cy = w.write(t, "wamid.C2", "15550000003", "Cy Tan", "second")
	return w
}

// write records a customer's text message and returns its conversation.
func (w inboxWorkspace) write(t *testing.T, wamid, from, name, text string) int64 {
	t.Helper()
	r, err := w.st.RecordInbound(context.Background(), w.acc, inbound(wamid, from, name, text))
	if err != nil {
		t.Fatal(err)
	}
	return r.ConversationID
}

func (w inboxWorkspace) list(t *testing.T, f store.InboxFilter) []store.InboxRow {
	t.Helper()
	if f.Now.IsZero() {
		f.Now = t0.Add(time.Hour)
	}
	p, err := w.st.ListInbox(context.Background(), w.acc, f)
	if err != nil {
		t.Fatal(err)
	}
	return p.Rows
}

func names(rows []store.InboxRow) string {
	var s []string
	for _, r := range rows {
		s = append(s, fmt.Sprintf("%s:%d", r.Name, r.UnreadCount))
	}
	return fmt.Sprint(s)
}

// The inbox lists the conversations customers wrote in, latest activity first, with their
// unread counts and last message; a template send neither adds a conversation nor reorders
// one, though it is the thread's last message; another workspace sees none of them.
func TestListInboxByActivity(t *testing.T) {
	w := newInboxWorkspace(t)
	ctx := context.Background()
	if _, err := w.st.BeginSend(ctx, w.acc, sendIn("15550000009", "Dee", "")); err != nil {
		t.Fatal(err)
	}
	tpl, err := w.st.BeginSend(ctx, w.acc, sendIn("15550000001", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	rows := w.list(t, store.InboxFilter{View: store.InboxAll})
	if got := names(rows); got != "[Cy Tan:2 Ben Okafor:1 Ana Souza:1]" {
		t.Fatalf("inbox %s", got)
	}
	cy := rows[0]
	if cy.LastMessageText != "second" || cy.LastMessageDirection != "in" || cy.LastMessageType != "text" ||
		cy.Mobile == nil || *cy.Mobile != "15550000003" || !cy.WindowOpen(t0.Add(time.Hour)) || cy.WindowOpen(t0.Add(25*time.Hour)) {
		t.Fatalf("Cy's row %+v", cy)
	}
	if ana := rows[2]; ana.LastMessageID != tpl.MessageID || ana.LastMessageType != "template" || ana.LastMessageText != "" {
		t.Fatalf("Ana's last message is the template: %+v", ana)
	}
	other, _ := w.st.CreateAccount(ctx, "beta", "b@example.com", "beta-1")
	p, err := w.st.ListInbox(ctx, other.ID, store.InboxFilter{View: store.InboxAll})
	if err != nil || len(p.Rows) != 0 {
		t.Fatalf("another workspace's inbox %+v %v", p, err)
	}
	if _, err := w.st.InboxConversation(ctx, other.ID, w.cy); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another workspace's conversation: %v", err)
	}
	if _, err := w.st.InboxConversation(ctx, w.acc, tpl.ConversationID+1000); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no conversation: %v", err)
	}
	if n, err := w.st.InboxUnreadTotal(ctx, w.acc); err != nil || n != 3 {
		t.Fatalf("unread total %d %v", n, err)
	}
}

// Keyset pages of one row each walk the view in order, and the cursor survives its string.
func TestListInboxPages(t *testing.T) {
	w := newInboxWorkspace(t)
	ctx := context.Background()
	var got []int64
	var cur store.InboxCursor
	for i := 0; i < 5; i++ {
		p, err := w.st.ListInbox(ctx, w.acc, store.InboxFilter{View: store.InboxAll, Limit: 1, Before: cur})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Rows {
			got = append(got, r.ConversationID)
		}
		if p.Next.ID == 0 {
			break
		}
		if cur, err = store.ParseInboxCursor(p.Next.String()); err != nil || cur != p.Next {
			t.Fatalf("cursor %v round trip %v %v", p.Next, cur, err)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint([]int64{w.cy, w.ben, w.ana}) {
		t.Fatalf("pages %v", got)
	}
	if _, err := store.ParseInboxCursor("x.1"); err == nil {
		t.Fatal("a bad cursor parses")
	}
	if _, err := w.st.ListInbox(ctx, w.acc, store.InboxFilter{View: "nope"}); err == nil {
		t.Fatal("an unknown view lists")
	}
}

// Each view keeps its conversations: Mine and Unassigned by assignee, Window open by the
// window at Now, Resolved; search by name, number, username and user id.
func TestListInboxViewsAndSearch(t *testing.T) {
	w := newInboxWorkspace(t)
	ctx := context.Background()
	if _, err := w.st.AssignConversation(ctx, w.acc, w.ben, w.owner, w.mate); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.ResolveConversation(ctx, w.acc, w.ana, w.owner); err != nil {
		t.Fatal(err)
	}
	late := inbound("wamid.E1", "15550000004", "Eve Late", "later")
	late.SentAt = t0.Add(30 * time.Hour)
	late.UserID, late.Username = "US.eve1", "evelyn"
	if _, err := w.st.RecordInbound(ctx, w.acc, late); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(26 * time.Hour)
	for _, c := range []struct {
		f    store.InboxFilter
		want string
	}{
		{store.InboxFilter{View: store.InboxAll}, "[Eve Late:1 Ben Okafor:1 Cy Tan:2]"},
		{store.InboxFilter{View: store.InboxMine, UserID: w.mate}, "[Ben Okafor:1]"},
		{store.InboxFilter{View: store.InboxMine, UserID: w.owner}, "[]"},
		{store.InboxFilter{View: store.InboxUnassigned}, "[Eve Late:1 Cy Tan:2]"},
		{store.InboxFilter{View: store.InboxResolved}, "[Ana Souza:1]"},
		{store.InboxFilter{View: store.InboxWindowOpen, Now: at}, "[Eve Late:1]"},
		{store.InboxFilter{View: store.InboxWindowOpen, Now: t0.Add(55 * time.Hour)}, "[]"},
		{store.InboxFilter{View: store.InboxAll, Search: "okaf"}, "[Ben Okafor:1]"},
		{store.InboxFilter{View: store.InboxAll, Search: "+1 555 000-0003"}, "[Cy Tan:2]"},
		{store.InboxFilter{View: store.InboxAll, Search: "EVELYN"}, "[Eve Late:1]"},
		{store.InboxFilter{View: store.InboxAll, Search: "US.eve1"}, "[Eve Late:1]"},
		{store.InboxFilter{View: store.InboxAll, Search: "100%"}, "[]"},
		{store.InboxFilter{View: store.InboxResolved, Search: "ana"}, "[Ana Souza:1]"},
	} {
		if got := names(w.list(t, c.f)); got != c.want {
			t.Errorf("%+v: %s, want %s", c.f, got, c.want)
		}
	}
	if _, err := w.st.ListInbox(ctx, w.acc, store.InboxFilter{View: store.InboxMine}); err == nil {
		t.Fatal("Mine without a teammate lists")
	}
}
