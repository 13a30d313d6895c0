package store

import "context"

// anyMessageByIDSQL reads account $1's message $2, sent or received.
var anyMessageByIDSQL = `SELECT ` + messageColumns + ` FROM messages m` + messageJoins + ` WHERE m.account_id = $1 AND m.id = $2`

// AnyMessageByID returns the account's message with that id whichever way it went (the
// dashboard's message page shows a customer's messages too), with its campaign's name as
// MessageByID reads it; ErrNotFound when the account has none. The API's reads stay with MessageByID, which returns outbound messages only.
func (s *Store) AnyMessageByID(ctx context.Context, accountID, id int64) (Message, error) {
	var row messageRow
	if err := s.db.QueryRowContext(ctx, anyMessageByIDSQL, accountID, id).Scan(row.fields()...); err != nil {
		return Message{}, translate(err)
	}
	m := row.message()
	return m, s.withCampaignName(ctx, &m)
}
