package store

import (
	"context"
	"strconv"
	"strings"

	"github.com/lib/pq"
)

// CountMessages returns how many of the account's messages match f (its After, Limit and
// Detailed are ignored), counting at most upTo (1 or more): past that the count stops, so that a
// broad filter over a large account costs a bounded read; capped tells the caller the total is
// at least upTo. It fails only when the database does.
func (s *Store) CountMessages(ctx context.Context, accountID int64, f MessageFilter, upTo int) (n int, capped bool, err error) {
	upTo = max(upTo, 1)
	where, args := messageListWhere(accountID, f)
	args = append(args, upTo+1)
	q := `SELECT count(*) FROM (SELECT 1 FROM messages m WHERE ` + strings.Join(where, " AND ") +
		` LIMIT $` + strconv.Itoa(len(args)) + `) m`
	if err := s.readMayLag(ctx, true, &n, q, args...); err != nil {
		return 0, false, translate(err)
	}
	if n > upTo {
		return upTo, true, nil
	}
	return n, false, nil
}

// MessageState is where one message stands: what a page that shows it needs to follow it.
type MessageState struct {
	ID        int64  `db:"id" json:"id"`
	Status    string `db:"status" json:"status"`
	ErrorCode *int   `db:"error_code" json:"error_code,omitempty"`
}

// MessageStates returns the status of each of the account's messages among ids (another
// account's ids, and unknown ones, are left out), in no particular order. It reads the
// primary: a page following a status must not see it go back. It fails only when the
// database does.
func (s *Store) MessageStates(ctx context.Context, accountID int64, ids []int64) ([]MessageState, error) {
	out := []MessageState{}
	if len(ids) == 0 {
		return out, nil
	}
	err := s.db.SelectContext(ctx, &out, `SELECT id, status, error_code FROM messages WHERE account_id = $1 AND id = ANY($2::bigint[])`, accountID, pq.Array(ids))
	return out, translate(err)
}
