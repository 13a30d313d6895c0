// Package store is the only place that speaks SQL. Every method that touches tenant data takes
// the account id and every statement filters on it. Driver errors are translated here:
// callers see ErrNotFound and ErrConflict, never lib/pq types.
package store

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
)

// ErrNotFound is returned when the row asked for does not exist for the account.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a write would break a uniqueness rule.
var ErrConflict = errors.New("conflict")

// Store wraps the connection pool, the prepared hot-path statements and the key that
// encrypts secrets at rest.
type Store struct {
	db   *sqlx.DB
	aead cipher.AEAD // seals; also the first of readKeys
	// readKeys open: the current key, then the previous ones.
	readKeys []cipher.AEAD

	prepMu sync.Mutex
	stmts  sync.Map // SQL text -> *sqlx.Stmt

	wakers  eventWakers  // WakeOnEvents
	targets targetCache  // SendTarget's answers while CacheSendTargets is on
	limits  Limits       // SetLimits; zero means DefaultLimits
	replica replicaReads // SetReplica: the pool of the reads that may lag

	campaigns campaignNames // the campaign names messages are read with (withCampaignName)
	senders   senderCache   // RecordInbound's recent senders (inbound_senders.go)
}

// New returns a Store over db. secretKey must be 32 bytes (AES-256); previous keys (the one
// being rotated away from, GATEWAY_SECRET_KEY_PREVIOUS) are tried for reading only. New fails
// when a key is not 32 bytes.
func New(db *sqlx.DB, secretKey []byte, previous ...[]byte) (*Store, error) {
	var keys []cipher.AEAD
	for i, k := range append([][]byte{secretKey}, previous...) {
		if len(k) != 32 {
			if i == 0 {
				return nil, fmt.Errorf("secret key must be 32 bytes, got %d", len(k))
			}
			return nil, fmt.Errorf("previous secret key must be 32 bytes, got %d", len(k))
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		keys = append(keys, aead)
	}
	return &Store{db: db, aead: keys[0], readKeys: keys}, nil
}

// DB returns the underlying pool, for health checks and tests.
func (s *Store) DB() *sqlx.DB { return s.db }

// Close releases the prepared statements (the pool is closed by its owner).
func (s *Store) Close() {
	s.stmts.Range(func(k, v any) bool {
		v.(*sqlx.Stmt).Close()
		s.stmts.Delete(k)
		return true
	})
}

// prepared returns the server-side prepared statement for q, preparing it on first use.
// database/sql re-prepares it per connection as needed, so each later call is one
// Bind/Execute round trip with a cached plan (the biggest lever with lib/pq). Use it for
// hot-path statements with fixed shapes; plain queries are fine elsewhere.
func (s *Store) prepared(ctx context.Context, q string) (*sqlx.Stmt, error) {
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

// getPrepared runs a prepared single-row query into dst.
func (s *Store) getPrepared(ctx context.Context, dst any, q string, args ...any) error {
	st, err := s.prepared(ctx, q)
	if err != nil {
		return err
	}
	return translate(st.GetContext(ctx, dst, args...))
}

// translate maps driver errors to the package's errors.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return ErrNotFound
	case pq.As(err, pqerror.UniqueViolation) != nil:
		return fmt.Errorf("%w: %v", ErrConflict, err)
	}
	return err
}
