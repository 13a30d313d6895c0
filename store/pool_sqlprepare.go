package store

import (
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"
)

// Behind a transaction pooler the store's hot statements (the ones it prepares: Store.prepared)
// keep their plans as SQL prepared statements of each server connection. Inside a transaction
// one round trip sends
//
//	CALL prepare_once('gw_<hash>', '<statement>'); EXECUTE gw_<hash>(<arguments>)
//
// as one simple query, which runs in one transaction on one server connection.
// prepare_once (migration 000045) prepares the statement there the first time that server
// connection sees it, whichever client the pooler hands it to next, and EXECUTE runs it with its
// cached plan. Outside a transaction the store sends `EXECUTE gw_<hash>(<arguments>)` alone,
// and the form with the CALL only when the server connection answers that it has no such
// statement (SQLSTATE 26000, which leaves nothing behind outside a transaction): that spares
// every execution the procedure call and the statement's text, and a server connection lacks a
// statement only the first time it is asked for it. Inside a transaction an error would abort
// the caller's transaction, so the CALL goes first there. The name is a hash of the
// statement's text, so two texts never share a name. The arguments are inlined as quoted
// literals, which PostgreSQL reads as it reads text parameters: each takes the type of its
// parameter in the prepared statement. Statements the store does not prepare still run as
// unnamed statements, planned each time.

// sqlPreparedName is the server-side name of statement q.
func sqlPreparedName(q string) string {
	h := sha256.Sum256([]byte(q))
	return "gw_" + hex.EncodeToString(h[:8])
}

// errMissingPrepared is the SQLSTATE of an EXECUTE of a statement the server connection lacks
// (invalid_sql_statement_name).
const errMissingPrepared = "26000"

// missingPrepared reports whether err says the server connection has no such prepared statement.
func missingPrepared(err error) bool {
	var e *pq.Error
	return errors.As(err, &e) && e.Code == errMissingPrepared
}

// sqlExecution is q as a statement prepared on the server connection under name: exec runs
// it; withPrepare also prepares it first, for a server connection that may lack it.
type sqlExecution struct{ q, name, exec string }

// withPrepare is exec preceded, in the same simple query, by the CALL that prepares q when the
// server connection lacks it. It is written only when sent: the statement's text, quoted, is
// the longest part of it.
func (x sqlExecution) withPrepare() string {
	return "CALL prepare_once('" + x.name + "', " + pq.QuoteLiteral(x.q) + "); " + x.exec
}

// executeSQL returns the simple queries that prepare q on the server connection when needed
// and execute it with args; ok is false when an argument cannot be written as a literal (a
// []byte whose parameter type is unknown), and the caller then runs q as an unnamed statement.
func (u *unpreparedConnector) executeSQL(ctx context.Context, q string, args []driver.NamedValue) (sqlExecution, bool) {
	var bytea []bool
	for _, a := range args {
		if b, ok := a.Value.([]byte); ok && b != nil {
			var known bool
			if bytea, known = u.byteaParams(ctx, q); !known {
				return sqlExecution{}, false
			}
			break
		}
	}
	name := sqlPreparedName(q)
	var b strings.Builder
	b.Grow(64)
	b.WriteString("EXECUTE ")
	b.WriteString(name)
	for i, a := range args {
		if i == 0 {
			b.WriteString("(")
		} else {
			b.WriteString(", ")
		}
		lit, ok := literal(a.Value, i < len(bytea) && bytea[i])
		if !ok {
			return sqlExecution{}, false
		}
		b.WriteString(lit)
	}
	if len(args) > 0 {
		b.WriteString(")")
	}
	return sqlExecution{q: q, name: name, exec: b.String()}, true
}

// literal writes v, a driver value, as a quoted SQL literal (NULL for nil), the text lib/pq
// would send as a text parameter; bytea says the parameter is bytea (a []byte is then hex).
func literal(v driver.Value, bytea bool) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "NULL", true
	case int64:
		return "'" + strconv.FormatInt(v, 10) + "'", true
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "'" + strconv.FormatFloat(v, 'g', -1, 64) + "'", true
		}
		return "'" + strconv.FormatFloat(v, 'f', -1, 64) + "'", true
	case bool:
		return "'" + strconv.FormatBool(v) + "'", true
	case string:
		return pq.QuoteLiteral(v), true
	case []byte:
		if v == nil {
			return "NULL", true
		}
		if bytea {
			return pq.QuoteLiteral(`\x` + hex.EncodeToString(v)), true
		}
		return pq.QuoteLiteral(string(v)), true
	case time.Time:
		return pq.QuoteLiteral(string(pq.FormatTimestamp(v))), true
	}
	return "", false
}
