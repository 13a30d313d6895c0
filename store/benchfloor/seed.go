package benchfloor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"gateway/store"
)

// The bench's data: the template, the campaign and the seeded messages, contacts and
// conversations its runs read and update.

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
