package store

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lib/pq"
)

// Contact is a person known to the account by a number, a business-scoped user id, or both.
type Contact struct {
	ID        int64  `db:"id" json:"id"`
	AccountID int64  `db:"account_id" json:"account_id"`
	Mobile    string `db:"mobile" json:"mobile"` // "" when only the user id is known
	Name      string `db:"name" json:"name"`
	Note      string `db:"note" json:"note"`
	Blocked   bool   `db:"blocked" json:"blocked"`
	// The platform's business-scoped identity, "" when not known.
	UserID       string    `db:"user_id" json:"user_id,omitempty"`
	ParentUserID string    `db:"parent_user_id" json:"parent_user_id,omitempty"`
	Username     string    `db:"username" json:"username,omitempty"`
	CreatedAt    time.Time `db:"created_at" json:"created_at"`
	// WindowExpiresAt is when the person's service window closes, nil when they never wrote;
	// read by FillServiceWindows, not with the contact.
	WindowExpiresAt *time.Time `db:"-" json:"window_expires_at,omitempty"`
}

// ContactInput is an upsert: nil fields keep their stored values (or default to "" on create).
// The name is stored as firstname and lastname (name is their join, kept by the database):
// Firstname or Lastname replaces that part only; Name, when neither is given, replaces the
// whole name (split at its first space).
type ContactInput struct {
	Mobile    string // digits only, already normalised
	Firstname *string
	Lastname  *string
	Name      *string
	Note      *string
}

// contactColumnsOf is the select list of a Contact, each column prefixed with p (a table alias
// and a dot, or ""); an identifier the contact does not have reads as "".
func contactColumnsOf(p string) string {
	return p + `id, ` + p + `account_id, COALESCE(` + p + `mobile, '') AS mobile, ` + p + `name, ` + p + `note, ` +
		p + `blocked, ` + p + `created_at, COALESCE(` + p + `user_id, '') AS user_id, COALESCE(` + p +
		`parent_user_id, '') AS parent_user_id, COALESCE(` + p + `username, '') AS username`
}

var contactColumns = contactColumnsOf("")

// UpsertContact creates the contact or updates it when the mobile is already known, in one
// statement, so concurrent calls with one mobile never create a duplicate. A creation writes
// its contact.created event in the same statement. created reports whether a row was made.
// A mobile that is another form of a known contact's number, or one of its aliases (see
// ContactByMobile), updates that contact.
func (s *Store) UpsertContact(ctx context.Context, accountID int64, in ContactInput) (c Contact, created bool, err error) {
	switch known, err := s.ContactByMobile(ctx, accountID, in.Mobile); {
	case err == nil:
		in.Mobile = known.Mobile
	case !errors.Is(err, ErrNotFound):
		return Contact{}, false, err
	}
	var row struct {
		Contact
		Created bool `db:"created"`
	}
	// A part given wins over a whole name (the trigger contacts_name_parts rebuilds name).
	name := in.Name
	if in.Firstname != nil || in.Lastname != nil {
		name = nil
	}
	err = s.getPrepared(ctx, &row, `WITH c AS (
			INSERT INTO contacts (account_id, mobile, name, note, firstname, lastname)
			VALUES ($1, $2, COALESCE($3, ''), COALESCE($4, ''), COALESCE($5, ''), COALESCE($6, ''))
			ON CONFLICT (account_id, mobile) DO UPDATE
				SET name = COALESCE($3, contacts.name), note = COALESCE($4, contacts.note),
					firstname = COALESCE($5, contacts.firstname), lastname = COALESCE($6, contacts.lastname), updated_at = now()
			RETURNING `+contactColumns+`, (xmax = 0) AS created
		), e AS (
			INSERT INTO events (account_id, type, data)
			SELECT c.account_id, 'contact.created', jsonb_build_object('contact_id', c.id, 'mobile', c.mobile, 'name', c.name)
			FROM c WHERE c.created
		)
		SELECT * FROM c`, accountID, in.Mobile, name, in.Note, in.Firstname, in.Lastname)
	if err == nil && row.Created {
		s.eventsWritten()
	}
	return row.Contact, row.Created, err
}

// ContactPage is one page of a contact listing.
type ContactPage struct {
	Contacts []Contact
	Total    int
}

// suffixLen is how many characters of each name suffix contact_name_suffixes keeps
// (contact_name_suffix_rows in store/schema.sql; TestSuffixLenAgreesWithSQL); a longer search term is narrowed by its first suffixLen
// characters and then checked against the name.
const suffixLen = 16

