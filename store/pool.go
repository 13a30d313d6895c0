package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// PoolOptions say how OpenPool talks to the server.
type PoolOptions struct {
	// MaxConns bounds the pool (16 when not positive).
	MaxConns int
	// Unprepared makes the pool safe behind a transaction pooler (PgBouncer in transaction
	// mode): no named prepared statement is made, so none is looked for on a server connection
	// that never saw it. The store's prepared statements then run as SQL prepared statements
	// of whichever server connection the pooler picks, prepared there on first use and
	// executed in the same round trip (pool_sqlprepare.go, the procedure prepare_once); other
	// statements run as unnamed statements with their parameters in the same round trip
	// (lib/pq's binary_parameters), which the pooler cannot split between two server
	// connections.
	Unprepared bool
	// DescribeDSN, with Unprepared, is a direct connection (no pooler) to the same schema, on
	// which an unprepared pool describes its statements (which parameters are bytea). Through
	// the pooler a describe would need a second server connection while its caller may hold one
	// in a transaction, and wait for it as long as the pooler's pool is taken. Empty means the
	// pool's own DSN.
	DescribeDSN string
	// Lazy skips the first connection: a server that does not answer yet is not an error.
	Lazy bool
}

// Open connects to PostgreSQL and checks the connection. maxConns bounds the pool (16 suits a
// two-core machine). It fails when the DSN is malformed or the server does not answer.
func Open(ctx context.Context, dsn string, maxConns int) (*sqlx.DB, error) {
	return OpenPool(ctx, dsn, PoolOptions{MaxConns: maxConns})
}

// OpenPool is Open with options. It fails when the DSN is malformed or the server does not
// answer.
func OpenPool(ctx context.Context, dsn string, o PoolOptions) (*sqlx.DB, error) {
	cfg, err := pq.NewConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	var conn driver.Connector
	if o.Unprepared {
		cfg.BinaryParameters = true
		c, err := pq.NewConnectorConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("open database: %w", err)
		}
		c.Dialer(holdingDialer{})
		u := &unpreparedConnector{c: c, describer: c}
		if o.DescribeDSN != "" {
			if u.describer, err = pq.NewConnector(o.DescribeDSN); err != nil {
				return nil, fmt.Errorf("open database (describe connection): %w", err)
			}
		}
		conn = u
	} else if conn, err = pq.NewConnectorConfig(cfg); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	db := sqlx.NewDb(sql.OpenDB(conn), "postgres")
	maxConns := o.MaxConns
	if maxConns <= 0 {
		maxConns = 16
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if o.Lazy {
		return db, nil
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return db, nil
}

// unpreparedConnector makes connections whose Prepare sends nothing: each execution of the
// statement prepares it on the server connection when that one lacks it and executes it, in one
// simple query (pool_sqlprepare.go), or runs it as a one-shot query (unnamed statement,
// parameters bound in the same round trip) when an argument cannot be inlined.
//
// In that mode lib/pq sends []byte parameters in binary format, which only bytea (and the text
// types, whose binary form is their text) read as the store means them: jsonb's binary form
// starts with a version byte. So a statement with a []byte parameter is described once, and
// each []byte parameter whose type is not bytea is sent as text instead.
type unpreparedConnector struct {
	c         *pq.Connector
	describer *pq.Connector // PoolOptions.DescribeDSN, else c
	bytea     sync.Map      // SQL text -> []bool: which parameters are bytea
	describes atomic.Int64  // names each describe's statement
	// descMu serialises describes on descConn, the describer's connection, kept open between
	// them (opening one starts a server process, which a request's first statements would wait
	// for) and closed after any error.
	descMu   sync.Mutex
	descConn pqConn
}

func (u *unpreparedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	sock := &connHolder{}
	c, err := u.c.Connect(context.WithValue(ctx, connHolderKey{}, sock))
	if err != nil {
		return nil, err
	}
	return &unpreparedConn{pqConn: c.(pqConn), u: u, in: &interrupter{sock: sock}}, nil
}

func (u *unpreparedConnector) Driver() driver.Driver { return u.c.Driver() }

// Close closes the describer's connection; database/sql calls it when the pool closes.
func (u *unpreparedConnector) Close() error {
	u.descMu.Lock()
	defer u.descMu.Unlock()
	if u.descConn != nil {
		u.descConn.Close()
		u.descConn = nil
	}
	return nil
}

// textArgs returns args with every []byte argument of a parameter that is not bytea as a
// string, which lib/pq sends in text format.
func (u *unpreparedConnector) textArgs(ctx context.Context, q string, args []driver.NamedValue) []driver.NamedValue {
	has := false
	for _, a := range args {
		if b, ok := a.Value.([]byte); ok && b != nil {
			has = true
			break
		}
	}
	if !has {
		return args
	}
	bytea, ok := u.byteaParams(ctx, q)
	if !ok {
		return args // as lib/pq would send them; the statement reports its own error
	}
	out := slices.Clone(args)
	for i, a := range out {
		if b, ok := a.Value.([]byte); ok && b != nil && (i >= len(bytea) || !bytea[i]) {
			out[i].Value = string(b)
		}
	}
	return out
}

// byteaParams says which of q's parameters are bytea, described once per statement text; ok
// is false when q could not be described.
func (u *unpreparedConnector) byteaParams(ctx context.Context, q string) (bytea []bool, ok bool) {
	if v, ok := u.bytea.Load(q); ok {
		return v.([]bool), true
	}
	bytea, err := u.describe(ctx, q)
	if err != nil {
		return nil, false
	}
	u.bytea.Store(q, bytea)
	return bytea, true
}

// describe finds which of q's parameters are bytea: it prepares q under a name of its own in a
// transaction of the describer's connection (the direct one when there is one), reads the
// parameter types, and deallocates it before the transaction ends. A PREPARE is not undone by a
// rollback, so the describe is not cut short by its caller's cancellation (its statements are
// bounded by the statement timeout), and its name is never reused: a statement left behind on
// a server connection a pooler hands on can neither collide with a later describe nor be found
// by one. A committed transaction is not rolled back: lib/pq's transaction end, run twice on a
// transaction with a cancellable context, can panic ("attempt to set nil err").
func (u *unpreparedConnector) describe(ctx context.Context, q string) (bytea []bool, err error) {
	ctx = context.WithoutCancel(ctx)
	u.descMu.Lock()
	defer u.descMu.Unlock()
	if u.descConn == nil {
		dc, err := u.describer.Connect(ctx)
		if err != nil {
			return nil, err
		}
		u.descConn = dc.(pqConn)
	}
	c := u.descConn
	defer func() {
		if err != nil {
			c.Close()
			u.descConn = nil
		}
	}()
	tx, err := c.BeginTx(ctx, driver.TxOptions{})
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			tx.Rollback()
		}
	}()
	name := fmt.Sprintf("gateway_describe_%d_%d", time.Now().UnixNano(), u.describes.Add(1))
	if _, err := c.ExecContext(ctx, `PREPARE `+name+` AS `+q, nil); err != nil {
		return nil, err
	}
	rows, err := c.QueryContext(ctx, `SELECT array_to_string(parameter_types::text[], ',') FROM pg_prepared_statements
		WHERE name = '`+name+`'`, nil)
	if err != nil {
		return nil, err
	}
	v := make([]driver.Value, 1)
	err = rows.Next(v)
	rows.Close()
	if err != nil {
		return nil, err
	}
	if _, err := c.ExecContext(ctx, `DEALLOCATE `+name, nil); err != nil {
		return nil, err
	}
	committed = true
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	var types string
	switch t := v[0].(type) {
	case string:
		types = t
	case []byte:
		types = string(t)
	}
	for _, t := range strings.Split(types, ",") {
		bytea = append(bytea, t == "bytea")
	}
	return bytea, nil
}

