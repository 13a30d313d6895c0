package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"gateway/store"
)

// The inbox's live hub: one reader of the change feed (store.InboxChanges) per account per
// gateway process, shared by every open live stream of that account (inbox_stream.go). Every
// LiveEvery it reads the feed of each account that has open streams, from where its previous
// read ended; an account with no open stream is not read at all, and a read that finds nothing
// is the feed's two index probes. When conversations changed it reads the unread badge once and,
// for each view that open lists show on their first page, the changed conversations of that
// view once, renders each row once per time zone, and hands every stream its event. A stream
// that has LiveBuffer events waiting is not waited for: it is told to reload instead (its page
// fetches what it shows again), so one slow client never holds up the others. No NOTIFY: the
// feed is in the database, so each gateway process runs its own hub over it and they need
// nothing from each other, and PgBouncer in transaction mode is fine (no session state).

// Defaults of the hub.
const (
	// LiveEvery is how often the hub reads the feed of an account with open streams.
	LiveEvery = 200 * time.Millisecond
	// LiveBuffer is how many events a stream may have waiting before it is told to reload.
	LiveBuffer = 16
	// liveReadTimeout bounds one account's read (feed, badge, rows).
	liveReadTimeout = 5 * time.Second
	// liveParallel is how many accounts one pass reads at once.
	liveParallel = 4
)

// errLiveClosed: the hub is not running (not started, stopped, or the server is shutting down).
var errLiveClosed = errors.New("the live inbox is not running")

// liveFeed is what the hub reads (the store).
type liveFeed interface {
	InboxChanges(ctx context.Context, accountID int64, since store.InboxChangeCursor) (store.InboxChanges, error)
	InboxRowsInView(ctx context.Context, accountID int64, ids []int64, f store.InboxFilter) ([]store.InboxRow, error)
	InboxUnreadTotal(ctx context.Context, accountID int64) (int, error)
}

// LiveHubConfig configures an InboxHub; zero values take the defaults.
type LiveHubConfig struct {
	Every  time.Duration    // LiveEvery
	Buffer int              // LiveBuffer
	Clock  func() time.Time // time.Now: the time rows and the Window open view are read at
	Logger *slog.Logger
}

// InboxHub is the live inbox's background reader (see above). Start runs it; Stop (or Close,
// which the HTTP server calls when it shuts down) ends every open stream and refuses new ones.
type InboxHub struct {
	feed   liveFeed
	render func(zone *time.Location, rows []store.InboxRow, now time.Time) ([]liveRow, error)
	cfg    LiveHubConfig
	log    *slog.Logger

	mu       sync.Mutex
	accounts map[int64]*liveAccount
	running  bool

	started bool
	cancel  context.CancelFunc
	done    chan struct{}
	once    sync.Once
}

// liveAccount is one account's position in the feed and its open streams.
type liveAccount struct {
	// read is held by a read of the feed and by a subscription's first read, so that a new
	// stream misses nothing between its page's position and the hub's.
	read    sync.Mutex
	cursor  store.InboxChangeCursor // guarded by read
	streams map[*liveStream]struct{}
	joining int // subscriptions under way (the entry is kept for them)
}

// liveWatch is what one stream shows: a list of a view (View "" for a thread or another page)
// whose rows can be put in place (Patch), for the teammate UserID, with times in Zone.
type liveWatch struct {
	View   string
	Patch  bool
	UserID int64
	Zone   *time.Location
}

// liveStream is one open stream's mailbox.
type liveStream struct {
	accountID int64
	watch     liveWatch
	events    chan []byte   // events ready to write
	behind    chan struct{} // signalled when an event did not fit: the page reloads
	end       chan struct{} // closed when the hub ends the stream
	ended     bool          // guarded by the hub's mu
}

// liveRow is one rendered conversation row of an event.
type liveRow struct {
	ID       int64  `json:"id"`
	Activity string `json:"activity"`
	HTML     string `json:"html"`
}

// liveEvent is an event's data: the changed conversations (none for a first event with nothing
// to catch up), whether the page should reload (more changed than the feed lists), the unread
// badge, and for a list whose rows can be patched, the changed conversations of its view,
// rendered (Rows), the others of Changed having left it.
type liveEvent struct {
	Changed []int64   `json:"changed"`
	Reload  bool      `json:"reload"`
	Unread  string    `json:"unread"`
	Rows    []liveRow `json:"rows,omitempty"`
	Patch   bool      `json:"patch"`
}

