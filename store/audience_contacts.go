package store

import (
	"context"

	"github.com/lib/pq"
)

// The contact listing narrowed to a tag, and tagging a whole listing (the dashboard's
// contacts page). Within a tag, a search matches a part of the name or of the number.

// taggedContacts is the condition of a contact c in the account ($1) with the tag ($2) whose
// name or number contains the search ($3, "" for all).
const taggedContacts = `c.account_id = $1
	AND EXISTS (SELECT FROM contact_tags t WHERE t.account_id = $1 AND t.tag = $2 AND t.contact_id = c.id)
	AND ($3 = '' OR strpos(lower(c.name), lower($3)) > 0 OR strpos(coalesce(c.mobile, ''), $3) > 0)`

// TaggedContacts returns a page of the account's contacts with the tag (newest first) whose
// name or number contains search, and how many there are.
func (s *Store) TaggedContacts(ctx context.Context, accountID int64, tag, search string, limit, offset int) (ContactPage, error) {
	var rows []struct {
		Contact
		Total int `db:"total"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT count(*) OVER () AS total, `+contactColumnsOf("c.")+` FROM contacts c
		WHERE `+taggedContacts+` ORDER BY c.created_at DESC, c.id DESC LIMIT $4 OFFSET $5`,
		accountID, tag, search, limit, offset); err != nil {
		return ContactPage{}, translate(err)
	}
	page := ContactPage{Contacts: make([]Contact, 0, len(rows))}
	for _, r := range rows {
		page.Contacts = append(page.Contacts, r.Contact)
		page.Total = r.Total
	}
	if len(rows) == 0 && offset > 0 {
		if err := s.db.GetContext(ctx, &page.Total, `SELECT count(*) FROM contacts c WHERE `+taggedContacts,
			accountID, tag, search); err != nil {
			return ContactPage{}, translate(err)
		}
	}
	return page, nil
}

// TagListing gives tag to every contact of the listing: those with the tag filterTag whose
// name or number contains search, or every contact of the account when filterTag is ""
// (search is then ignored). It returns how many gained the tag.
func (s *Store) TagListing(ctx context.Context, accountID int64, filterTag, search, tag string) (int64, error) {
	q := `INSERT INTO contact_tags (account_id, contact_id, tag) SELECT c.account_id, c.id, $4 FROM contacts c WHERE ` + taggedContacts + `
		ON CONFLICT DO NOTHING`
	args := []any{accountID, filterTag, search, tag}
	if filterTag == "" {
		q, args = `INSERT INTO contact_tags (account_id, contact_id, tag) SELECT account_id, id, $2 FROM contacts WHERE account_id = $1
			ON CONFLICT DO NOTHING`, []any{accountID, tag}
	}
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

// UntagListing takes tag from every contact of the listing TagListing names, and returns how
// many lost it.
func (s *Store) UntagListing(ctx context.Context, accountID int64, filterTag, search, tag string) (int64, error) {
	q := `DELETE FROM contact_tags d USING contacts c WHERE d.account_id = $1 AND d.tag = $4 AND d.contact_id = c.id AND ` + taggedContacts
	args := []any{accountID, filterTag, search, tag}
	if filterTag == "" {
		q, args = `DELETE FROM contact_tags WHERE account_id = $1 AND tag = $2`, []any{accountID, tag}
	}
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

// ContactTags returns the tags of the account's contacts, by contact id (contacts without a
// tag are left out), each list in name order.
func (s *Store) ContactTags(ctx context.Context, accountID int64, contactIDs []int64) (map[int64][]string, error) {
	var rows []struct {
		ContactID int64  `db:"contact_id"`
		Tag       string `db:"tag"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT contact_id, tag FROM contact_tags
		WHERE account_id = $1 AND contact_id = ANY($2) ORDER BY contact_id, tag`, accountID, pq.Int64Array(contactIDs)); err != nil {
		return nil, translate(err)
	}
	out := map[int64][]string{}
	for _, r := range rows {
		out[r.ContactID] = append(out[r.ContactID], r.Tag)
	}
	return out, nil
}
