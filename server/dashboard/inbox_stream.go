package dashboard

import (
	"errors"
	"net/http"
	"time"

	"gateway/store"
)

// The inbox's live stream: GET /dashboard/live/inbox/stream answers with server-sent events
// (text/event-stream) fed by the account's reader in the hub (inbox_hub.go). inbox.js opens it
// with EventSource on every signed-in page (same origin: the CSP's connect-src 'self' covers
// it) and falls back to polling liveInbox when it cannot.
//
//   - Query: since (the page's feed position; a reconnecting EventSource's Last-Event-ID wins
//     over it), view (the list's view, "" on other pages) and patch=1 (the list is the view's
//     first page without a search, so rows can be put in place).
//   - Events: "change" (liveEvent, with the position it brings the page to as its id), first at
//     once (what changed since the page's position, and the badge), then whenever the account's
//     conversations change; "reload" when the page fell behind (its events did not fit the
//     stream's buffer): it fetches what it shows again.
//   - A comment line every LiveHeartbeat keeps proxies from closing an idle stream.
//   - The stream ends after LiveLifetime, or when the session would expire if sooner, and when
//     the server shuts down: EventSource then reconnects by itself after a moment, and that new
//     request checks the session again (a session that ended gets the sign-in redirect, which
//     EventSource takes as a failure: the page stops following).
//   - The server's read and write deadlines (for ordinary requests) are lifted for the stream
//     and each write gets its own: an expired read deadline would cancel the request.

// Stream timing.
const (
	// LiveHeartbeat is how often an idle stream sends a comment.
	LiveHeartbeat = 15 * time.Second
	// LiveLifetime is how long one stream lasts before the browser reconnects.
	LiveLifetime = 5 * time.Minute
	// liveWriteTimeout bounds one write to the client.
	liveWriteTimeout = 10 * time.Second
	// liveRetry is the reconnection delay EventSource is told to use, in milliseconds.
	liveRetry = "2000"
)

// liveReload is the event that tells a page it fell behind.
var liveReload = []byte("event: reload\ndata: {}\n\n")

// liveInboxStream serves the stream (see above). A malformed position is a 400; a hub that is
// not running (shutting down) a 503, which makes inbox.js poll instead.
func (d *Dashboard) liveInboxStream(w http.ResponseWriter, r *http.Request, s *store.Session) {
	q := r.URL.Query()
	pos := q.Get("since")
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		pos = id
	}
	since, err := store.ParseInboxChangeCursor(pos)
	if err != nil {
		http.Error(w, "malformed cursor", http.StatusBadRequest)
		return
	}
	watch := liveWatch{UserID: s.UserID, Zone: viewerZone(r)}
	if v := q.Get("view"); v != "" {
		if _, ok := inboxViewWords[v]; ok {
			watch.View, watch.Patch = v, q.Get("patch") == "1"
		}
	}
	if d.cfg.Store == nil {
		http.Error(w, "live inbox unavailable", http.StatusServiceUnavailable)
		return
	}
	st, first, err := d.live.subscribe(r.Context(), s.AccountID, since, watch)
	switch {
	case errors.Is(err, errLiveClosed):
		http.Error(w, "live inbox unavailable", http.StatusServiceUnavailable)
		return
	case err != nil:
		d.serverError(w, r, err)
		return
	}
	defer d.live.unsubscribe(st)

	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{}) // the request was read; see above
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no") // nginx: pass events on at once
	w.WriteHeader(http.StatusOK)
	write := func(b ...[]byte) bool {
		rc.SetWriteDeadline(time.Now().Add(liveWriteTimeout))
		for _, p := range b {
			if _, err := w.Write(p); err != nil {
				return false
			}
		}
		return rc.Flush() == nil
	}
	if !write([]byte("retry: "+liveRetry+"\n\n"), first) {
		return
	}
	life := LiveLifetime
	if left := sessionLeft(*s, d.cfg.Clock()); left < life {
		life = max(left, time.Second)
	}
	end := time.NewTimer(life)
	defer end.Stop()
	beat := time.NewTicker(LiveHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-st.end:
			return
		case <-end.C:
			return
		case <-st.behind:
			// Whatever is waiting is superseded by the page's fetch.
			for len(st.events) > 0 {
				<-st.events
			}
			if !write(liveReload) {
				return
			}
		case ev := <-st.events:
			if !write(ev) {
				return
			}
		case <-beat.C:
			if !write([]byte(": keep-alive\n\n")) {
				return
			}
		}
	}
}

// sessionLeft is how long the session has before it expires at now (idle or absolute).
func sessionLeft(s store.Session, now time.Time) time.Duration {
	return min(s.LastSeenAt.Add(SessionIdle).Sub(now), s.CreatedAt.Add(SessionAbsolute).Sub(now))
}