// nameSuffixMatch is the condition on contact_name_suffixes s that keeps, of the account's ($1)
// contacts whose name holds the first suffixLen characters of the term (the placeholder tt),
// one row each: a range of the suffixes that start with the cut term, and of a contact's rows
// there the one at the term's first occurrence in its name (first_len, migration 000021). A
// term longer than suffixLen must then be checked against the whole name.
func nameSuffixMatch(tt string) string {
	cut := `left(lower(` + tt + `::text), ` + strconv.Itoa(suffixLen) + `)`
	return `s.account_id = $1 AND s.suffix >= ` + cut + ` COLLATE "C" AND s.suffix < ` + cut + ` || chr(1114111) COLLATE "C"
				AND s.first_len <= length(` + cut + `)`
}

// newestWindow is how many of the account's newest contacts a broad name search reads for
// its page before it falls back to sorting every match (contactListQuery).
const newestWindow = 2000

// mobileProbe is how many digits of a phone fragment probe the mobile trigram index.
const mobileProbe = 7

// ListContacts returns the account's contacts newest first, one page, and how many match,
// in one statement (one snapshot, so the total and the page agree).
//
// Without a search the total is the account's count kept in contact_counts (exact: it is
// written in the transaction that writes the contact), and the page is a walk of the
// newest-first index: the cost does not grow with the account.
//
// A non-empty search matches the name (case-insensitive substring) or, when it is a phone
// fragment (IsPhoneFragment), the mobile (substring of its digits). The name side is a range scan of
// contact_name_suffixes, the suffixes of every name: a name contains the term exactly when
// one of its suffixes starts with it, and that index holds the contact's id and created_at,
// so the matching contacts are counted exactly, and the page picked, without reading the
// contacts table. Of a contact's suffixes that start with the term, only the one at the
// term's first occurrence in the name is counted (first_len, migration 000021), so a name
// that holds the term twice counts once without a DISTINCT over the matches. What a search
// reads is therefore bounded by the number of contacts it matches (one index entry for each
// suffix that starts with the term), never by the size of the account: a common surname
// matching 14,000 of 1,000,000 contacts reads about 14,000 index entries; a broad term takes
// its page from the account's newest contacts (contactListQuery). The mobile side probes the digit trigram index with the fragment's last 7
// digits and checks the account and the whole fragment on the rows it finds. Terms of one or
// two characters match most names and read most of the account's suffixes: they stay exact,
// and cost what they match.
//
// It lists only contacts with a mobile (what a v1 client may receive); ListContactsWith lists
// the others too on request.
func (s *Store) ListContacts(ctx context.Context, accountID int64, search string, limit, offset int) (ContactPage, error) {
	return s.ListContactsWith(ctx, accountID, ContactListOptions{Search: search, Limit: limit, Offset: offset})
}

// ContactListOptions selects a page of the contact listing (ListContactsWith).
type ContactListOptions struct {
	Search        string
	Limit, Offset int
	// WithoutMobile also lists the contacts known only by a user id (left out by default, so
	// that a v1 client never receives a contact without a mobile).
	WithoutMobile bool
}

