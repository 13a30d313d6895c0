package store

import "context"

// MessageRef is what an answer needs of a message it quotes, reacts to or marks read: its
// platform id ("" until the platform accepted it) and its direction ("in" or "out").
type MessageRef struct {
	PlatformMessageID string `db:"platform_message_id"`
	Direction         string `db:"direction"`
	Status            string `db:"status"`
}

// MessageRefByID returns the account's message with that id, sent or received; ErrNotFound
// when it has none.
func (s *Store) MessageRefByID(ctx context.Context, accountID, id int64) (MessageRef, error) {
	var m MessageRef
	err := s.getPrepared(ctx, &m, `SELECT COALESCE(platform_message_id, '') AS platform_message_id, direction, status
		FROM messages WHERE account_id = $1 AND id = $2`, accountID, id)
	return m, err
}
