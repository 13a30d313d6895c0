package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/lib/pq"
)

// Reads of a broadcast's progress: counts by state, the recipients page by page, and its use of
// the portfolio's budget.

// BroadcastCounts returns how many of the broadcast's recipients are in each state (states
// with none are absent), read from its counters (broadcast_progress.go).
func (s *Store) BroadcastCounts(ctx context.Context, accountID, id int64) (map[string]int, error) {
	c, err := s.broadcastCounters(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	delete(c, countedDelivered)
	delete(c, countedRead)
	return c, nil
}

// BroadcastRecipient is one stored recipient.
type BroadcastRecipient struct {
	ID             int64      `db:"id"`
	AccountID      int64      `db:"account_id"`
	BroadcastID    int64      `db:"broadcast_id"`
	Mobile         string     `db:"mobile"`
	UserID         string     `db:"user_id"`
	VariablesJSON  []byte     `db:"variables"`
	State          string     `db:"state"`
	Attempts       int        `db:"attempts"`
	MessageID      string     `db:"message_id"`
	ErrorCode      *int       `db:"error_code"`
	ErrorTitle     string     `db:"error_title"`
	RetryNotBefore *time.Time `db:"retry_not_before"`
	FinishedAt     *time.Time `db:"finished_at"`
}

// Variables decodes the recipient's variables.
func (r BroadcastRecipient) Variables() map[string]string {
	v := map[string]string{}
	_ = json.Unmarshal(r.VariablesJSON, &v) // the column is a JSON object by its CHECK
	return v
}

// BroadcastRecipients returns a page of the broadcast's recipients in id order, those after
// afterID, at most limit (keyset pages: pass the last id seen).
func (s *Store) BroadcastRecipients(ctx context.Context, accountID, broadcastID, afterID int64, limit int) ([]BroadcastRecipient, error) {
	var out []BroadcastRecipient
	if err := s.db.SelectContext(ctx, &out, `SELECT id, account_id, broadcast_id, mobile, user_id, variables, state, attempts,
			message_id, error_code, error_title, retry_not_before, finished_at
		FROM broadcast_recipients WHERE account_id = $1 AND broadcast_id = $2 AND id > $3 ORDER BY id LIMIT $4`,
		accountID, broadcastID, afterID, limit); err != nil {
		return nil, translate(err)
	}
	return out, nil
}

// BudgetUse is a broadcast's use of its portfolio's 24 h budget of unique recipients, for the
// pre-flight: Used is the recipients the portfolio reached in the window, Cost how many of the
// broadcast's recipients not called yet would be new to it.
type BudgetUse struct {
	Used int `db:"used"`
	Cost int `db:"cost"`
}

// BroadcastBudgetUse returns the broadcast's use of its portfolio's budget at now.
func (s *Store) BroadcastBudgetUse(ctx context.Context, accountID, broadcastID int64, now time.Time) (BudgetUse, error) {
	var u BudgetUse
	err := s.db.GetContext(ctx, &u, `SELECT
			(SELECT count(*) FROM portfolio_reach p WHERE p.account_id = $1 AND p.portfolio = b.portfolio AND p.reached_at > $3::timestamptz - interval '24 hours') AS used,
			(SELECT count(*) FROM broadcast_recipients r WHERE r.account_id = $1 AND r.broadcast_id = b.id AND r.state = 'pending'
				AND NOT EXISTS (SELECT FROM portfolio_reach p WHERE p.account_id = $1 AND p.portfolio = b.portfolio
					AND p.recipient = r.mobile || r.user_id AND p.reached_at > $3::timestamptz - interval '24 hours')) AS cost
		FROM broadcasts b WHERE b.account_id = $1 AND b.id = $2`, accountID, broadcastID, now)
	return u, translate(err)
}

// BlockedRecipients returns, of the numbers mobiles and the user ids userIDs, those of the
// account's blocked contacts, each with whether the contact blocked itself (its latest block
// is its own STOP, with no member, recorded under its number or its user id) or a member
// blocked it. Only the exact number is matched; the send path still refuses a person blocked
// under another form of the number.
func (s *Store) BlockedRecipients(ctx context.Context, accountID int64, mobiles, userIDs []string) (optedOut map[string]bool, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT b.recipient, coalesce((SELECT a.user_id IS NULL FROM audit_log a
			WHERE a.account_id = $1 AND a.action = $4 AND a.target IN (b.mobile, b.user_id) ORDER BY a.id DESC LIMIT 1), false)
		FROM (SELECT c.mobile AS recipient, c.mobile, c.user_id FROM contacts c
				WHERE c.account_id = $1 AND c.blocked AND c.mobile = ANY($2)
			UNION ALL
			SELECT c.user_id, c.mobile, c.user_id FROM contacts c
				WHERE c.account_id = $1 AND c.blocked AND c.user_id = ANY($3)) b`,
		accountID, pq.StringArray(nonNilStrings(mobiles)), pq.StringArray(nonNilStrings(userIDs)), AuditContactBlocked)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var r string
		var self bool
		if err := rows.Scan(&r, &self); err != nil {
			return nil, translate(err)
		}
		out[r] = self
	}
	return out, translate(rows.Err())
}

// PortfolioReach returns how many recipients the account's portfolio reached in the 24 h
// before now (used), and how many of recipients are among them (reached).
func (s *Store) PortfolioReach(ctx context.Context, accountID int64, portfolio string, recipients []string, now time.Time) (used, reached int, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM portfolio_reach WHERE account_id = $1 AND portfolio = $2 AND reached_at > $4),
			(SELECT count(*) FROM portfolio_reach WHERE account_id = $1 AND portfolio = $2 AND reached_at > $4 AND recipient = ANY($3))`,
		accountID, portfolio, pq.StringArray(recipients), now.Add(-ReachWindow)).Scan(&used, &reached)
	return used, reached, translate(err)
}
