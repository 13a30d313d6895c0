package storetest

import (
	"database/sql"
	"net/url"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// autoExplain makes every session load PostgreSQL's auto_explain and send the plan of each
// statement it runs (EXPLAIN ANALYZE with BUFFERS, text) to the client as a NOTICE.
const autoExplain = "-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0" +
	" -c auto_explain.log_analyze=on -c auto_explain.log_buffers=on -c auto_explain.log_timing=on" +
	" -c auto_explain.log_level=notice"

// ExplainingDB opens dsn (a postgres:// URL) so that the plan of every statement run on it, as
// it ran (EXPLAIN (ANALYZE, BUFFERS): the query text, then the plan), is passed to plan when
// the statement finishes. It is for benchmarks that show the plans of what a page really runs,
// prepared statements included. It needs a superuser (session_preload_libraries) and fails
// when dsn is not a URL; a server without auto_explain fails at the first connection.
func ExplainingDB(dsn string, plan func(string)) (*sqlx.DB, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	q.Set("options", strings.TrimSpace(q.Get("options")+" "+autoExplain))
	u.RawQuery = q.Encode()
	c, err := pq.NewConnector(u.String())
	if err != nil {
		return nil, err
	}
	nc := pq.ConnectorWithNoticeHandler(c, func(e *pq.Error) {
		if strings.Contains(e.Message, "plan:") {
			plan(e.Message)
		}
	})
	return sqlx.NewDb(sql.OpenDB(nc), "postgres"), nil
}
