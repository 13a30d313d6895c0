package benchfloor

import (
	"context"
	"fmt"
	"strings"

	"github.com/lib/pq"
)

// What the bench reads and does around its runs: the data size, the reset of seeded statuses,
// checkpoints, vacuums, the busy backends and the lifecycle's backlog.

// Size is the data size a bench figure holds for.
type Size struct {
	Messages      int64 // rows in messages, all accounts
	Contacts      int64 // rows in contacts, all accounts
	ServerVersion string
	// Settings are the server settings a figure depends on most, as "name=value" pairs
	// (shared_buffers, synchronous_commit, commit_delay).
	Settings string
}

// DataSize counts the messages and contacts and reads the server's version and settings; it
// fails on any database error.
func (s *Floor) DataSize(ctx context.Context) (Size, error) {
	var z Size
	err := s.db.QueryRowxContext(ctx, `SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM contacts),
		current_setting('server_version'),
		'shared_buffers=' || current_setting('shared_buffers') || ' synchronous_commit=' || current_setting('synchronous_commit')
			|| ' commit_delay=' || current_setting('commit_delay')`).Scan(&z.Messages, &z.Contacts, &z.ServerVersion, &z.Settings)
	return z, translate(err)
}

// ResetStatuses puts the account's seeded messages back to 'sent' with no status
// history, and vacuums, so every status run starts from the same state (the floor
// measurements reset ranks the same way). It fails on any database error.
func (s *Floor) ResetStatuses(ctx context.Context, accountID int64) error {
	// In batches: the counter trigger updates one counter row per message, and one statement
	// updating the same row N times walks a chain of N versions each time (quadratic).
	for {
		res, err := s.db.ExecContext(ctx, `UPDATE messages SET status = 'sent', delivered_at = NULL, read_at = NULL,
				failed_at = NULL
			WHERE account_id = $1 AND id IN (SELECT id FROM messages WHERE account_id = $1 AND platform_message_id LIKE 'wamid.bench.%'
				AND status <> 'sent' LIMIT 500)`, accountID)
		if err != nil {
			return fmt.Errorf("reset statuses: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			break
		}
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM parked_statuses WHERE account_id = $1`, accountID); err != nil {
		return fmt.Errorf("reset statuses: %w", err)
	}
	for _, table := range []string{"messages", "campaign_counters", "campaign_totals"} {
		if _, err := s.db.ExecContext(ctx, `VACUUM `+table); err != nil {
			return fmt.Errorf("vacuum %s: %w", table, err)
		}
	}
	return nil
}

// Checkpoint asks PostgreSQL for a checkpoint, so a run does not pay for the previous
// run's dirty pages. It fails when the role may not (it needs pg_checkpoint or superuser).
func (s *Floor) Checkpoint(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `CHECKPOINT`)
	return err
}

// BusyBackends returns how many other client sessions of this database are running a
// statement now: the bench waits for zero before a run, so work a target left behind (such as
// asynchronous status processing) is not billed to the next run.
func (s *Floor) BusyBackends(ctx context.Context) (int, error) {
	var n int
	err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()
		AND backend_type = 'client backend' AND state NOT IN ('idle')`)
	return n, translate(err)
}

// Backlog is what a lifecycle run has not caught up with yet, over the bench accounts.
type Backlog struct {
	Parked     int     `db:"parked"`       // status reports waiting for their message
	Due        int     `db:"due"`          // webhook deliveries due and not claimed
	OldestDueS float64 `db:"oldest_due_s"` // how long the oldest due delivery has waited, seconds
	Pending    int     `db:"pending"`      // messages still waiting for the platform's answer
}

// Backlog reads the backlog of the accounts; it fails on any database error.
func (s *Floor) Backlog(ctx context.Context, accountIDs []int64) (Backlog, error) {
	var b Backlog
	err := s.db.GetContext(ctx, &b, `SELECT
		(SELECT count(*) FROM parked_statuses WHERE account_id = ANY($1)) AS parked,
		(SELECT count(*) FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now() AND account_id = ANY($1)) AS due,
		COALESCE((SELECT EXTRACT(epoch FROM now() - min(next_attempt_at))::float8 FROM webhook_deliveries
			WHERE status = 'pending' AND next_attempt_at <= now() AND account_id = ANY($1)), 0) AS oldest_due_s,
		(SELECT count(*) FROM messages WHERE status = 'pending' AND account_id = ANY($1)
			AND created_at > now() - interval '10 minutes') AS pending`, pq.Array(accountIDs))
	return b, translate(err)
}

// ServerPIDs returns the process ids of the PostgreSQL backends connected to this database
// (backends), and of the server's WAL writer, checkpointer and background writer (aux: they
// serve every database, so their CPU is shared with whatever else the server runs). It fails on
// any database error.
func (s *Floor) ServerPIDs(ctx context.Context) (backends, aux []int, err error) {
	var rows []struct {
		PID int  `db:"pid"`
		Aux bool `db:"aux"`
	}
	err = s.db.SelectContext(ctx, &rows, `SELECT pid, datname IS DISTINCT FROM current_database() AS aux FROM pg_stat_activity
		WHERE datname = current_database() OR backend_type IN ('walwriter', 'checkpointer', 'background writer')`)
	for _, r := range rows {
		if r.Aux {
			aux = append(aux, r.PID)
		} else {
			backends = append(backends, r.PID)
		}
	}
	return backends, aux, translate(err)
}

// DeleteEndpoints removes every webhook endpoint of the account (and, by cascade, their
// deliveries and attempts); it fails on any database error.
func (s *Floor) DeleteEndpoints(ctx context.Context, accountID int64) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE account_id = $1`, accountID)
	return err
}

// churnedTables are the tables a bench run updates and deletes in: Vacuum's.
var churnedTables = []string{"webhook_deliveries", "webhook_attempts", "webhook_endpoints", "events", "messages",
	"platform_webhooks", "parked_statuses", "campaign_counters", "campaign_totals", "campaign_failures", "contact_counts",
	"idempotency_keys"}

// Vacuum vacuums the tables bench runs churn. A server with autovacuum on does this by itself;
// one with it off (this project's CI machines: 90-ci.conf) would otherwise measure an ever
// longer trail of dead rows left by earlier runs (1.7 million dead deliveries after a few
// lifecycle runs, which halved the lifecycle rate of any build). It does not ANALYZE: the
// deliveries are empty between runs, and statistics of an empty table make the planner choose
// sequential scans that it keeps, in the gateway's prepared statements, while the table fills.
// It fails on any database error.
func (s *Floor) Vacuum(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `VACUUM `+strings.Join(churnedTables, ", "))
	return err
}

// Analyze analyzes the tables bench runs churn, as autovacuum's analyze would once they have
// grown; it makes the server re-plan the prepared statements that read them. It fails on any
// database error.
func (s *Floor) Analyze(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `ANALYZE `+strings.Join(churnedTables, ", "))
	return err
}