// newInboxHub makes the dashboard's hub over its store; render puts rows in the list's markup.
func newInboxHub(feed liveFeed, render func(*time.Location, []store.InboxRow, time.Time) ([]liveRow, error), cfg LiveHubConfig) *InboxHub {
	if cfg.Every <= 0 {
		cfg.Every = LiveEvery
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = LiveBuffer
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &InboxHub{feed: feed, render: render, cfg: cfg, log: cfg.Logger.With("component", "live inbox"),
		accounts: map[int64]*liveAccount{}}
}

// Start runs the hub's loop: a pass every Every until Stop. It fails when already started.
func (h *InboxHub) Start(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started {
		return errors.New("live inbox: already started")
	}
	h.started, h.running = true, true
	ctx, h.cancel = context.WithCancel(ctx)
	h.done = make(chan struct{})
	go func() {
		defer close(h.done)
		t := time.NewTicker(h.cfg.Every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			h.runOnce(ctx)
		}
	}()
	return nil
}

// Stop ends every open stream, stops the loop and waits for it. It is idempotent, and a no-op
// before Start.
func (h *InboxHub) Stop() {
	h.Close()
	h.mu.Lock()
	started := h.started
	h.mu.Unlock()
	if !started {
		return
	}
	h.once.Do(func() {
		h.cancel()
		<-h.done
	})
}

// Close ends every open stream and refuses new ones (the loop goes on idle until Stop). The
// HTTP server calls it when it starts shutting down: open streams would otherwise hold the
// shutdown until its deadline. It is idempotent.
func (h *InboxHub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.running = false
	for _, a := range h.accounts {
		for s := range a.streams {
			h.endLocked(s)
		}
	}
}

// endLocked ends s once. The caller holds mu.
func (h *InboxHub) endLocked(s *liveStream) {
	if !s.ended {
		s.ended = true
		close(s.end)
	}
}

// subscribe opens a stream of the account for watch. Its first event says what changed since
// the page's position (since; the zero cursor catches nothing up) and the unread badge, with
// the position as its id. It fails with errLiveClosed when the hub is not running, and when the
// database fails.
func (h *InboxHub) subscribe(ctx context.Context, accountID int64, since store.InboxChangeCursor, watch liveWatch) (*liveStream, []byte, error) {
	h.mu.Lock()
	if !h.running {
		h.mu.Unlock()
		return nil, nil, errLiveClosed
	}
	a := h.accounts[accountID]
	if a == nil {
		a = &liveAccount{streams: map[*liveStream]struct{}{}}
		h.accounts[accountID] = a
	}
	a.joining++
	h.mu.Unlock()
	joined := false
	defer func() {
		if !joined {
			h.mu.Lock()
			a.joining--
			h.forgetIdleLocked(accountID, a)
			h.mu.Unlock()
		}
	}()

	a.read.Lock()
	defer a.read.Unlock()
	ctx, cancel := context.WithTimeout(ctx, liveReadTimeout)
	defer cancel()
	ch, err := h.feed.InboxChanges(ctx, accountID, since)
	if err != nil {
		return nil, nil, err
	}
	if a.cursor.From == 0 {
		// The account's first stream: the hub reads on from here. (A later stream's read was
		// taken after the hub's last one, which the hub's next read starts from: nothing is
		// missed between them, and what both report is reported twice, harmlessly.)
		a.cursor = ch.Next
	}
	ev := liveEvent{Changed: ch.ConversationIDs, Reload: ch.Reload, Unread: h.badge(ctx, accountID)}
	first, err := eventBytes(ch.Next.String(), ev)
	if err != nil {
		return nil, nil, err
	}
	s := &liveStream{accountID: accountID, watch: watch, events: make(chan []byte, h.cfg.Buffer),
		behind: make(chan struct{}, 1), end: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	a.joining--
	joined = true
	if !h.running {
		h.forgetIdleLocked(accountID, a)
		return nil, nil, errLiveClosed
	}
	a.streams[s] = struct{}{}
	return s, first, nil
}

// unsubscribe closes the stream; the account's entry goes with its last stream.
func (h *InboxHub) unsubscribe(s *liveStream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.endLocked(s)
	if a := h.accounts[s.accountID]; a != nil {
		delete(a.streams, s)
		h.forgetIdleLocked(s.accountID, a)
	}
}

// forgetIdleLocked drops the account's entry when it has no stream and none is joining. The
// caller holds mu.
func (h *InboxHub) forgetIdleLocked(accountID int64, a *liveAccount) {
	if len(a.streams) == 0 && a.joining == 0 && h.accounts[accountID] == a {
		delete(h.accounts, accountID)
	}
}

// runOnce reads the feed of every account with open streams, liveParallel at a time, and hands
// out what changed.
func (h *InboxHub) runOnce(ctx context.Context) {
	h.mu.Lock()
	ids := make([]int64, 0, len(h.accounts))
	accounts := make([]*liveAccount, 0, len(h.accounts))
	for id, a := range h.accounts {
		if len(a.streams) > 0 {
			ids, accounts = append(ids, id), append(accounts, a)
		}
	}
	h.mu.Unlock()
	sem := make(chan struct{}, liveParallel)
	var wg sync.WaitGroup
	for i, a := range accounts {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := h.readAccount(ctx, ids[i], a); err != nil && ctx.Err() == nil {
				h.log.WarnContext(ctx, "read the inbox feed", "account_id", ids[i], "error", err.Error())
			}
		}()
	}
	wg.Wait()
}

// readAccount reads one account's feed from its position and, when conversations changed,
// hands each of its streams its event.
func (h *InboxHub) readAccount(ctx context.Context, accountID int64, a *liveAccount) error {
	a.read.Lock()
	defer a.read.Unlock()
	ctx, cancel := context.WithTimeout(ctx, liveReadTimeout)
	defer cancel()
	ch, err := h.feed.InboxChanges(ctx, accountID, a.cursor)
	if err != nil {
		return err
	}
	if len(ch.ConversationIDs) == 0 && !ch.Reload {
		a.cursor = ch.Next
		return nil
	}
	h.mu.Lock()
	streams := make([]*liveStream, 0, len(a.streams))
	for s := range a.streams {
		streams = append(streams, s)
	}
	h.mu.Unlock()

	// One event per kind of watch: the rows of a view are read once, rendered once per zone.
	id := ch.Next.String()
	base := liveEvent{Changed: ch.ConversationIDs, Reload: ch.Reload, Unread: h.badge(ctx, accountID)}
	now := h.cfg.Clock()
	type viewKey struct {
		view string
		user int64
	}
	rows := map[viewKey][]store.InboxRow{}
	events := map[liveWatch][]byte{}
	mail := make([][]byte, len(streams))
	for i, s := range streams {
		w := s.watch
		if !w.Patch || ch.Reload {
			w = liveWatch{}
		}
		if w.View != store.InboxMine {
			w.UserID = 0
		}
		ev, ok := events[w]
		if !ok {
			e := base
			if w.Patch {
				k := viewKey{w.View, w.UserID}
				vr, ok := rows[k]
				if !ok {
					if vr, err = h.feed.InboxRowsInView(ctx, accountID, ch.ConversationIDs, store.InboxFilter{View: w.View, UserID: w.UserID, Now: now}); err != nil {
						return err
					}
					rows[k] = vr
				}
				if e.Rows, err = h.render(w.Zone, vr, now); err != nil {
					return err
				}
				e.Patch = true
			}
			if ev, err = eventBytes(id, e); err != nil {
				return err
			}
			events[w] = ev
		}
		mail[i] = ev
	}
	// Every event is ready: only now is the position moved on (a failed read of rows or a
	// failed render leaves it, and the next pass reads the same changes again) and the events
	// handed out.
	a.cursor = ch.Next
	for i, s := range streams {
		h.deliver(s, mail[i])
	}
	return nil
}

// deliver puts the event in the stream's mailbox, or, when it is full, tells the stream to
// reload: the hub never waits for a client.
func (h *InboxHub) deliver(s *liveStream, ev []byte) {
	select {
	case s.events <- ev:
	default:
		select {
		case s.behind <- struct{}{}:
		default:
		}
	}
}

// badge is the unread badge's words (unreadWords).
func (h *InboxHub) badge(ctx context.Context, accountID int64) string {
	return unreadWords(h.feed.InboxUnreadTotal(ctx, accountID))
}

// eventBytes is an event as the stream writes it: its id (the feed position it brings the page
// to), its type and its data on one line.
func eventBytes(id string, e liveEvent) ([]byte, error) {
	if e.Changed == nil {
		e.Changed = []int64{}
	}
	data, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("live inbox event: %w", err)
	}
	var b bytes.Buffer
	b.Grow(len(data) + len(id) + 32)
	b.WriteString("id: ")
	b.WriteString(id)
	b.WriteString("\nevent: change\ndata: ")
	b.Write(data)
	b.WriteString("\n\n")
	return b.Bytes(), nil
}
