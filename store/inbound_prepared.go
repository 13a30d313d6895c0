package store

import (
	"context"
	"database/sql"

	"github.com/jmoiron/sqlx"
)

// The prepared statements RecordInbound runs, outside a transaction (preparedQueryer) and in
// one (preparedAll).

// preparedQueryer runs the queries of a function written for any sqlx.QueryerContext as the
// store's prepared statements, outside a transaction: one round trip each.
type preparedQueryer struct{ s *Store }

func (p preparedQueryer) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := p.s.prepared(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (p preparedQueryer) QueryxContext(ctx context.Context, q string, args ...any) (*sqlx.Rows, error) {
	st, err := p.s.prepared(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryxContext(ctx, args...)
}

func (p preparedQueryer) QueryRowxContext(ctx context.Context, q string, args ...any) *sqlx.Row {
	if st, err := p.s.prepared(ctx, q); err == nil {
		return st.QueryRowxContext(ctx, args...)
	}
	return p.s.db.QueryRowxContext(ctx, q, args...) // unprepared: the same answer, one round trip more
}

// preparedAll prepares several statements (see prepared).
func (s *Store) preparedAll(ctx context.Context, qs ...string) ([]*sqlx.Stmt, error) {
	out := make([]*sqlx.Stmt, len(qs))
	for i, q := range qs {
		st, err := s.prepared(ctx, q)
		if err != nil {
			return nil, err
		}
		out[i] = st
	}
	return out, nil
}
