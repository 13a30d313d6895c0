package store

import (
	"context"
	"database/sql"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// WithStatementTimeout returns dsn with statement_timeout set as a run-time parameter of every
// connection opened with it (lib/pq passes parameters it does not know to the server), so
// every statement of the pool has a deadline. A statement_timeout already in dsn is kept.
// Both URL and keyword=value forms are handled; d is rounded to whole milliseconds, at least
// one. Migrations use their own connection without it, so a long backfill is not cut off.
func WithStatementTimeout(dsn string, d time.Duration) string {
	return withParam(dsn, "statement_timeout", strconv.FormatInt(max(1, d.Milliseconds()), 10))
}

// WithoutStatementTimeout returns dsn with statement_timeout 0 (none) as a run-time parameter,
// unless dsn sets one: for migrations, whose long backfills a role's setting
// (SetRoleStatementTimeout) would otherwise cut off.
func WithoutStatementTimeout(dsn string) string { return withParam(dsn, "statement_timeout", "0") }

// withParam returns dsn with the run-time parameter k set to v, unless dsn sets k already.
func withParam(dsn, k, v string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return dsn
		}
		q := u.Query()
		if q.Get(k) == "" {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	if strings.Contains(dsn, k+"=") {
		return dsn
	}
	return strings.TrimSpace(dsn + " " + k + "=" + v)
}

// SetRoleStatementTimeout makes d the statement timeout of the connecting role in the
// database dsn names (ALTER ROLE ... IN DATABASE ... SET statement_timeout), for every server
// connection opened after it: the way a deadline reaches the connections of a transaction
// pooler, which refuses the run-time parameter and shares its server connections between
// clients. dsn should be the direct connection. It does nothing when the setting is d already.
func SetRoleStatementTimeout(ctx context.Context, dsn string, d time.Duration) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ms := strconv.FormatInt(max(1, d.Milliseconds()), 10)
	// The role and database names come from the server, quoted by format(); ms is digits.
	_, err = db.ExecContext(ctx, `DO $$
	DECLARE
		want text := 'statement_timeout=`+ms+`ms';
	BEGIN
		IF NOT EXISTS (SELECT 1 FROM pg_db_role_setting s
			JOIN pg_database d ON d.oid = s.setdatabase AND d.datname = current_database()
			JOIN pg_roles r ON r.oid = s.setrole AND r.rolname = current_user
			WHERE want = ANY (s.setconfig)) THEN
			EXECUTE format('ALTER ROLE %I IN DATABASE %I SET statement_timeout = %L', current_user, current_database(), '`+ms+`ms');
		END IF;
	END $$`)
	return err
}
