package store

import (
	"context"
	"time"
)

// Retention of what test and demo keys write.

// DeleteTestMessagesBefore deletes up to limit test-mode messages sent before cutoff, oldest
// first, and returns how many. It fails only when the database does.
func (s *Store) DeleteTestMessagesBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return s.execCount(ctx, `DELETE FROM test_messages WHERE id IN (
		SELECT id FROM test_messages WHERE created_at < $1 ORDER BY created_at LIMIT $2)`, cutoff, limit)
}
