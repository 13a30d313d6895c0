package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"
)

// The inbox's live change feed, for dashboards that poll it (the inbox and a thread). Every
// change an inbox row shows (a customer message, an answer, an assignment, a resolve or reopen,
// a note, a read that changes the unread count) sets the conversation's change_xid to the
// writing transaction's id (migration 000046). A poll's cursor is the previous poll's snapshot:
// its xmax and the transactions it saw running. A change the previous poll did not see was
// made by one of those or by a transaction from xmax on, so the poll reads the conversations
// whose change_xid is one of those or at least xmax: a change that commits late is still seen,
// and one seen is not reported again. Both are probes of conversations_changes_idx; an idle
// poll reads nothing else. When the snapshot saw more than inboxChangeRunningMax transactions
// running, the cursor keeps only the oldest of them (xmin) and the next poll reads from it:
// then a change may be reported twice, which the reader's re-read makes harmless.

// InboxChangeCursor is a position in the feed, encoded for a URL by String. The zero cursor
// asks only for the current position.
type InboxChangeCursor struct {
	From    uint64   // changes by this transaction and later ones
	Running []uint64 // and by these, which were running when the cursor was taken
}

// inboxChangeRunningMax bounds the cursor's list of running transactions.
const inboxChangeRunningMax = 64

// String encodes the cursor: From, then each running transaction, dot-separated.
func (c InboxChangeCursor) String() string {
	b := strconv.AppendUint(nil, c.From, 10)
	for _, x := range c.Running {
		b = append(b, '.')
		b = strconv.AppendUint(b, x, 10)
	}
	return string(b)
}

// ParseInboxChangeCursor reads a cursor written by String; "" is the zero cursor.
func ParseInboxChangeCursor(s string) (InboxChangeCursor, error) {
	if s == "" {
		return InboxChangeCursor{}, nil
	}
	parts := strings.Split(s, ".")
	if len(parts) > inboxChangeRunningMax+1 {
		return InboxChangeCursor{}, fmt.Errorf("inbox change cursor: too long")
	}
	var c InboxChangeCursor
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return InboxChangeCursor{}, fmt.Errorf("inbox change cursor %q: not a cursor", s)
		}
		if i == 0 {
			c.From = n
		} else {
			c.Running = append(c.Running, n)
		}
	}
	return c, nil
}

// InboxChangesMax is the most conversations one poll reports; beyond it the poll says Reload.
const InboxChangesMax = 200

// InboxChanges is what a poll of the feed found.
type InboxChanges struct {
	// ConversationIDs changed since the cursor, ascending (empty for a first poll).
	ConversationIDs []int64
	// Reload: more than InboxChangesMax conversations changed; the reader reloads its page
	// rather than re-reading each (ConversationIDs is then empty).
	Reload bool
	// Next is the cursor of the next poll.
	Next InboxChangeCursor
}

// InboxChanges returns the account's conversations changed since the cursor (none for the
// zero cursor, which only returns the current position) and the cursor of the next poll, in
// one statement.
func (s *Store) InboxChanges(ctx context.Context, accountID int64, since InboxChangeCursor) (InboxChanges, error) {
	running := make(pq.StringArray, len(since.Running))
	for i, x := range since.Running {
		running[i] = strconv.FormatUint(x, 10)
	}
	var r struct {
		Xmin    string         `db:"xmin"`
		Xmax    string         `db:"xmax"`
		Running pq.StringArray `db:"running"`
		IDs     pq.Int64Array  `db:"ids"`
	}
	err := s.getPrepared(ctx, &r, `SELECT pg_snapshot_xmin(s)::text AS xmin, pg_snapshot_xmax(s)::text AS xmax,
			ARRAY(SELECT x::text FROM pg_snapshot_xip(s) x LIMIT $5) AS running,
			ARRAY(SELECT id FROM conversations WHERE account_id = $1 AND $2::bigint > 0
					AND (change_xid >= $2::bigint::text::xid8 OR change_xid = ANY($3::text[]::xid8[]))
				ORDER BY id LIMIT $4) AS ids
		FROM pg_current_snapshot() s`, accountID, int64(since.From), running, InboxChangesMax+1, inboxChangeRunningMax+1)
	if err != nil {
		return InboxChanges{}, err
	}
	next, err := ParseInboxChangeCursor(strings.Join(append([]string{r.Xmax}, r.Running...), "."))
	if len(r.Running) > inboxChangeRunningMax {
		next, err = ParseInboxChangeCursor(r.Xmin)
	}
	if err != nil {
		return InboxChanges{}, err
	}
	c := InboxChanges{ConversationIDs: []int64(r.IDs), Next: next}
	if len(c.ConversationIDs) > InboxChangesMax {
		c.ConversationIDs, c.Reload = []int64{}, true
	}
	if c.ConversationIDs == nil {
		c.ConversationIDs = []int64{}
	}
	return c, nil
}

// InboxRowsInView returns those of the account's conversations ids that belong to the filter's
// view (View, and UserID for Mine, at Now; its search and paging are not applied), as the inbox
// lists them, latest activity first; the live stream sends them to the dashboards that show
// that view. It fails with an error for an unknown view or a Mine without a teammate, and when
// the database fails.
func (s *Store) InboxRowsInView(ctx context.Context, accountID int64, ids []int64, f InboxFilter) ([]InboxRow, error) {
	now := f.Now
	if now.IsZero() {
		now = time.Now()
	}
	args := []any{accountID, pq.Array(ids)}
	cond, err := inboxViewSQL(f, now, &args)
	if err != nil {
		return nil, err
	}
	rows := []InboxRow{}
	err = s.db.SelectContext(ctx, &rows, inboxRowSQL+` AND v.id = ANY($2::bigint[])`+cond+` ORDER BY v.last_activity_at DESC, v.id DESC`, args...)
	return rows, translate(err)
}
