// Package benchfloor is the benchmark reference ("the floor") of `gateway bench`, and the
// bench's seeding. It works on the store's connection (store.Store.DB) and is no part of the
// service.
//
// Nothing in the service calls the methods in this package. They are the minimal SQL that does
// the same database work as the service's three hot paths, written the fastest way measured
// on this stack: server-side prepared statements (Floor.prepared) and one data-modifying CTE
// per write. `gateway bench floor-serve` (server/bench/floor.go) serves them behind plain
// net/http, and `gateway bench` prints the service's throughput next to the floor's, so the
// ratio shows what our stack costs. Keep them minimal: a faster service path belongs in the
// service's own files, and a slower floor would flatter the ratio.
//
//   - send: AccountByKeyHash (one prepared lookup), Send (one CTE: upsert the
//     contact by (account, mobile), find or insert its conversation, insert the message
//     'pending', insert contact.created for a new contact), the platform call, then
//     RecordSent (one CTE: record the wamid and 'sent', insert message.sent);
//   - status: Status (one CTE: resolve the tenant by phone_number_id, guarded UPDATE
//     by (account, platform message id) that only moves the status rank forward, insert the
//     history row and message.status);
//   - poll: AccountByKeyHash, then Message (one SELECT by (id, account) with
//     its history).
package benchfloor

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"gateway/store"
)

// Floor runs the floor's and the seeding's SQL on a store's connection.
type Floor struct {
	st     *store.Store
	db     *sqlx.DB
	prepMu sync.Mutex
	stmts  sync.Map // query text -> *sqlx.Stmt
}

// New returns a Floor over st's connection (st.DB()).
func New(st *store.Store) *Floor { return &Floor{st: st, db: st.DB()} }

// Close releases the prepared statements (the pool is closed by its owner).
func (s *Floor) Close() {
	s.stmts.Range(func(k, v any) bool {
		v.(*sqlx.Stmt).Close()
		s.stmts.Delete(k)
		return true
	})
}

// prepared returns the server-side prepared statement for q, preparing it on first use.
func (s *Floor) prepared(ctx context.Context, q string) (*sqlx.Stmt, error) {
	if v, ok := s.stmts.Load(q); ok {
		return v.(*sqlx.Stmt), nil
	}
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	if v, ok := s.stmts.Load(q); ok {
		return v.(*sqlx.Stmt), nil
	}
	st, err := s.db.PreparexContext(context.WithoutCancel(ctx), q)
	if err != nil {
		return nil, fmt.Errorf("prepare statement: %w", err)
	}
	s.stmts.Store(q, st)
	return st, nil
}

// translate maps no rows to store.ErrNotFound, like the store does.
func translate(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

// WamidPrefix prefixes the platform message id of every seeded bench message:
// message n (1-based) has platform id WamidPrefix + n.
const WamidPrefix = "wamid.bench."

// MessagesPerContact is how many consecutive seeded messages share one seeded contact.
const MessagesPerContact = 5

// ContactMobile returns the mobile of seeded contact k (1-based): "1999" and k on eight
// digits, so it never collides with the eleven-digit destinations the bench sends to.
func ContactMobile(k int64) string { return fmt.Sprintf("1999%08d", k) }

// MessageContact returns the seeded contact (1-based) of seeded message n (1-based).
func MessageContact(n int64) int64 { return (n-1)/MessagesPerContact + 1 }

// Template is the approved template the bench seeds and sends.
type Template struct {
	PlatformID string
	Name       string
	Language   string
	Category   string // MARKETING, UTILITY or AUTHENTICATION
	BodyParams int
	Components json.RawMessage // as the platform lists them
}

// Seed says what SeedData left in the database.
type Seed struct {
	AccountID  int64
	TemplateID int64
	CampaignID int64
	Seeded     int64 // seeded messages (platform ids WamidPrefix + 1..Seeded)
	Inserted   int64 // of which this call inserted
}

// IDs are the service ids of the seeded messages: the range [Min, Max] when it holds
// exactly the seeded rows, otherwise IDs lists them.
type IDs struct {
	Min, Max, Count int64
	IDs             []int64
}

// EnsureDatabase creates the database named in dsn when it does not exist, connecting to the
// server's "postgres" database to do so. It reports whether it created it, and fails when the
// server does not answer or refuses.
func EnsureDatabase(ctx context.Context, dsn string) (bool, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return false, fmt.Errorf("parse database URL: %w", err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		return false, fmt.Errorf("database URL names no database")
	}
	u.Path = "/postgres"
	admin, err := sqlx.Open("postgres", u.String())
	if err != nil {
		return false, err
	}
	defer admin.Close()
	var exists bool
	if err := admin.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name); err != nil {
		return false, fmt.Errorf("look up database %s: %w", name, err)
	}
	if exists {
		return false, nil
	}
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+pq.QuoteIdentifier(name)); err != nil {
		return false, fmt.Errorf("create database %s: %w", name, err)
	}
	return true, nil
}

