package store

import (
	"context"
	"strconv"
	"unicode/utf8"
)

// The inbox's search by name or username: the conversations, in one view and after the page's
// cursor, whose contact's name or username contains the term, case-insensitively (ILIKE on a
// pattern with the term's LIKE wildcards escaped), latest activity first.
//
// The contacts that match are found without reading every contact: the names of contacts with
// a mobile in contact_name_suffixes (store/contacts.go, above ListContacts: a name contains the
// term exactly when one of its suffixes starts with it), the names of contacts without one and
// every username by their trigrams (contacts_inbox_search_name_idx and _username_idx,
// migration 000051; a term without a trigram reads those contacts one by one). A first
// statement counts them, reading no more than one past inboxNameNarrow. When they are
// few (at most inboxNameNarrow), each is joined to its conversation and the page is the newest
// of those: the search costs what it matches. When they are more, the view is walked instead,
// newest first, each conversation's contact checked, and the walk stops at the page's last
// match: a common term fills its page from the first conversations. The walk stops after
// inboxNameWalk conversations all the same (a term common among contacts may be rare among
// the view's newest conversations), and when it found less than a page, the page is taken
// from every matching contact joined to its conversation. Each way gives the exact page: the
// walk's matches are the newest of the view, and the other ways read every match.

// inboxNameNarrow is how many matching contacts a search joins to their conversations before
// it walks the view instead; inboxNameWalk is how many of the view's newest conversations
// (after the cursor) that walk reads at most.
var (
	inboxNameNarrow = 2000
	inboxNameWalk   = 2000
)

// inboxNameRows returns up to limit+1 rows of a page of a name search: cond is the view's
// condition on conversations v (and the cursor's), its arguments in condArgs after the
// account ($1). Each way is a statement of its own, so that each is planned for what it reads:
// a statement holding every way is planned and costed for all of them, and the cost of a way
// it does not take can start the JIT compiler (jit_above_cost) for a page that needs none.
// It fails when the database fails.
func (s *Store) inboxNameRows(ctx context.Context, accountID int64, cond string, condArgs []any, term string, limit int) ([]InboxRow, error) {
	pat := "%" + escapeLike(term) + "%"
	var n int
	if err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM (SELECT FROM (`+inboxNameMatchesSQL(term, "$2", "$3")+`) m LIMIT $4) m`,
		accountID, pat, term, inboxNameNarrow+1); err != nil {
		return nil, translate(err)
	}
	// param appends v to the statement's arguments and returns its placeholder.
	var args []any
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	// page is the statement that reads the rows of the conversation ids p picks.
	page := func(with, p, lim string) string {
		return `WITH ` + with + `p AS (` + p + `)
		` + inboxRowSQL + ` AND v.id = ANY (ARRAY(SELECT id FROM p)) ORDER BY v.last_activity_at DESC, v.id DESC LIMIT ` + lim
	}
	rows := []InboxRow{}
	if n <= inboxNameNarrow {
		// Each contact joined to its conversation by the contact's index (a nested loop,
		// whatever the estimate).
		args = append([]any{}, condArgs...)
		pt, tt, lim := param(pat), param(term), param(limit+1)
		q := page(`m AS MATERIALIZED (`+inboxNameMatchesSQL(term, pt, tt)+`), `, `SELECT v.id FROM (SELECT DISTINCT contact_id FROM m) m
			CROSS JOIN LATERAL (SELECT v.id, v.last_activity_at FROM conversations v
				WHERE v.account_id = $1 AND v.contact_id = m.contact_id AND v.last_activity_at IS NOT NULL`+cond+` LIMIT 1) v
			ORDER BY v.last_activity_at DESC, v.id DESC LIMIT `+lim, lim)
		err := s.db.SelectContext(ctx, &rows, q, args...)
		return rows, translate(err)
	}
	args = append([]any{}, condArgs...)
	pt, lim := param(pat), param(limit+1)
	q := page(``, `SELECT w.id FROM (SELECT v.id, v.last_activity_at, v.contact_id FROM conversations v
			WHERE v.account_id = $1 AND v.last_activity_at IS NOT NULL`+cond+`
			ORDER BY v.last_activity_at DESC, v.id DESC LIMIT `+strconv.Itoa(inboxNameWalk)+`) w
		JOIN LATERAL (SELECT FROM contacts k WHERE k.account_id = $1 AND k.id = w.contact_id
			AND (k.name ILIKE `+pt+` OR k.username ILIKE `+pt+`) LIMIT 1) k ON true
		ORDER BY w.last_activity_at DESC, w.id DESC LIMIT `+lim, lim)
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil || len(rows) > limit {
		return rows, translate(err)
	}
	// The walk found less than a page: every match, joined as the planner sees fit.
	args = append([]any{}, condArgs...)
	pt, tt, lim := param(pat), param(term), param(limit+1)
	q = page(``, `SELECT v.id FROM (SELECT DISTINCT contact_id FROM (`+inboxNameMatchesSQL(term, pt, tt)+`) m) m
			JOIN conversations v ON v.account_id = $1 AND v.contact_id = m.contact_id
			WHERE v.last_activity_at IS NOT NULL`+cond+`
			ORDER BY v.last_activity_at DESC, v.id DESC LIMIT `+lim, lim)
	rows = rows[:0]
	err := s.db.SelectContext(ctx, &rows, q, args...)
	return rows, translate(err)
}

// inboxNameMatchesSQL selects the ids (contact_id) of the account's contacts ($1) whose name
// or username is ILIKE pat, the placeholder of the term's pattern; tt is the term's. The
// names of contacts with a mobile come from contact_name_suffixes (nameSuffixMatch), a term
// longer than suffixLen then checked against the whole name. A contact can come from two sides
// (a name and a username).
func inboxNameMatchesSQL(term, pat, tt string) string {
	q := `SELECT s.contact_id FROM contact_name_suffixes s WHERE ` + nameSuffixMatch(tt)
	if utf8.RuneCountInString(term) > suffixLen {
		q += ` AND EXISTS (SELECT 1 FROM contacts k WHERE k.account_id = $1 AND k.id = s.contact_id AND k.name ILIKE ` + pat + `)`
	}
	return q + `
			UNION ALL
			SELECT k.id FROM contacts k WHERE k.account_id = $1 AND k.username IS NOT NULL AND k.username ILIKE ` + pat + `
			UNION ALL
			SELECT k.id FROM contacts k WHERE k.account_id = $1 AND k.mobile IS NULL AND k.name ILIKE ` + pat
}
