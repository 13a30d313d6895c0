package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
)

// The broadcast engine's side of the broadcasts: claims, the mark before each platform call,
// the recorded answers, and the sweeps that start, resume, reconcile and finish broadcasts.

// ReachWindow is the moving window of a portfolio's budget of unique recipients.
const ReachWindow = 24 * time.Hour

// RunningBroadcasts returns every running broadcast (of all accounts), oldest first: the
// engine's work list. A broadcast paused for the portfolio's budget is in it too: its
// recipients already counted as reached (claimed before the pause, whose lease ran out before
// their call) are still claimed and sent, since they hold their share of the budget; no other
// recipient of it is claimed (ClaimBroadcastRecipients).
func (s *Store) RunningBroadcasts(ctx context.Context) ([]Broadcast, error) {
	var out []Broadcast
	if err := s.db.SelectContext(ctx, &out, `SELECT `+broadcastColumns+` FROM broadcasts
		WHERE state = 'running' OR (state = 'paused' AND pause_reason = $1) ORDER BY id`, PausePortfolioLimit); err != nil {
		return nil, translate(err)
	}
	for i := range out {
		if err := out[i].decode(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ClaimedRecipient is a recipient leased to one engine: only the holder of Claim can mark it
// sending, until the lease runs out.
type ClaimedRecipient struct {
	ID          int64
	AccountID   int64
	BroadcastID int64
	Mobile      string
	UserID      string
	Variables   map[string]string
	Attempts    int // platform calls made before this one
	Claim       string
}

// To returns the recipient's address: the number, or the user id.
func (c ClaimedRecipient) To() string {
	if c.Mobile != "" {
		return c.Mobile
	}
	return c.UserID
}

// Claim is the result of ClaimBroadcastRecipients.
type Claim struct {
	Recipients []ClaimedRecipient
	// BudgetSpent is set when due recipients were left because the portfolio's 24 h budget of
	// unique recipients is spent; the broadcast was paused (PausePortfolioLimit) until ResumeAt.
	BudgetSpent bool
	ResumeAt    time.Time
}

func newClaimToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	return hex.EncodeToString(b[:])
}

// ClaimBroadcastRecipients leases up to limit due pending recipients of the account's running
// broadcast for lease (oldest due first), skipping rows another engine holds. budget is the
// portfolio's unique recipients per moving 24 h (0: unlimited): a recipient the portfolio has
// not reached in the window takes one unit of it, and is counted as reached when claimed; once
// it is spent the rest wait, and the broadcast is paused with PausePortfolioLimit until the
// oldest reach in the window leaves it; while it is paused so, only recipients already
// reached are claimed. now is the engine's clock.
func (s *Store) ClaimBroadcastRecipients(ctx context.Context, accountID, broadcastID int64, portfolio string, now time.Time,
	limit int, lease time.Duration, budget int) (Claim, error) {
	var out Claim
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		used := 0
		if budget > 0 {
			// One claimer per portfolio at a time, so two claims cannot both spend the last units.
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('portfolio_reach:' || $1::bigint || ':' || $2::text, 0))`,
				accountID, portfolio); err != nil {
				return err
			}
			if err := tx.GetContext(ctx, &used, `SELECT count(*) FROM portfolio_reach
				WHERE account_id = $1 AND portfolio = $2 AND reached_at > $3`, accountID, portfolio, now.Add(-ReachWindow)); err != nil {
				return err
			}
		}
		rows, err := tx.QueryContext(ctx, `SELECT r.id, r.mobile, r.user_id, r.variables, r.attempts,
				$5::int > 0 AND EXISTS (SELECT FROM portfolio_reach p WHERE p.account_id = r.account_id AND p.portfolio = $6
					AND p.recipient = r.mobile || r.user_id AND p.reached_at > $3::timestamptz - interval '24 hours')
			FROM broadcast_recipients r
			WHERE r.account_id = $1 AND r.broadcast_id = $2 AND r.state = 'pending' AND r.next_attempt_at <= $3
				AND (EXISTS (SELECT FROM broadcasts b WHERE b.account_id = $1 AND b.id = $2 AND b.state = 'running')
					OR ($5::int > 0 AND EXISTS (SELECT FROM portfolio_reach p WHERE p.account_id = r.account_id AND p.portfolio = $6
						AND p.recipient = r.mobile || r.user_id AND p.reached_at > $3::timestamptz - interval '24 hours')))
			ORDER BY r.next_attempt_at, r.id LIMIT $4 FOR UPDATE SKIP LOCKED`,
			accountID, broadcastID, now, limit, budget, portfolio)
		if err != nil {
			return err
		}
		defer rows.Close()
		token := newClaimToken()
		var ids []int64
		var fresh []string
		left := budget - used
		for rows.Next() {
			var c ClaimedRecipient
			var vars []byte
			var reached bool
			if err := rows.Scan(&c.ID, &c.Mobile, &c.UserID, &vars, &c.Attempts, &reached); err != nil {
				return err
			}
			if budget > 0 && !reached {
				if left <= 0 {
					out.BudgetSpent = true
					continue
				}
				left--
				fresh = append(fresh, c.To())
			}
			c.AccountID, c.BroadcastID, c.Claim = accountID, broadcastID, token
			if err := json.Unmarshal(vars, &c.Variables); err != nil {
				return err
			}
			ids = append(ids, c.ID)
			out.Recipients = append(out.Recipients, c)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		if len(ids) > 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE broadcast_recipients SET next_attempt_at = $3, claim = $4::uuid
				WHERE account_id = $1 AND id = ANY($2)`, accountID, pq.Int64Array(ids), now.Add(lease), token); err != nil {
				return err
			}
		}
		if len(fresh) > 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO portfolio_reach (account_id, portfolio, recipient, reached_at)
				SELECT $1, $2, unnest($3::text[]), $4
				ON CONFLICT (account_id, portfolio, recipient) DO UPDATE SET reached_at = EXCLUDED.reached_at`,
				accountID, portfolio, pq.StringArray(fresh), now); err != nil {
				return err
			}
		}
		if out.BudgetSpent {
			var oldest time.Time
			if err := tx.GetContext(ctx, &oldest, `SELECT coalesce(min(reached_at), $3) FROM portfolio_reach
				WHERE account_id = $1 AND portfolio = $2 AND reached_at > $3`, accountID, portfolio, now.Add(-ReachWindow)); err != nil {
				return err
			}
			out.ResumeAt = oldest.Add(ReachWindow)
			if !out.ResumeAt.After(now) {
				out.ResumeAt = now.Add(time.Minute)
			}
			_, err := tx.ExecContext(ctx, `UPDATE broadcasts SET state = 'paused', pause_reason = $3, resume_at = $4, updated_at = $5
				WHERE account_id = $1 AND id = $2 AND state = 'running'`, accountID, broadcastID, PausePortfolioLimit, out.ResumeAt, now)
			return err
		}
		return nil
	})
	if err != nil {
		return Claim{}, translate(err)
	}
	return out, nil
}

// RecipientRelease gives a claimed recipient back, due at At.
type RecipientRelease struct {
	AccountID int64     `json:"account_id"`
	ID        int64     `json:"id"`
	Claim     string    `json:"claim"`
	At        time.Time `json:"at"`
}

// ReleaseBroadcastRecipients gives claims back uncalled: each recipient is due again at its
// At. A claim no longer held (taken over, or marked sending) is left alone.
func (s *Store) ReleaseBroadcastRecipients(ctx context.Context, rs []RecipientRelease) error {
	if len(rs) == 0 {
		return nil
	}
	data, err := json.Marshal(rs)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `UPDATE broadcast_recipients r SET next_attempt_at = x.at, claim = NULL
		FROM jsonb_to_recordset($1::jsonb) AS x(account_id bigint, id bigint, claim uuid, at timestamptz)
		WHERE r.account_id = x.account_id AND r.id = x.id AND r.state = 'pending' AND r.claim = x.claim`, data)
	return translate(err)
}

// RecipientResult is the outcome of one recipient's platform call.
type RecipientResult struct {
	AccountID int64 `json:"account_id"`
	ID        int64 `json:"id"`
	// State is RecipientSent, RecipientFailed, RecipientUnknown (the answer was lost) or
	// RecipientPending (the platform refused it for now: due again at NextAttemptAt).
	State          string     `json:"state"`
	MessageID      string     `json:"message_id"`
	ErrorCode      *int       `json:"error_code"`
	ErrorTitle     string     `json:"error_title"`
	NextAttemptAt  *time.Time `json:"next_at"`
	RetryNotBefore *time.Time `json:"retry_not_before"`
	At             time.Time  `json:"at"`
}

// RecordBroadcastResults records the outcomes of platform calls, in one statement. Only a
// recipient being sent (or whose answer was given up as unknown, when the answer is known now)
// changes: an outcome recorded twice changes nothing the second time.
func (s *Store) RecordBroadcastResults(ctx context.Context, rs []RecipientResult) error {
	if len(rs) == 0 {
		return nil
	}
	data, err := json.Marshal(rs)
	if err != nil {
		return err
	}
	st, err := s.prepared(ctx, `UPDATE broadcast_recipients r SET state = x.state, message_id = coalesce(x.message_id, ''),
			error_code = x.error_code, error_title = coalesce(x.error_title, ''),
			next_attempt_at = coalesce(x.next_at, r.next_attempt_at), retry_not_before = x.retry_not_before,
			finished_at = CASE WHEN x.state IN ('sent', 'failed') THEN x.at END
		FROM jsonb_to_recordset($1::jsonb) AS x(account_id bigint, id bigint, state text, message_id text, error_code int,
			error_title text, next_at timestamptz, retry_not_before timestamptz, at timestamptz)
		WHERE r.account_id = x.account_id AND r.id = x.id
			AND (r.state = 'sending' OR (r.state = 'unknown' AND x.state <> 'unknown'))`)
	if err != nil {
		return err
	}
	// A deadlock with another statement that locks some of the same rows (recipients, their
	// broadcast's counters) in another order rolls this one back whole; it is run again, since an
	// outcome recorded twice changes nothing. Given up, the recipients stay 'sending' until the
	// sweep settles them from their messages.
	for attempt := 1; ; attempt++ {
		_, err = st.ExecContext(ctx, data)
		if attempt < 3 && pq.As(err, pqerror.TRDeadlockDetected) != nil {
			continue
		}
		return translate(err)
	}
}

// ActivateBroadcasts starts the scheduled broadcasts whose time has come and resumes those
// paused for the portfolio's budget whose resume time has come. It returns how many changed.
func (s *Store) ActivateBroadcasts(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE broadcasts SET state = 'running', started_at = coalesce(started_at, $1),
			pause_reason = '', resume_at = NULL, updated_at = $1
		WHERE (state = 'scheduled' AND scheduled_at <= $1) OR (state = 'paused' AND pause_reason = $2 AND resume_at <= $1)`,
		now, PausePortfolioLimit)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

// BroadcastRef names one broadcast of an account.
type BroadcastRef struct {
	AccountID int64 `db:"account_id"`
	ID        int64 `db:"id"`
}

// CompleteBroadcasts marks running broadcasts with no recipient left to call or being called
// as completed, and returns them. With holdUnknown, an unknown recipient (which may be sent
// again, SettleBroadcastRecipients) also keeps its broadcast running.
func (s *Store) CompleteBroadcasts(ctx context.Context, now time.Time, holdUnknown bool) ([]BroadcastRef, error) {
	var out []BroadcastRef
	err := s.db.SelectContext(ctx, &out, `UPDATE broadcasts b SET state = 'completed', finished_at = $1, updated_at = $1
		WHERE b.state = 'running' AND NOT EXISTS (SELECT FROM broadcast_recipients r
			WHERE r.account_id = b.account_id AND r.broadcast_id = b.id
				AND (r.state IN ('pending', 'sending') OR ($2 AND r.state = 'unknown')))
		RETURNING b.account_id, b.id`, now, holdUnknown)
	return out, translate(err)
}