// ListContactsWith is ListContacts with options. A search that is a business-scoped user id
// (two capital letters and a dot, as "US.13491208655302741918") finds the contact with that
// user id. With WithoutMobile the page merges the contacts with a mobile (ListContacts' query)
// and those without one (read from their own small index, contacts_no_mobile_idx; a search
// matches their name or username), newest first; the total counts both.
func (s *Store) ListContactsWith(ctx context.Context, accountID int64, o ContactListOptions) (ContactPage, error) {
	search := strings.TrimSpace(o.Search)
	if LooksLikeUserID(search) {
		page := ContactPage{Contacts: []Contact{}}
		err := s.db.SelectContext(ctx, &page.Contacts, `SELECT `+contactColumns+` FROM contacts
			WHERE account_id = $1 AND user_id = $2 AND ($3 OR mobile IS NOT NULL) LIMIT $4 OFFSET $5`,
			accountID, search, o.WithoutMobile, o.Limit, o.Offset)
		if err != nil {
			return ContactPage{}, translate(err)
		}
		// One contact at most has a user id; the total is whether it matched, whatever the page.
		if err := s.db.GetContext(ctx, &page.Total, `SELECT count(*) FROM contacts
			WHERE account_id = $1 AND user_id = $2 AND ($3 OR mobile IS NOT NULL)`, accountID, search, o.WithoutMobile); err != nil {
			return ContactPage{}, translate(err)
		}
		return page, nil
	}
	if !o.WithoutMobile {
		return s.listContactsWithMobile(ctx, accountID, search, o.Limit, o.Offset)
	}
	// Both pages from the top to the requested page's end, merged.
	end := o.Limit + o.Offset
	with, err := s.listContactsWithMobile(ctx, accountID, search, end, 0)
	if err != nil {
		return ContactPage{}, err
	}
	var rows []struct {
		Contact
		Total int `db:"total"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT count(*) OVER () AS total, `+contactColumns+` FROM contacts
		WHERE account_id = $1 AND mobile IS NULL
			AND ($2 = '' OR strpos(lower(name), lower($2)) > 0 OR strpos(lower(COALESCE(username, '')), lower($2)) > 0)
		ORDER BY created_at DESC, id DESC LIMIT $3`, accountID, search, end); err != nil {
		return ContactPage{}, translate(err)
	}
	merged := with.Contacts
	total := with.Total
	for _, r := range rows {
		merged = append(merged, r.Contact)
		total = with.Total + r.Total
	}
	slices.SortStableFunc(merged, func(a, b Contact) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	page := ContactPage{Contacts: []Contact{}, Total: total}
	if o.Offset < len(merged) {
		page.Contacts = append(page.Contacts, merged[o.Offset:min(end, len(merged))]...)
	}
	return page, nil
}

// LooksLikeUserID reports whether a search term has the shape of a business-scoped user id:
// two capital letters, a dot, and more. Such a term is looked up as a user id, never as a name
// or a phone number (by ListContactsWith, and by the test mode's fixtures alike).
func LooksLikeUserID(s string) bool {
	return len(s) > 3 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z' && s[2] == '.' &&
		!strings.ContainsAny(s, " ")
}

// listContactsWithMobile is ListContacts' one statement.
func (s *Store) listContactsWithMobile(ctx context.Context, accountID int64, search string, limit, offset int) (ContactPage, error) {
	page := ContactPage{Contacts: []Contact{}}
	q := contactListQuery(accountID, search, limit, offset)
	var rows []contactListRow
	if err := s.selectMayLag(ctx, &rows, q.sql, q.args...); err != nil {
		return page, err
	}
	for _, r := range rows {
		page.Total = int(r.Total)
		if r.ID != nil {
			page.Contacts = append(page.Contacts, Contact{ID: *r.ID, AccountID: *r.AccountID, Mobile: *r.Mobile,
				Name: *r.Name, Note: *r.Note, Blocked: *r.Blocked, CreatedAt: *r.CreatedAt, UserID: *r.UserID,
				ParentUserID: *r.ParentUserID, Username: *r.Username})
		}
	}
	return page, nil
}

// contactListRow is a row of the listing: the total, and a contact of the page (all NULL
// when the page is empty: the row then carries only the total).
type contactListRow struct {
	Total     int64      `db:"total"`
	ID        *int64     `db:"id"`
	AccountID *int64     `db:"account_id"`
	Mobile    *string    `db:"mobile"`
	Name      *string    `db:"name"`
	Note      *string    `db:"note"`
	Blocked   *bool      `db:"blocked"`
	CreatedAt *time.Time `db:"created_at"`
	// The identity columns (contactColumnsOf reads NULL as "", but a page-less row is all NULL).
	UserID       *string `db:"user_id"`
	ParentUserID *string `db:"parent_user_id"`
	Username     *string `db:"username"`
}

// contactListing is the statement of a listing with its arguments; contactListQuery builds it
// (ListContacts runs it, the benchmark explains it).
type contactListing struct {
	sql  string
	args []any
}

func contactListQuery(accountID int64, search string, limit, offset int) contactListing {
	search = strings.TrimSpace(search)
	if search == "" {
		return contactListing{sql: `SELECT t.total, p.* FROM
			(SELECT COALESCE(sum(n), 0) AS total FROM contact_counts WHERE account_id = $1) t
			LEFT JOIN LATERAL (SELECT ` + contactColumns + ` FROM contacts WHERE account_id = $1 AND mobile IS NOT NULL
				ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3) p ON true
			ORDER BY p.created_at DESC, p.id DESC`, args: []any{accountID, limit, offset}}
	}
	// $1 account, $2 limit, $3 offset, $4 the term, then the LIKE pattern of the whole term
	// (only for a term longer than suffixLen) and that of its digits (only when it has any).
	// first_len <= the cut term's length keeps, of a contact's suffixes that start with the
	// term, the one at the term's first occurrence in the name (migration 000021): one row per
	// matching contact, so neither the count nor the page needs a DISTINCT.
	args := []any{accountID, limit, offset, search}
	name := `SELECT s.contact_id AS id, s.created_at FROM contact_name_suffixes s
			WHERE ` + nameSuffixMatch("$4")
	if utf8.RuneCountInString(search) > suffixLen {
		args = append(args, "%"+escapeLike(search)+"%")
		name += ` AND EXISTS (SELECT 1 FROM contacts c WHERE c.account_id = $1 AND c.id = s.contact_id
				AND lower(c.name) LIKE lower($` + strconv.Itoa(len(args)) + `::text))`
	}
	page := `SELECT ` + contactColumnsOf("c.") + ` FROM p JOIN contacts c ON c.id = p.id AND c.account_id = $1`
	if digits := onlyDigits(search); digits != "" && IsPhoneFragment(search) {
		// The trigram index is probed with the last mobileProbe digits only (a longer run costs
		// a posting list per trigram and selects no better; the leading digits are country
		// codes, shared by many numbers), and the whole run is checked on the rows found. A
		// contact can match on both sides: UNION keeps it once.
		probe := digits[max(len(digits)-mobileProbe, 0):]
		args = append(args, "%"+probe+"%", digits)
		m := name + `
			UNION
			SELECT id, created_at FROM contacts WHERE account_id = $1 AND mobile LIKE $` + strconv.Itoa(len(args)-1) + `::text
				AND strpos(mobile, $` + strconv.Itoa(len(args)) + `::text) > 0`
		return contactListing{args: args, sql: `WITH m AS MATERIALIZED (` + m + `),
			p AS (SELECT id FROM m ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3)
			SELECT t.total, c.* FROM (SELECT count(*) AS total FROM m) t
			LEFT JOIN LATERAL (` + page + `) c ON true
			ORDER BY c.created_at DESC, c.id DESC`}
	}
	// A name search counts its range of the index. The page is the newest matches: when the
	// matches are many for the account's size (a broad term: "mari" matches about 6 % of
	// the contacts), expected among the newestWindow newest contacts at least twice over,
	// those contacts are read newest first and checked against the name, which stops at the
	// page's last match; when that window holds too few (matches bunched in older contacts),
	// or the term is narrow, the page is a bounded top-N sort of the range, which reads what
	// the count read. Either way the page is exact: the window's matches are newer than any
	// match outside it.
	return contactListing{args: args, sql: `WITH t AS MATERIALIZED (SELECT count(*) AS total FROM (` + name + `) n),
		w AS MATERIALIZED (
			SELECT c.id, c.created_at FROM (SELECT id, created_at, name FROM contacts WHERE account_id = $1
				ORDER BY created_at DESC, id DESC LIMIT ` + strconv.Itoa(newestWindow) + `) c
			WHERE (SELECT total FROM t) * ` + strconv.Itoa(newestWindow) + ` >= 2 * ($2::int + $3::int)
					* (SELECT COALESCE(sum(n), 0) FROM contact_counts WHERE account_id = $1)
				AND strpos(lower(c.name), lower($4::text)) > 0
			ORDER BY c.created_at DESC, c.id DESC LIMIT $2::int + $3::int),
		p AS (
			(SELECT id FROM w WHERE (SELECT count(*) FROM w) >= $2::int + $3::int ORDER BY created_at DESC, id DESC OFFSET $3)
			UNION ALL
			(SELECT id FROM (` + name + `) n WHERE (SELECT count(*) FROM w) < $2::int + $3::int
				ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3))
		SELECT t.total, c.* FROM t
		LEFT JOIN LATERAL (` + page + `) c ON true
		ORDER BY c.created_at DESC, c.id DESC`}
}

// SetContactBlocked blocks or unblocks the person with that mobile: every contact of the account
// that is the mobile or another form of it, as a mobile or an alias (see ContactByMobile), in
// one statement. It returns the best match; ErrNotFound when the account has no such contact.
func (s *Store) SetContactBlocked(ctx context.Context, accountID int64, mobile string, blocked bool) (Contact, error) {
	var rows []struct {
		Contact
		Pos int `db:"pos"`
		Src int `db:"src"`
	}
	err := s.db.SelectContext(ctx, &rows, `WITH x AS (`+contactMatchesSQL+`), u AS (
			UPDATE contacts SET blocked = $3, updated_at = now()
			WHERE account_id = $1 AND id IN (SELECT id FROM x) RETURNING `+contactColumns+`
		)
		SELECT u.*, x.pos, x.src FROM u JOIN x ON x.id = u.id ORDER BY x.pos, x.src`,
		accountID, pq.Array(mobileAndForms(mobile)), blocked)
	if err != nil {
		return Contact{}, translate(err)
	}
	if len(rows) == 0 {
		return Contact{}, ErrNotFound
	}
	return rows[0].Contact, nil
}

// IsPhoneFragment reports whether a search term is part of a phone number: digits, optionally
// with + spaces dashes and parentheses, and at least one digit. Only such a term is looked for
// in the mobile; "yxu8uamq" is a name.
func IsPhoneFragment(s string) bool {
	digits := false
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits = true
		case r == '+' || r == ' ' || r == '-' || r == '(' || r == ')':
		default:
			return false
		}
	}
	return digits
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func onlyDigits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ContactByID returns the account's contact with that id; ErrNotFound when the account has none.
func (s *Store) ContactByID(ctx context.Context, accountID, id int64) (Contact, error) {
	var c Contact
	err := s.db.GetContext(ctx, &c, `SELECT `+contactColumns+` FROM contacts WHERE account_id = $1 AND id = $2`, accountID, id)
	return c, translate(err)
}
