package store

import (
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
	ms := strconv.FormatInt(max(1, d.Milliseconds()), 10)
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return dsn
		}
		q := u.Query()
		if q.Get("statement_timeout") == "" {
			q.Set("statement_timeout", ms)
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	if strings.Contains(dsn, "statement_timeout=") {
		return dsn
	}
	return strings.TrimSpace(dsn + " statement_timeout=" + ms)
}
