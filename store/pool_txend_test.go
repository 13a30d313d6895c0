package store_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

// lib/pq panics ("attempt to set nil err") when a transaction begun with a cancellable context
// is ended twice at the driver level (a rollback after its commit) and the second end finds
// the first one's signal still in the cancel watcher's channel: it takes that signal for the
// context's end and records the context's error, nil. It was seen behind PgBouncer as a 500
// from a describe that rolled back after committing. An unprepared pool begins every
// transaction without lib/pq's cancel watcher (pool_cancel.go interrupts by closing the
// socket instead), so ending one twice is an error, never a panic, however the goroutines are
// scheduled. Each round ends a fresh connection's transaction twice, the second end right
// after the first, which is when lib/pq's watcher has most likely not taken the signal yet.
func TestUnpreparedPoolTransactionEndedTwiceDoesNotPanic(t *testing.T) {
	t.Parallel()
	db, err := store.OpenPool(context.Background(), storetest.DirectDSN(storetest.DSN(t)), store.PoolOptions{MaxConns: 1, Unprepared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var second error
		err = conn.Raw(func(dc any) (err error) {
			defer func() {
				if p := recover(); p != nil {
					err = errors.New("panic: " + p.(string))
				}
			}()
			tx, err := dc.(driver.ConnBeginTx).BeginTx(ctx, driver.TxOptions{})
			if err != nil {
				return err
			}
			if err := tx.Commit(); err != nil {
				return err
			}
			second = tx.Rollback()
			return driver.ErrBadConn // the connection is not reused
		})
		conn.Close()
		cancel()
		if !errors.Is(err, driver.ErrBadConn) {
			t.Fatalf("round %d: %v", i, err)
		}
		if second == nil {
			t.Fatalf("round %d: a rollback after the commit succeeded", i)
		}
	}
}