// SeedData makes the account ready for the bench: the template approved, the standing
// "API" campaign, and messages seeded messages (status 'sent', platform ids WamidPrefix+n,
// MessagesPerContact per contact, each contact with its conversation). It is idempotent
// and tops up: rows already seeded are kept and only the missing ones are inserted, in
// batches, calling progress after each. The account and its connected number must exist. It
// fails on any database error; a failed batch is rolled back whole.
func (s *Floor) SeedData(ctx context.Context, accountID int64, t Template, messages int64, progress func(done, total int64)) (Seed, error) {
	seed := Seed{AccountID: accountID}
	comps := []byte(t.Components)
	if len(comps) == 0 {
		comps = []byte("[]")
	}
	err := s.db.GetContext(ctx, &seed.TemplateID, `INSERT INTO templates
		(account_id, platform_id, name, language, status, category_id, parameter_format, body_params, components)
		VALUES ($1, $2, $3, $4, 'APPROVED', (SELECT id FROM template_categories WHERE name = $5), 'POSITIONAL', $6, $7)
		ON CONFLICT (account_id, name, language) DO UPDATE SET status = 'APPROVED', body_params = EXCLUDED.body_params,
			components = EXCLUDED.components, updated_at = now()
		RETURNING id`, accountID, t.PlatformID, t.Name, t.Language, t.Category, t.BodyParams, string(comps))
	if err != nil {
		return seed, fmt.Errorf("seed template: %w", err)
	}
	err = s.db.GetContext(ctx, &seed.CampaignID, `INSERT INTO campaigns (account_id, name) VALUES ($1, 'API')
		ON CONFLICT (account_id, name) DO UPDATE SET name = EXCLUDED.name RETURNING id`, accountID)
	if err != nil {
		return seed, fmt.Errorf("seed campaign: %w", err)
	}
	if err := s.db.GetContext(ctx, &seed.Seeded, `SELECT count(*) FROM messages
		WHERE account_id = $1 AND platform_message_id LIKE 'wamid.bench.%'`, accountID); err != nil {
		return seed, fmt.Errorf("count seeded messages: %w", err)
	}
	content, _ := json.Marshal(map[string]any{"language": t.Language, "body_variables": []string{"Ana", "ORD-7781"}})
	const batch = 200_000
	for seed.Seeded < messages {
		lo, hi := seed.Seeded+1, min(seed.Seeded+batch, messages)
		if err := s.seedBatch(ctx, seed, t, content, lo, hi); err != nil {
			return seed, fmt.Errorf("seed messages %d..%d: %w", lo, hi, err)
		}
		seed.Inserted += hi - lo + 1
		seed.Seeded = hi
		if progress != nil {
			progress(seed.Seeded, messages)
		}
	}
	if seed.Inserted > 0 {
		for _, table := range []string{"contacts", "conversations", "messages"} {
			if _, err := s.db.ExecContext(ctx, `VACUUM ANALYZE `+table); err != nil {
				return seed, fmt.Errorf("vacuum %s: %w", table, err)
			}
		}
	}
	return seed, nil
}

