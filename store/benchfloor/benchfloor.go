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
	"errors"
	"fmt"
	"sync"

	"github.com/jmoiron/sqlx"

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
