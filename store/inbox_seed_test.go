package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
)

// seedInboxVersion names what seedInbox seeds: a seeded database is reused only while it and
// the migrations are the same (inboxMigrationsHash).
const seedInboxVersion = "3: named contacts, no-mobile contacts, usernames, by a hash of n"

// seedInbox fills db (freshly migrated) with BenchmarkInbox's workspace in SQL, on one
// connection, and returns its account: 4 members; 100,000 contacts ("Customer <n> <surname>",
// Okafor for a tenth of them, each other surname for 4.5 %; one in 50 known only by a user
// id, one in 10 with a username "fan.<n>"; which ones by a hash of n, so that they do not
// follow the views, which go by the contact's id), each with a conversation
// (latest activity spread over 30 days, a quarter of windows open, a tenth resolved, half
// assigned round the members, a third with unread messages) and 100 messages (two customer
// messages for each answer, ten minutes apart, the last at the latest activity); the first
// conversation has 500. After the contacts, triggers and foreign keys are off for the seed's
// session (session_replication_role = replica: the counters the triggers keep are not read
// here), and
// the message indexes the inbox never reads are built after the rows, not row by row.
func seedInbox(b *testing.B, db *sqlx.DB, hash string) int64 {
	b.Helper()
	ctx := context.Background()
	conn, err := db.Connx(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	var acc int64
	if err := conn.GetContext(ctx, &acc, `INSERT INTO accounts (name, email, join_code)
		VALUES ('Inbox bench', 'inbox@bench.example', 'inbox-bench') RETURNING id`); err != nil {
		b.Fatal(err)
	}
	steps := []string{
		// The contacts go in with their triggers on, so that contact_name_suffixes (the search's
		// index) is filled as an import fills it.
		`INSERT INTO contacts (account_id, mobile, user_id, username, name)
			SELECT $1, CASE WHEN h.b % 50 <> 0 THEN (15550000000 + g)::text END,
				CASE WHEN h.b % 50 = 0 THEN 'US.' || (10000000000000000 + g) END,
				CASE WHEN h.b % 20 < 2 THEN 'fan.' || g END,
				'Customer ' || g || ' ' || CASE WHEN h.a % 10 = 3 THEN 'Okafor'
					ELSE (ARRAY['García', 'Müller', 'Nuñez', 'Smith', 'O''Brien', 'Kowalski', 'Ødegaard', 'Nguyen',
						'Dubois', 'Rossi', 'Silva', 'Öztürk', 'Jensen', 'Mbeki', 'Tanaka', 'Ivanova', 'Haddad', 'Costa',
						'Novák', 'Fernández'])[1 + h.a / 10 % 20] END
			FROM generate_series(1, 100000) g, LATERAL (SELECT abs(hashint4(g)) AS a, abs(hashint4(-g)) AS b) h`,
		`SET session_replication_role = replica`,
		`SET maintenance_work_mem = '256MB'`,
		`INSERT INTO users (email, password_hash) SELECT 'mate' || g || '@bench.example', 'not a password' FROM generate_series(1, 4) g`,
		`INSERT INTO memberships (account_id, user_id, role) SELECT $1, id, 'owner' FROM users`,
		`INSERT INTO conversations (account_id, contact_id, created_at, last_inbound_at, window_expires_at, last_activity_at,
				unread_count, assigned_user_id, resolved_at, change_xid)
			SELECT $1, c.id, now() - interval '60 days', a.at, a.at + interval '24 hours', a.at,
				CASE WHEN c.id % 3 = 0 THEN 1 + c.id % 7 ELSE 0 END,
				CASE WHEN c.id % 2 = 0 THEN (SELECT min(id) FROM users) + c.id % 4 END,
				CASE WHEN c.id % 10 = 0 THEN a.at END, '1'
			FROM contacts c, LATERAL (SELECT CASE WHEN c.id % 4 = 0 THEN now() - (c.id % 1000) * interval '1 minute'
				ELSE now() - interval '2 days' - (c.id * 7919 % 2500000) * interval '1 second' END AS at) a
			WHERE c.account_id = $1`,
		`DROP INDEX messages_newest_idx, messages_campaign_idx, messages_template_idx`,
		`INSERT INTO messages (account_id, contact_id, conversation_id, direction, type, destination, content, status,
				created_at, sent_at)
			SELECT $1, v.contact_id, v.id, CASE WHEN g % 3 = 0 THEN 'out' ELSE 'in' END, 'text', '15550009999',
				jsonb_build_object('text', jsonb_build_object('body', 'message ' || g)),
				CASE WHEN g % 3 = 0 THEN 'read' ELSE 'received' END,
				v.last_activity_at - (n.n - g) * interval '10 minutes', v.last_activity_at - (n.n - g) * interval '10 minutes'
			FROM conversations v,
				LATERAL (SELECT CASE WHEN v.id = (SELECT min(id) FROM conversations) THEN 500 ELSE 100 END AS n) n,
				LATERAL generate_series(1, n.n) g
			WHERE v.account_id = $1`,
		`CREATE INDEX messages_newest_idx ON messages (account_id, created_at DESC, id DESC)`,
		`CREATE INDEX messages_campaign_idx ON messages (account_id, campaign_id, created_at DESC, id DESC)`,
		`CREATE INDEX messages_template_idx ON messages (account_id, template_name, created_at DESC, id DESC)`,
		`SET session_replication_role = DEFAULT`,
		`VACUUM ANALYZE`,
		`CREATE TABLE bench_seed (hash text NOT NULL, account_id bigint NOT NULL)`,
	}
	for _, q := range steps {
		start := time.Now()
		args := []any{}
		if containsArg(q) {
			args = append(args, acc)
		}
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			b.Fatalf("%v\n%s", err, q)
		}
		b.Logf("%s: %s", time.Since(start).Round(time.Millisecond), firstLine(q))
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO bench_seed VALUES ($1, $2)`, hash, acc); err != nil {
		b.Fatal(err)
	}
	return acc
}

func containsArg(q string) bool {
	for i := 0; i+1 < len(q); i++ {
		if q[i] == '$' && q[i+1] == '1' {
			return true
		}
	}
	return false
}

func firstLine(q string) string {
	for i, r := range q {
		if r == '\n' {
			return q[:i]
		}
	}
	return q
}