// seedBatch inserts seeded messages lo..hi with their contacts and conversations in one
// transaction. The contacts are inserted with their triggers on, so that their count and name
// index are the triggers' own work (one call per statement). The conversations and messages
// are consistent by construction, so their triggers (foreign keys, campaign counters) are
// skipped when the role may (superuser); otherwise they run.
func (s *Floor) seedBatch(ctx context.Context, seed Seed, t Template, content []byte, lo, hi int64) error {
	run := func(skipTriggers bool) error {
		tx, err := s.db.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		c0, c1 := MessageContact(lo), MessageContact(hi)
		if _, err := tx.ExecContext(ctx, `INSERT INTO contacts (account_id, mobile, name, created_at, updated_at)
			SELECT $1::bigint, '1999' || lpad(g::text, 8, '0'), 'Bench ' || g, now(), now()
			FROM generate_series($2::bigint, $3::bigint) g
			ON CONFLICT (account_id, mobile) DO NOTHING`, seed.AccountID, c0, c1); err != nil {
			return err
		}
		if skipTriggers {
			if _, err := tx.ExecContext(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
				return errSkipTriggers
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO conversations (account_id, contact_id)
			SELECT $1::bigint, c.id FROM generate_series($2::bigint, $3::bigint) g
			JOIN contacts c ON c.account_id = $1 AND c.mobile = '1999' || lpad(g::text, 8, '0')
			ON CONFLICT (account_id, contact_id) DO NOTHING`, seed.AccountID, c0, c1); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (account_id, contact_id, conversation_id, campaign_id,
				template_id, direction, type, destination, template_name, content, platform_message_id, status, created_at, sent_at)
			SELECT $1::bigint, c.id, cv.id, $4::bigint, $5::bigint, 'out', 'template', c.mobile, $6::text, $7::jsonb, 'wamid.bench.' || g, 'sent',
				now() - ($3 - g) * interval '1 millisecond', now() - ($3 - g) * interval '1 millisecond'
			FROM generate_series($2::bigint, $3::bigint) g
			JOIN contacts c ON c.account_id = $1 AND c.mobile = '1999' || lpad(((g - 1) / $8 + 1)::text, 8, '0')
			JOIN conversations cv ON cv.account_id = $1 AND cv.contact_id = c.id
			ORDER BY g`, seed.AccountID, lo, hi, seed.CampaignID, seed.TemplateID, t.Name, string(content), MessagesPerContact); err != nil {
			return err
		}
		return tx.Commit()
	}
	err := run(true)
	if err == errSkipTriggers {
		err = run(false)
	}
	return err
}

var errSkipTriggers = fmt.Errorf("cannot skip triggers")

// SeededIDs returns the service ids of the account's seeded messages; it fails when
// there are none.
func (s *Floor) SeededIDs(ctx context.Context, accountID int64) (IDs, error) {
	var ids IDs
	err := s.db.QueryRowxContext(ctx, `SELECT coalesce(min(id), 0), coalesce(max(id), 0), count(*) FROM messages
		WHERE account_id = $1 AND platform_message_id LIKE 'wamid.bench.%'`, accountID).Scan(&ids.Min, &ids.Max, &ids.Count)
	if err != nil {
		return ids, translate(err)
	}
	if ids.Count == 0 {
		return ids, fmt.Errorf("no seeded bench messages: %w", store.ErrNotFound)
	}
	if ids.Max-ids.Min+1 == ids.Count {
		return ids, nil
	}
	err = s.db.SelectContext(ctx, &ids.IDs, `SELECT id FROM messages
		WHERE account_id = $1 AND platform_message_id LIKE 'wamid.bench.%'`, accountID)
	return ids, translate(err)
}

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

// ---- the floor ----

// Account is what the floor server loads once at startup: the account's connected
// number (token decrypted), its approved bench template and its standing campaign.
type Account struct {
	AccountID  int64
	Connection store.Connection
	TemplateID int64
	Template   string
	Language   string
	BodyParams int
	CampaignID int64
}

// Setup loads the floor's account by email, with the template (name, language).
// It returns store.ErrNotFound when the account, its number, the approved template or the "API"
// campaign is missing (run the bench's seeding first).
func (s *Floor) Setup(ctx context.Context, email, template, language string) (Account, error) {
	var fa Account
	acct, err := s.st.AccountByEmail(ctx, email)
	if err != nil {
		return fa, err
	}
	fa.AccountID = acct.ID
	if fa.Connection, err = s.st.ConnectionByAccount(ctx, acct.ID); err != nil {
		return fa, err
	}
	err = s.db.QueryRowxContext(ctx, `SELECT id, name, language, body_params FROM templates
		WHERE account_id = $1 AND name = $2 AND language = $3 AND status = 'APPROVED'`, acct.ID, template, language).
		Scan(&fa.TemplateID, &fa.Template, &fa.Language, &fa.BodyParams)
	if err != nil {
		return fa, translate(err)
	}
	err = s.db.GetContext(ctx, &fa.CampaignID, `SELECT id FROM campaigns WHERE account_id = $1 AND name = 'API'`, acct.ID)
	return fa, translate(err)
}

// AccountByKeyHash is the floor's authentication: one prepared lookup of a live key's
// hash (not revoked, account active). It returns store.ErrNotFound for any other hash.
func (s *Floor) AccountByKeyHash(ctx context.Context, hash []byte) (int64, error) {
	st, err := s.prepared(ctx, `SELECT k.account_id FROM api_keys k JOIN accounts a ON a.id = k.account_id
		WHERE k.key_hash = $1 AND k.mode = 'live' AND k.revoked_at IS NULL AND a.active`)
	if err != nil {
		return 0, err
	}
	var id int64
	return id, translate(st.QueryRowContext(ctx, hash).Scan(&id))
}

// SendInput is one floor send's row data.
type SendInput struct {
	AccountID    int64
	Mobile       string
	Name         string
	CampaignID   int64
	TemplateID   int64
	TemplateName string
	Content      []byte // the message's content JSON
}

// Sent is what Send recorded. Blocked means the contact is blocked and
// nothing else was written (MessageID and ConversationID are then 0).
type Sent struct {
	ContactID      int64
	ContactCreated bool
	Blocked        bool
	ConversationID int64
	MessageID      int64
}

// Send is the floor's send transaction, one prepared statement: upsert the contact
// by (account, mobile), find or insert its conversation, insert the message 'pending' and,
// for a new contact, its contact.created event. It fails on any database error.
func (s *Floor) Send(ctx context.Context, in SendInput) (Sent, error) {
	st, err := s.prepared(ctx, `WITH c AS (
			INSERT INTO contacts (account_id, mobile, name) VALUES ($1, $2, $3)
			ON CONFLICT (account_id, mobile) DO UPDATE SET updated_at = now()
			RETURNING id, blocked, (xmax = 0) AS created),
		cv AS (
			INSERT INTO conversations (account_id, contact_id) SELECT $1, c.id FROM c WHERE NOT c.blocked
			ON CONFLICT (account_id, contact_id) DO UPDATE SET last_inbound_at = conversations.last_inbound_at
			RETURNING id),
		m AS (
			INSERT INTO messages (account_id, contact_id, conversation_id, campaign_id, template_id, direction, type,
				destination, template_name, content, status)
			SELECT $1, c.id, cv.id, $4::bigint, $5::bigint, 'out', 'template', $2, $6::text, $7::jsonb, 'pending' FROM c, cv
			RETURNING id),
		e AS (
			INSERT INTO events (account_id, type, data)
			SELECT $1, 'contact.created', jsonb_build_object('contact_id', c.id, 'mobile', $2::text, 'name', $3::text)
			FROM c, m WHERE c.created
			RETURNING 1)
		SELECT c.id, c.created, c.blocked, coalesce(cv.id, 0), coalesce(m.id, 0)
		FROM c LEFT JOIN cv ON true LEFT JOIN m ON true`)
	if err != nil {
		return Sent{}, err
	}
	var out Sent
	err = st.QueryRowContext(ctx, in.AccountID, in.Mobile, in.Name, in.CampaignID, in.TemplateID, in.TemplateName, string(in.Content)).
		Scan(&out.ContactID, &out.ContactCreated, &out.Blocked, &out.ConversationID, &out.MessageID)
	return out, translate(err)
}

// RecordSent is the floor's second write, after the platform accepted the send:
// one prepared statement records the platform id and 'sent' on the pending message and
// inserts its message.sent event. It returns store.ErrNotFound when no pending message matched.
func (s *Floor) RecordSent(ctx context.Context, accountID, messageID int64, wamid string) error {
	st, err := s.prepared(ctx, `WITH u AS (
			UPDATE messages SET platform_message_id = $3, status = 'sent', sent_at = now()
			WHERE account_id = $1 AND id = $2 AND status = 'pending'
			RETURNING id, contact_id, conversation_id, sent_at)
		INSERT INTO events (account_id, type, data)
		SELECT $1, 'message.sent', jsonb_build_object('message_id', u.id, 'chat_message_id', $3::text,
			'contact_id', u.contact_id, 'conversation_id', u.conversation_id, 'status', 'sent', 'sent_at', u.sent_at)
		FROM u`)
	if err != nil {
		return err
	}
	res, err := st.ExecContext(ctx, accountID, messageID, wamid)
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// Status is the floor's status update, one prepared statement: find the tenant by
// the platform's phone number id, move the message with that platform id forward to status
// (rank must be store.StatusRank(status); a lower or equal current rank is left alone) with
// the status's time, and insert the message.status event. It reports whether the status was
// applied, and fails on any database error.
func (s *Floor) Status(ctx context.Context, phoneNumberID, wamid, status string, rank int, at time.Time) (bool, error) {
	st, err := s.prepared(ctx, `WITH u AS (
			UPDATE messages m SET status = $3,
				delivered_at = CASE WHEN $3 = 'delivered' THEN $5::timestamptz ELSE m.delivered_at END,
				read_at = CASE WHEN $3 = 'read' THEN $5::timestamptz ELSE m.read_at END,
				failed_at = CASE WHEN $3 = 'failed' THEN $5::timestamptz ELSE m.failed_at END
			WHERE m.account_id = (SELECT account_id FROM connections WHERE phone_number_id = $1)
			AND m.platform_message_id = $2
			AND status_rank(m.status) BETWEEN 0 AND $4::int - 1
			RETURNING m.id, m.account_id)
		INSERT INTO events (account_id, type, data)
		SELECT account_id, 'message.status', jsonb_build_object('message_id', id, 'status', $3::text, 'timestamp', $5::timestamptz)
		FROM u`)
	if err != nil {
		return false, err
	}
	res, err := st.ExecContext(ctx, phoneNumberID, wamid, status, rank, at)
	if err != nil {
		return false, translate(err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// MessageRow is one message as the floor's poll reads it.
type MessageRow struct {
	ID           int64
	Wamid        string
	Status       string
	SentAt       sql.NullTime
	CreatedAt    time.Time
	ErrorCode    sql.NullInt64
	ErrorTitle   sql.NullString
	ErrorDetails sql.NullString
	History      json.RawMessage // [{"status":..., "timestamp":...}] oldest first
}

// Message is the floor's poll, one prepared SELECT by (id, account) with the status
// history built from the message's status times in the same statement. It returns store.ErrNotFound when the account has no
// outbound message with that id.
func (s *Floor) Message(ctx context.Context, accountID, id int64) (MessageRow, error) {
	st, err := s.prepared(ctx, `SELECT m.id, coalesce(m.platform_message_id, ''), m.status, m.sent_at, m.created_at,
			m.error_code, m.error_title, m.error_details,
			coalesce((SELECT json_agg(json_build_object('status', h.status, 'timestamp', h.at) ORDER BY h.at)
				FROM (VALUES ('sent', m.sent_at), ('delivered', m.delivered_at), ('read', m.read_at), ('failed', m.failed_at))
					h (status, at) WHERE h.at IS NOT NULL), '[]')
		FROM messages m WHERE m.id = $1 AND m.account_id = $2 AND m.direction = 'out'`)
	if err != nil {
		return MessageRow{}, err
	}
	var r MessageRow
	var hist []byte
	err = st.QueryRowContext(ctx, id, accountID).Scan(&r.ID, &r.Wamid, &r.Status, &r.SentAt, &r.CreatedAt,
		&r.ErrorCode, &r.ErrorTitle, &r.ErrorDetails, &hist)
	r.History = hist
	return r, translate(err)
}
