package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/store"
)

// fakeFeed is a change feed in memory: a log of changed conversations per account, a position
// being 1000 plus the log's length (a smaller one reads the log from its start); it counts the
// reads, and fails the next rows reads while failRows is above 0.
type fakeFeed struct {
	mu       sync.Mutex
	reads    map[int64]int
	log      map[int64][]int64
	views    map[string]int // InboxRowsInView calls by view
	failRows int
}

func newFakeFeed() *fakeFeed {
	return &fakeFeed{reads: map[int64]int{}, log: map[int64][]int64{}, views: map[string]int{}}
}

func (f *fakeFeed) change(accountID int64, ids ...int64) {
	f.mu.Lock()
	f.log[accountID] = append(f.log[accountID], ids...)
	f.mu.Unlock()
}

func (f *fakeFeed) readsOf(accountID int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads[accountID]
}

func (f *fakeFeed) InboxChanges(_ context.Context, accountID int64, since store.InboxChangeCursor) (store.InboxChanges, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads[accountID]++
	log := f.log[accountID]
	c := store.InboxChanges{ConversationIDs: []int64{}, Next: store.InboxChangeCursor{From: uint64(1000 + len(log))}}
	if since.From != 0 {
		from := max(int(since.From)-1000, 0)
		c.ConversationIDs = append(c.ConversationIDs, log[from:]...)
	}
	return c, nil
}

func (f *fakeFeed) InboxRowsInView(_ context.Context, _ int64, ids []int64, fl store.InboxFilter) ([]store.InboxRow, error) {
	f.mu.Lock()
	f.views[fl.View]++
	fail := f.failRows > 0
	f.failRows--
	f.mu.Unlock()
	if fail {
		return nil, errors.New("rows: the database failed")
	}
	rows := []store.InboxRow{}
	for _, id := range ids {
		rows = append(rows, store.InboxRow{ConversationID: id, Name: "Customer", LastActivityAt: time.Unix(1700000000, 0)})
	}
	return rows, nil
}

func (f *fakeFeed) InboxUnreadTotal(context.Context, int64) (int, error) { return 3, nil }

// hubRig is a hub over a fake feed whose rows render as "<li>ID</li>", counting renders; its
// loop is not started (the tests call runOnce).
type hubRig struct {
	hub     *InboxHub
	feed    *fakeFeed
	renders int
}

func newHubRig(t *testing.T, buffer int) *hubRig {
	r := &hubRig{feed: newFakeFeed()}
	r.hub = newInboxHub(r.feed, func(_ *time.Location, rows []store.InboxRow, _ time.Time) ([]liveRow, error) {
		r.renders++
		out := []liveRow{}
		for _, row := range rows {
			out = append(out, liveRow{ID: row.ConversationID, HTML: "<li>row</li>"})
		}
		return out, nil
	}, LiveHubConfig{Buffer: buffer, Every: time.Hour, Clock: func() time.Time { return time.Unix(1700000000, 0) }})
	if err := r.hub.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.hub.Stop)
	return r
}

func (r *hubRig) open(t *testing.T, accountID int64, w liveWatch) *liveStream {
	t.Helper()
	s, first, err := r.hub.subscribe(context.Background(), accountID, store.InboxChangeCursor{From: 1}, w)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(first), `"unread":"3"`) {
		t.Fatalf("first event %q", first)
	}
	return s
}

// eventOf reads the data of the stream's next waiting event.
func eventOf(t *testing.T, s *liveStream) liveEvent {
	t.Helper()
	select {
	case b := <-s.events:
		data := string(b)[strings.Index(string(b), "data: ")+6:]
		var ev liveEvent
		if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &ev); err != nil {
			t.Fatalf("event %q: %v", b, err)
		}
		return ev
	default:
		t.Fatal("no event waiting")
	}
	return liveEvent{}
}

// One read of an account's feed reaches every stream of that account and no other account's;
// the changed rows of a view are read and rendered once for all the lists showing it.
func TestInboxHubFansOut(t *testing.T) {
	r := newHubRig(t, 4)
	utc := time.UTC
	lists := []*liveStream{r.open(t, 1, liveWatch{View: store.InboxAll, Patch: true, Zone: utc}),
		r.open(t, 1, liveWatch{View: store.InboxAll, Patch: true, Zone: utc}),
		r.open(t, 1, liveWatch{View: store.InboxAll, Patch: true, Zone: utc})}
	thread := r.open(t, 1, liveWatch{Zone: utc})
	other := r.open(t, 2, liveWatch{Zone: utc})
	r.feed.change(1, 7, 9)
	r.hub.runOnce(context.Background())
	for _, s := range lists {
		ev := eventOf(t, s)
		if len(ev.Changed) != 2 || len(ev.Rows) != 2 || !ev.Patch || ev.Unread != "3" {
			t.Fatalf("list event %+v", ev)
		}
	}
	if ev := eventOf(t, thread); len(ev.Changed) != 2 || len(ev.Rows) != 0 || ev.Patch {
		t.Fatalf("thread event %+v", ev)
	}
	if len(other.events) != 0 {
		t.Fatal("another account's stream got the event")
	}
	if r.renders != 1 || r.feed.views[store.InboxAll] != 1 {
		t.Fatalf("%d renders and %d row reads for one view, want 1 and 1", r.renders, r.feed.views[store.InboxAll])
	}
	// Nothing changed: nothing is sent.
	r.hub.runOnce(context.Background())
	if len(lists[0].events) != 0 || len(thread.events) != 0 {
		t.Fatal("an event without a change")
	}
}