// pqConn is what lib/pq's connection implements and database/sql uses.
type pqConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

type unpreparedConn struct {
	pqConn
	u  *unpreparedConnector
	in *interrupter // pool_cancel.go
	// inTx is true between BeginTx and the transaction's end (database/sql uses a connection
	// from one goroutine at a time).
	inTx bool
}

func (c *unpreparedConn) Prepare(q string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), q)
}

// PrepareContext describes q now, once per statement text (a statement the store prepares is
// prepared outside any transaction first), so that its executions find the description.
func (c *unpreparedConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	c.u.byteaParams(ctx, q)
	return &unpreparedStmt{c: c, q: q}, nil
}

type unpreparedStmt struct {
	c *unpreparedConn
	q string
}

var errLegacyCall = errors.New("store: statement called without a context")

func (s *unpreparedStmt) Close() error  { return nil }
func (s *unpreparedStmt) NumInput() int { return -1 }

// Exec and Query are never called: database/sql uses the context variants.
func (s *unpreparedStmt) Exec([]driver.Value) (driver.Result, error) { return nil, errLegacyCall }
func (s *unpreparedStmt) Query([]driver.Value) (driver.Rows, error)  { return nil, errLegacyCall }

// ExecContext and QueryContext run the statement prepared on the server connection
// (pool_sqlprepare.go), or as an unnamed statement when an argument cannot be inlined.
func (s *unpreparedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	x, ok := s.c.u.executeSQL(ctx, s.q, args)
	if !ok {
		return s.c.ExecContext(ctx, s.q, args)
	}
	if !s.c.inTx {
		res, err := s.c.ExecContext(ctx, x.exec, nil)
		if !missingPrepared(err) {
			return res, err
		}
	}
	return s.c.ExecContext(ctx, x.withPrepare(), nil)
}

func (s *unpreparedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	x, ok := s.c.u.executeSQL(ctx, s.q, args)
	if !ok {
		return s.c.QueryContext(ctx, s.q, args)
	}
	if !s.c.inTx {
		rows, err := s.c.QueryContext(ctx, x.exec, nil)
		if !missingPrepared(err) {
			return rows, err
		}
	}
	return s.c.QueryContext(ctx, x.withPrepare(), nil)
}

// unpreparedTx is a transaction of an unpreparedConn, which knows while it is open that an
// error would abort it.
type unpreparedTx struct {
	driver.Tx
	c *unpreparedConn
}

func (t unpreparedTx) Commit() error {
	t.c.inTx = false
	return t.Tx.Commit()
}

func (t unpreparedTx) Rollback() error {
	t.c.inTx = false
	return t.Tx.Rollback()
}
