package store

import (
	"context"
	"strings"
	"time"
)

// DeadLetter is an item of a platform webhook delivery that could not be applied, kept with
// its error (platform_dead_letters) so the rest of the delivery could be.
type DeadLetter struct {
	ID        int64     `db:"id" json:"id"`
	WebhookID *int64    `db:"webhook_id" json:"webhook_id,omitempty"` // the raw delivery (platform_webhooks)
	AccountID *int64    `db:"account_id" json:"account_id,omitempty"` // nil when the tenant was not known
	Kind      string    `db:"kind" json:"kind"`                       // status, message, template_status, sandbox, change
	Item      []byte    `db:"item" json:"-"`                          // the item as JSON
	Error     string    `db:"error" json:"error"`
	CreatedAt time.Time `db:"created_at" json:"created_at"`
}

// RecordDeadLetter stores a dead letter. The item is stored as bytes, whatever it holds; the
// error text is made storable (NUL removed, invalid UTF-8 replaced). It fails only when the
// database does.
func (s *Store) RecordDeadLetter(ctx context.Context, d DeadLetter) (int64, error) {
	msg := strings.ToValidUTF8(strings.ReplaceAll(d.Error, "\x00", ""), "\uFFFD")
	var id int64
	err := s.db.GetContext(ctx, &id, `INSERT INTO platform_dead_letters (webhook_id, account_id, kind, item, error)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`, d.WebhookID, d.AccountID, d.Kind, d.Item, msg)
	return id, translate(err)
}

// DeleteDeadLettersBefore deletes up to limit dead letters created before cutoff, oldest
// first, and returns how many. It fails only when the database does.
func (s *Store) DeleteDeadLettersBefore(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	return s.execCount(ctx, `DELETE FROM platform_dead_letters WHERE id IN (
		SELECT id FROM platform_dead_letters WHERE created_at < $1 ORDER BY created_at LIMIT $2)`, cutoff, limit)
}

// DeadLetters lists the newest dead letters, at most limit, newest first; an empty list when
// there are none. It fails only when the database does.
func (s *Store) DeadLetters(ctx context.Context, limit int) ([]DeadLetter, error) {
	out := []DeadLetter{}
	err := s.db.SelectContext(ctx, &out, `SELECT id, webhook_id, account_id, kind, item, error, created_at
		FROM platform_dead_letters ORDER BY id DESC LIMIT $1`, limit)
	return out, translate(err)
}
