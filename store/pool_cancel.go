package store

import (
	"context"
	"database/sql/driver"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// A pool behind a transaction pooler never sends a cancel request. lib/pq cancels a statement
// whose context ends by opening a second connection and sending the backend's cancel key, and
// PgBouncer 1.18 (Debian 12's) can crash on one: when the cancelling client goes away before the
// server side of the cancel is done, it exits with "FATAL ... disconnect_client(): bad client
// state: 0" (fixed in later PgBouncer releases), and takes every client's connection with it.
// So an unprepared pool gives lib/pq contexts without cancellation and, when the caller's
// context ends during a call, closes that connection's socket instead: the call returns the
// context's error, the connection is discarded, and PgBouncer closes its server connection as
// for any client that went away.

// connHolderKey carries a *connHolder in the context of a Connect, for holdingDialer.
type connHolderKey struct{}

// connHolder receives the socket a connection was dialled with.
type connHolder struct {
	mu sync.Mutex
	c  net.Conn
}

func (h *connHolder) set(c net.Conn) {
	h.mu.Lock()
	h.c = c
	h.mu.Unlock()
}

func (h *connHolder) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.c != nil {
		h.c.Close()
	}
}

// holdingDialer dials as lib/pq's default dialer does and hands the socket to the connHolder
// of the dial's context.
type holdingDialer struct{ d net.Dialer }

func (h holdingDialer) Dial(network, address string) (net.Conn, error) {
	return h.d.Dial(network, address)
}

func (h holdingDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout(network, address, timeout)
}

func (h holdingDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := h.d.DialContext(ctx, network, address)
	if err == nil {
		if holder, ok := ctx.Value(connHolderKey{}).(*connHolder); ok {
			holder.set(c)
		}
	}
	return c, err
}

// interrupter closes a connection's socket when a call's context ends before the call does.
type interrupter struct {
	sock        *connHolder
	interrupted atomic.Bool
}

// watch watches ctx during one call; the returned func ends the watch and reports the
// context's error when the call was interrupted.
func (in *interrupter) watch(ctx context.Context) func() error {
	done := ctx.Done()
	if done == nil {
		return func() error { return nil }
	}
	finished := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-done:
			in.interrupted.Store(true)
			in.sock.close()
		case <-finished:
		}
	}()
	return func() error {
		close(finished)
		wg.Wait()
		if in.interrupted.Load() {
			return ctx.Err()
		}
		return nil
	}
}

// interrupted calls of unpreparedConn run lib/pq's with a context that is never cancelled.

func (c *unpreparedConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	end := c.in.watch(ctx)
	res, err := c.pqConn.ExecContext(context.WithoutCancel(ctx), q, c.u.textArgs(ctx, q, args))
	if e := end(); e != nil {
		return nil, e
	}
	return res, err
}

func (c *unpreparedConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	end := c.in.watch(ctx)
	rows, err := c.pqConn.QueryContext(context.WithoutCancel(ctx), q, c.u.textArgs(ctx, q, args))
	if e := end(); e != nil {
		if rows != nil {
			rows.Close()
		}
		return nil, e
	}
	return rows, err
}

func (c *unpreparedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	end := c.in.watch(ctx)
	tx, err := c.pqConn.BeginTx(context.WithoutCancel(ctx), opts)
	if e := end(); e != nil {
		return nil, e
	}
	if err != nil {
		return nil, err
	}
	c.inTx = true
	return unpreparedTx{Tx: tx, c: c}, nil
}

func (c *unpreparedConn) Ping(ctx context.Context) error {
	end := c.in.watch(ctx)
	err := c.pqConn.Ping(context.WithoutCancel(ctx))
	if e := end(); e != nil {
		return e
	}
	return err
}

// IsValid and ResetSession discard a connection whose socket was closed.
func (c *unpreparedConn) IsValid() bool { return !c.in.interrupted.Load() && c.pqConn.IsValid() }

func (c *unpreparedConn) ResetSession(ctx context.Context) error {
	if c.in.interrupted.Load() {
		return driver.ErrBadConn
	}
	return c.pqConn.ResetSession(ctx)
}
