package store

import (
	"fmt"
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
// migration 000051; a term without a trigram reads those contacts one by one). When they are
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

// inboxNameSearchSQL is the statement of a page of a name search: cond is the view's condition
// on conversations v (and the cursor's), its arguments already in args after the account ($1);
// the term's arguments and the limit are appended to args. The statement picks the page's
// conversation ids (p), then reads their rows as inboxRowSQL does.
func inboxNameSearchSQL(cond, term string, limit int, args *[]any) string {
	*args = append(*args, "%"+escapeLike(term)+"%", limit+1)
	pat, lim := "$"+strconv.Itoa(len(*args)-1), "$"+strconv.Itoa(len(*args))
	// The suffix side: one row per contact with a mobile whose name holds the term's first
	// suffixLen characters (first_len: the row at the first occurrence, migration 000021); a
	// longer term is then checked against the whole name. A contact can come from two sides
	// (a name and a username): the narrow way counts it twice and joins it once.
	*args = append(*args, term)
	cut := `left(lower($` + strconv.Itoa(len(*args)) + `::text), ` + strconv.Itoa(suffixLen) + `)`
	matches := `SELECT s.contact_id FROM contact_name_suffixes s
			WHERE s.account_id = $1 AND s.suffix >= ` + cut + ` COLLATE "C" AND s.suffix < ` + cut + ` || chr(1114111) COLLATE "C"
				AND s.first_len <= length(` + cut + `)`
	if utf8.RuneCountInString(term) > suffixLen {
		matches += ` AND EXISTS (SELECT 1 FROM contacts k WHERE k.account_id = $1 AND k.id = s.contact_id AND k.name ILIKE ` + pat + `)`
	}
	matches += `
			UNION ALL
			SELECT k.id FROM contacts k WHERE k.account_id = $1 AND k.username IS NOT NULL AND k.username ILIKE ` + pat + `
			UNION ALL
			SELECT k.id FROM contacts k WHERE k.account_id = $1 AND k.mobile IS NULL AND k.name ILIKE ` + pat
	// a holds the matches, read only as far as a statement needs them: n reads up to one more
	// than inboxNameNarrow to tell whether the search is narrow. The narrow way joins each
	// contact to its conversation by the contact's index (a nested loop, whatever the
	// estimate); the last way, for many matches, lets the planner join.
	return fmt.Sprintf(`WITH a AS MATERIALIZED (%[1]s),
	n AS MATERIALIZED (SELECT count(*) <= %[2]d AS narrow FROM (SELECT FROM a LIMIT %[2]d + 1) a),
	w AS MATERIALIZED (
		SELECT w.id FROM (SELECT v.id, v.last_activity_at, v.contact_id FROM conversations v
			WHERE v.account_id = $1 AND v.last_activity_at IS NOT NULL%[3]s
			ORDER BY v.last_activity_at DESC, v.id DESC LIMIT %[4]d) w
		JOIN LATERAL (SELECT FROM contacts k WHERE k.account_id = $1 AND k.id = w.contact_id
			AND (k.name ILIKE %[5]s OR k.username ILIKE %[5]s) LIMIT 1) k ON true
		WHERE NOT (SELECT narrow FROM n)
		ORDER BY w.last_activity_at DESC, w.id DESC LIMIT %[6]s),
	p AS (
		(SELECT v.id FROM (SELECT DISTINCT contact_id FROM a) m
			CROSS JOIN LATERAL (SELECT v.id, v.last_activity_at FROM conversations v
				WHERE v.account_id = $1 AND v.contact_id = m.contact_id AND v.last_activity_at IS NOT NULL%[3]s LIMIT 1) v
			WHERE (SELECT narrow FROM n)
			ORDER BY v.last_activity_at DESC, v.id DESC LIMIT %[6]s)
		UNION ALL
		SELECT id FROM w WHERE (SELECT count(*) FROM w) = %[6]s
		UNION ALL
		(SELECT v.id FROM (SELECT DISTINCT contact_id FROM a) m
			JOIN conversations v ON v.account_id = $1 AND v.contact_id = m.contact_id
			WHERE NOT (SELECT narrow FROM n) AND (SELECT count(*) FROM w) < %[6]s AND v.last_activity_at IS NOT NULL%[3]s
			ORDER BY v.last_activity_at DESC, v.id DESC LIMIT %[6]s))
	`, matches, inboxNameNarrow, cond, inboxNameWalk, pat, lim) + inboxRowSQL + `
		AND v.id = ANY (ARRAY(SELECT id FROM p)) ORDER BY v.last_activity_at DESC, v.id DESC LIMIT ` + lim
}
