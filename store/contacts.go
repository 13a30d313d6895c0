package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"
)

// Contact is a number known to the account.
type Contact struct {
	ID        int64     `db:"id" json:"id"`
	AccountID int64     `db:"account_id" json:"account_id"`
	Mobile    string    `db:"mobile" json:"mobile"`
	Name      string    `db:"name" json:"name"`
	Note      string    `db:"note" json:"note"`
	Blocked   bool      `db:"blocked" json:"blocked"`
	CreatedAt time.Time `db:"created_at" json:"created_at"`
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

const contactColumns = `id, account_id, mobile, name, note, blocked, created_at`

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
	return row.Contact, row.Created, err
}

// ContactPage is one page of a contact listing.
type ContactPage struct {
	Contacts []Contact
	Total    int
}

// ListContacts returns the account's contacts newest first, one page, and how many match. A
// non-empty search matches the name (case-insensitive substring) or, when it is a phone
// fragment (IsPhoneFragment), the mobile (substring of its digits); both use the trigram
// indexes. A search reads the
// matching rows once: one pass both counts them and picks the page (then only the page's rows
// are fetched whole). An unfiltered listing walks the newest-first index for the page and counts
// only when the page is full.
func (s *Store) ListContacts(ctx context.Context, accountID int64, search string, limit, offset int) (ContactPage, error) {
	page := ContactPage{Contacts: []Contact{}}
	q := contactListQueries(accountID, search, limit, offset)
	if q.searchSQL != "" {
		var rows []struct {
			Contact
			Total int `db:"total"`
		}
		if err := s.db.SelectContext(ctx, &rows, q.searchSQL, q.pageArgs...); err != nil {
			return page, translate(err)
		}
		for _, r := range rows {
			page.Contacts = append(page.Contacts, r.Contact)
			page.Total = r.Total
		}
		if len(rows) > 0 || offset == 0 {
			return page, nil
		}
	} else {
		if err := s.db.SelectContext(ctx, &page.Contacts, q.pageSQL, q.pageArgs...); err != nil {
			return page, translate(err)
		}
		// A short page that is not empty ends the listing, so it tells the total without counting.
		if n := len(page.Contacts); n > 0 && n < limit {
			page.Total = offset + n
			return page, nil
		}
	}
	if err := s.db.GetContext(ctx, &page.Total, q.countSQL, q.countArgs...); err != nil {
		return page, translate(err)
	}
	return page, nil
}

// contactListing is the statements of a listing with their arguments; contactListQueries builds
// them (ListContacts runs them, the benchmark explains them). searchSQL is set for a search.
type contactListing struct {
	countSQL, pageSQL, searchSQL string
	countArgs, pageArgs          []any
}

func contactListQueries(accountID int64, search string, limit, offset int) contactListing {
	where := `account_id = $1`
	args := []any{accountID}
	searching := false
	if search = strings.TrimSpace(search); search != "" {
		searching = true
		args = append(args, "%"+escapeLike(strings.ToLower(search))+"%")
		cond := `lower(name) LIKE $2`
		if digits := onlyDigits(search); digits != "" && IsPhoneFragment(search) {
			args = append(args, "%"+digits+"%")
			cond = `(` + cond + ` OR mobile LIKE $3)`
		}
		where += ` AND ` + cond
	}
	n := len(args)
	l := contactListing{
		countSQL:  `SELECT count(*) FROM contacts WHERE ` + where,
		countArgs: args,
		pageSQL: `SELECT ` + contactColumns + ` FROM contacts WHERE ` + where + `
		ORDER BY created_at DESC, id DESC LIMIT $` + strconv.Itoa(n+1) + ` OFFSET $` + strconv.Itoa(n+2),
		pageArgs: append(args[:n:n], limit, offset),
	}
	if searching {
		l.searchSQL = `WITH m AS MATERIALIZED (SELECT id, created_at FROM contacts WHERE ` + where + `),
			p AS (SELECT id FROM m ORDER BY created_at DESC, id DESC LIMIT $` + strconv.Itoa(n+1) + ` OFFSET $` + strconv.Itoa(n+2) + `)
		SELECT ` + prefixed("c.", contactColumns) + `, (SELECT count(*) FROM m) AS total
		FROM p JOIN contacts c ON c.id = p.id AND c.account_id = $1
		ORDER BY c.created_at DESC, c.id DESC`
	}
	return l
}

func prefixed(prefix, columns string) string {
	parts := strings.Split(columns, ", ")
	for i, p := range parts {
		parts[i] = prefix + p
	}
	return strings.Join(parts, ", ")
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
