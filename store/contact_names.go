package store

import (
	"context"
)

// The name index's backlog (migration 000052): the new contacts of a large import
// (nameBacklogFrom) are listed and counted at once and join contact_name_suffixes, the name
// search's index, in batches after the import.

// NameBacklogAccounts returns up to limit accounts with contacts waiting for the name index,
// lowest id first: the indexer's work list, across accounts by design.
func (s *Store) NameBacklogAccounts(ctx context.Context, limit int) ([]int64, error) {
	ids := []int64{}
	err := s.db.SelectContext(ctx, &ids, `WITH RECURSIVE a AS (
			(SELECT account_id FROM contact_name_backlog ORDER BY account_id LIMIT 1)
			UNION ALL
			SELECT (SELECT b.account_id FROM contact_name_backlog b WHERE b.account_id > a.account_id ORDER BY b.account_id LIMIT 1)
			FROM a WHERE a.account_id IS NOT NULL
		)
		SELECT account_id FROM a WHERE account_id IS NOT NULL LIMIT $1`, limit)
	return ids, translate(err)
}

// IndexContactNames writes the name index of up to batch of the account's backlogged contacts
// in one transaction (contact_names_index_backlog) and returns how many backlog rows it took: 0
// when none is left (or another indexer holds them all).
func (s *Store) IndexContactNames(ctx context.Context, accountID int64, batch int) (int, error) {
	var n int
	err := s.db.GetContext(ctx, &n, `SELECT contact_names_index_backlog($1, $2)`, accountID, batch)
	return n, translate(err)
}

// NameBacklog reports whether some of the account's contacts are not in the name search yet
// (a large import's, being indexed).
func (s *Store) NameBacklog(ctx context.Context, accountID int64) (bool, error) {
	var waiting bool
	err := s.db.GetContext(ctx, &waiting, `SELECT EXISTS (SELECT FROM contact_name_backlog WHERE account_id = $1)`, accountID)
	return waiting, translate(err)
}