// An account without open streams is not read; it is while a stream is open, and no longer
// once its last stream closed.
func TestInboxHubIdleAccountNotRead(t *testing.T) {
	r := newHubRig(t, 4)
	r.hub.runOnce(context.Background())
	if n := r.feed.readsOf(5); n != 0 {
		t.Fatalf("%d reads of an account nobody watches", n)
	}
	s := r.open(t, 5, liveWatch{Zone: time.UTC})
	base := r.feed.readsOf(5) // the subscription's own read
	r.hub.runOnce(context.Background())
	r.hub.runOnce(context.Background())
	if n := r.feed.readsOf(5) - base; n != 2 {
		t.Fatalf("%d reads in two passes with a stream open", n)
	}
	r.hub.unsubscribe(s)
	base = r.feed.readsOf(5)
	r.hub.runOnce(context.Background())
	if n := r.feed.readsOf(5) - base; n != 0 {
		t.Fatalf("%d reads after the last stream closed", n)
	}
	if len(r.hub.accounts) != 0 {
		t.Fatalf("the hub keeps %d accounts", len(r.hub.accounts))
	}
}

// A stream whose events are not taken is told to reload when its buffer is full; the hub does
// not wait for it, and the other streams get every event.
func TestInboxHubSlowClientGetsReload(t *testing.T) {
	r := newHubRig(t, 2)
	slow := r.open(t, 1, liveWatch{Zone: time.UTC})
	fast := r.open(t, 1, liveWatch{Zone: time.UTC})
	for i := range 5 {
		r.feed.change(1, int64(i+1))
		done := make(chan struct{})
		go func() { r.hub.runOnce(context.Background()); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second): // a deadlock guard, not a speed goal
			t.Fatal("the hub waited for a slow stream")
		}
		if ev := eventOf(t, fast); len(ev.Changed) != 1 || ev.Changed[0] != int64(i+1) {
			t.Fatalf("fast stream's event %d: %+v", i, ev)
		}
	}
	select {
	case <-slow.behind:
	default:
		t.Fatal("the slow stream was not told to reload")
	}
	if len(slow.events) != 2 {
		t.Fatalf("the slow stream holds %d events, want its buffer's 2", len(slow.events))
	}
}

// Close (the server's shutdown) ends every open stream and refuses new ones; Stop is
// idempotent.
func TestInboxHubShutdownEndsStreams(t *testing.T) {
	r := newHubRig(t, 2)
	a := r.open(t, 1, liveWatch{Zone: time.UTC})
	b := r.open(t, 2, liveWatch{Zone: time.UTC})
	r.hub.Close()
	for _, s := range []*liveStream{a, b} {
		select {
		case <-s.end:
		default:
			t.Fatal("a stream is still open after Close")
		}
	}
	if _, _, err := r.hub.subscribe(context.Background(), 1, store.InboxChangeCursor{}, liveWatch{}); !errors.Is(err, errLiveClosed) {
		t.Fatalf("subscribe after Close: %v", err)
	}
	r.hub.unsubscribe(a)
	r.hub.Stop()
	r.hub.Stop()
}

// A pass whose read of rows fails hands out nothing and keeps the account's position: the next
// pass reads the same changes again and every stream gets them.
func TestInboxHubFailedReadKeepsTheChanges(t *testing.T) {
	r := newHubRig(t, 4)
	list := r.open(t, 1, liveWatch{View: store.InboxAll, Patch: true, Zone: time.UTC})
	thread := r.open(t, 1, liveWatch{Zone: time.UTC})
	r.feed.change(1, 4)
	r.feed.failRows = 1
	r.hub.runOnce(context.Background())
	if len(list.events) != 0 || len(thread.events) != 0 {
		t.Fatal("a pass that failed handed out events")
	}
	r.hub.runOnce(context.Background())
	if ev := eventOf(t, list); len(ev.Changed) != 1 || ev.Changed[0] != 4 || len(ev.Rows) != 1 {
		t.Fatalf("list event after the failure: %+v", ev)
	}
	if ev := eventOf(t, thread); len(ev.Changed) != 1 || ev.Changed[0] != 4 {
		t.Fatalf("thread event after the failure: %+v", ev)
	}
}
