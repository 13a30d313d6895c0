package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Audiences: contact tags, saved audiences (a filter over tags), and contact imports held in
// staging until the person confirms them.

// TagContacts tags the account's contacts (ids of other accounts are ignored) and returns how
// many gained the tag.
func (s *Store) TagContacts(ctx context.Context, accountID int64, tag string, contactIDs []int64) (int64, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO contact_tags (account_id, contact_id, tag)
		SELECT account_id, id, $2 FROM contacts WHERE account_id = $1 AND id = ANY($3)
		ON CONFLICT DO NOTHING`, accountID, tag, pq.Int64Array(contactIDs))
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

// UntagContacts removes the tag from the account's contacts and returns how many lost it.
func (s *Store) UntagContacts(ctx context.Context, accountID int64, tag string, contactIDs []int64) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM contact_tags WHERE account_id = $1 AND tag = $2 AND contact_id = ANY($3)`,
		accountID, tag, pq.Int64Array(contactIDs))
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

// TagCount is one of an account's tags and how many contacts have it.
type TagCount struct {
	Tag      string `db:"tag"`
	Contacts int    `db:"contacts"`
}

// ContactTagCounts returns the account's first limit tags in name order with their contact
// counts.
func (s *Store) ContactTagCounts(ctx context.Context, accountID int64, limit int) ([]TagCount, error) {
	var out []TagCount
	err := s.db.SelectContext(ctx, &out, `SELECT tag, count(*) AS contacts FROM contact_tags WHERE account_id = $1
		GROUP BY tag ORDER BY tag LIMIT $2`, accountID, limit)
	return out, translate(err)
}

// AudienceFilter selects contacts: those with every tag in Tags (all contacts when empty),
// blocked ones only when IncludeBlocked.
type AudienceFilter struct {
	Tags           []string `json:"tags"`
	IncludeBlocked bool     `json:"include_blocked,omitempty"`
}

// Audience is a saved filter.
type Audience struct {
	ID        int64
	AccountID int64
	Name      string
	Filter    AudienceFilter
	CreatedAt time.Time
}

// SaveAudience saves a named filter for the account; a name in use fails with ErrConflict.
func (s *Store) SaveAudience(ctx context.Context, accountID int64, name string, f AudienceFilter) (Audience, error) {
	if f.Tags == nil {
		f.Tags = []string{}
	}
	data, err := json.Marshal(f)
	if err != nil {
		return Audience{}, err
	}
	a := Audience{AccountID: accountID, Name: name, Filter: f}
	if err := s.db.QueryRowContext(ctx, `INSERT INTO audiences (account_id, name, filter) VALUES ($1, $2, $3) RETURNING id, created_at`,
		accountID, name, data).Scan(&a.ID, &a.CreatedAt); err != nil {
		return Audience{}, translate(err)
	}
	return a, nil
}

// Audiences returns the account's saved audiences in name order.
func (s *Store) Audiences(ctx context.Context, accountID int64) ([]Audience, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, filter, created_at FROM audiences WHERE account_id = $1 ORDER BY name`, accountID)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []Audience
	for rows.Next() {
		a := Audience{AccountID: accountID}
		var data []byte
		if err := rows.Scan(&a.ID, &a.Name, &data, &a.CreatedAt); err != nil {
			return nil, translate(err)
		}
		if err := json.Unmarshal(data, &a.Filter); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, translate(rows.Err())
}

// DeleteAudience deletes the account's saved audience, or fails with ErrNotFound.
func (s *Store) DeleteAudience(ctx context.Context, accountID, id int64) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM audiences WHERE account_id = $1 AND id = $2`, accountID, id)
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// AudienceMember is a contact an audience selects: known by its number, its user id, or
// both ("" for the one not known).
type AudienceMember struct {
	ContactID int64  `db:"id"`
	Mobile    string `db:"mobile"`
	UserID    string `db:"user_id"`
	FirstName string `db:"firstname"`
	LastName  string `db:"lastname"`
}

// AudienceMembers returns a page of the account's contacts the filter selects, in id order,
// those after afterID, at most limit.
func (s *Store) AudienceMembers(ctx context.Context, accountID int64, f AudienceFilter, afterID int64, limit int) ([]AudienceMember, error) {
	var out []AudienceMember
	err := s.db.SelectContext(ctx, &out, `SELECT c.id, COALESCE(c.mobile, '') AS mobile, COALESCE(c.user_id, '') AS user_id, c.firstname, c.lastname
		FROM contacts c WHERE `+audienceSelects+` AND c.id > $4
		ORDER BY c.id LIMIT $5`, accountID, pq.StringArray(nonNilStrings(f.Tags)), f.IncludeBlocked, afterID, limit)
	return out, translate(err)
}

// audienceSelects is the condition of a contact c the filter selects ($1 the account, $2 the
// tags, $3 IncludeBlocked): AudienceMembers and AudienceCount share it.
const audienceSelects = `c.account_id = $1 AND ($3 OR NOT c.blocked)
			AND (SELECT count(DISTINCT t.tag) FROM contact_tags t
				WHERE t.account_id = $1 AND t.contact_id = c.id AND t.tag = ANY($2)) = cardinality($2::text[])`

// AudienceCount is how many of the account's contacts the filter selects (AudienceMembers
// lists them).
func (s *Store) AudienceCount(ctx context.Context, accountID int64, f AudienceFilter) (int, error) {
	var n int
	err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM contacts c WHERE `+audienceSelects,
		accountID, pq.StringArray(nonNilStrings(f.Tags)), f.IncludeBlocked)
	return n, translate(err)
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ImportRow is one parsed, normalised row of a contact import.
type ImportRow struct {
	Line      int               `json:"line"`
	Mobile    string            `json:"mobile"`
	FirstName string            `json:"firstname"`
	LastName  string            `json:"lastname"`
	Variables map[string]string `json:"variables"`
}

// ErrImportConfirmed is returned (wrapping ErrConflict) for an import confirmed already.
var ErrImportConfirmed = fmt.Errorf("%w: the import was confirmed already", ErrConflict)

// CreateImport starts a staged import for the account: its rows (AddImportRows) change no
// contact until ConfirmImport. tag ("" for none) is given to every imported contact; summary
// is the parser's report (counts, rejected rows), kept for the confirmation page.
func (s *Store) CreateImport(ctx context.Context, accountID int64, tag string, summary json.RawMessage) (int64, error) {
	if len(summary) == 0 {
		summary = json.RawMessage(`{}`)
	}
	var id int64
	err := s.db.GetContext(ctx, &id, `INSERT INTO contact_imports (account_id, tag, summary) VALUES ($1, $2, $3) RETURNING id`,
		accountID, tag, []byte(summary))
	return id, translate(err)
}

// AddImportRows stages rows of the account's staged import (a number staged twice keeps its
// first row). It fails with ErrNotFound when there is no such staged import.
func (s *Store) AddImportRows(ctx context.Context, accountID, importID int64, rows []ImportRow) error {
	for start := 0; start < len(rows); start += recipientChunk {
		chunk := rows[start:min(start+recipientChunk, len(rows))]
		for i := range chunk {
			if chunk[i].Variables == nil {
				chunk[i].Variables = map[string]string{}
			}
		}
		data, err := json.Marshal(chunk)
		if err != nil {
			return err
		}
		res, err := s.db.ExecContext(ctx, `INSERT INTO contact_import_rows (account_id, import_id, line, mobile, firstname, lastname, variables)
			SELECT i.account_id, i.id, x.line, x.mobile, coalesce(x.firstname, ''), coalesce(x.lastname, ''), x.variables
			FROM contact_imports i, jsonb_to_recordset($3::jsonb) AS x(line int, mobile text, firstname text, lastname text, variables jsonb)
			WHERE i.account_id = $1 AND i.id = $2 AND i.state = 'staged'
			ON CONFLICT (import_id, mobile) DO NOTHING`, accountID, importID, data)
		if err != nil {
			return translate(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if err := s.importStaged(ctx, accountID, importID); err != nil {
				return err
			}
		}
	}
	return nil
}

// importStaged fails with ErrNotFound or ErrImportConfirmed unless the import is staged.
func (s *Store) importStaged(ctx context.Context, accountID, importID int64) error {
	var state string
	if err := s.db.GetContext(ctx, &state, `SELECT state FROM contact_imports WHERE account_id = $1 AND id = $2`, accountID, importID); err != nil {
		return translate(err)
	}
	if state != "staged" {
		return ErrImportConfirmed
	}
	return nil
}

// ImportResult is what confirming an import did.
type ImportResult struct {
	Created int64 // contacts made
	Updated int64 // existing contacts whose names the import gave
	Tagged  int64 // contacts that gained the import's tag
	// NameSearchLater: the new contacts join the name search after the confirmation (an
	// import of nameBacklogFrom rows or more); they are listed and counted at once.
	NameSearchLater bool
}

// nameBacklogFrom is the size of a confirmed import from which its new contacts join the name
// index after the confirmation instead of inside it (migration 000052): about 17 suffix rows a
// name make a large import's confirmation minutes long; the backlog is indexed in batches by
// IndexContactNames. A smaller import is searchable by name at once.
const nameBacklogFrom = 10_000

// ConfirmImport commits the account's staged import in one transaction: a contact per staged
// number (existing ones keep their names unless the row gives one), the import's tag on each,
// and the import marked confirmed. The new contacts of an import of nameBacklogFrom rows or
// more are in the listing and its count at once and join the name search as IndexContactNames
// reaches them (NameBacklog). It fails with ErrNotFound or ErrImportConfirmed.
func (s *Store) ConfirmImport(ctx context.Context, accountID, importID int64, now time.Time) (ImportResult, error) {
	var out ImportResult
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		var state, tag string
		var staged int
		if err := tx.QueryRowContext(ctx, `SELECT state, tag, (SELECT count(*) FROM contact_import_rows r WHERE r.account_id = $1 AND r.import_id = $2)
			FROM contact_imports WHERE account_id = $1 AND id = $2 FOR UPDATE`,
			accountID, importID).Scan(&state, &tag, &staged); err != nil {
			return err
		}
		if state != "staged" {
			return ErrImportConfirmed
		}
		if out.NameSearchLater = staged >= nameBacklogFrom; out.NameSearchLater {
			if _, err := tx.ExecContext(ctx, `SELECT set_config('gateway.contact_names', 'backlog', true)`); err != nil {
				return err
			}
		}
		// One statement makes or updates the contacts and tags them: the tag rows come from the
		// upsert's own ids, with no second look-up of the staged numbers. An empty tag tags none.
		if err := tx.QueryRowContext(ctx, `WITH up AS (
				INSERT INTO contacts (account_id, mobile, firstname, lastname)
				SELECT account_id, mobile, firstname, lastname FROM contact_import_rows
				WHERE account_id = $1 AND import_id = $2 ORDER BY mobile
				ON CONFLICT (account_id, mobile) DO UPDATE SET
					firstname = CASE WHEN EXCLUDED.firstname <> '' OR EXCLUDED.lastname <> '' THEN EXCLUDED.firstname ELSE contacts.firstname END,
					lastname = CASE WHEN EXCLUDED.firstname <> '' OR EXCLUDED.lastname <> '' THEN EXCLUDED.lastname ELSE contacts.lastname END,
					updated_at = now()
				RETURNING id, (xmax = 0) AS created
			), tagged AS (
				INSERT INTO contact_tags (account_id, contact_id, tag)
				SELECT $1, up.id, $3 FROM up WHERE $3 <> ''
				ON CONFLICT DO NOTHING
				RETURNING 1
			)
			SELECT count(*) FILTER (WHERE created), count(*), (SELECT count(*) FROM tagged) FROM up`,
			accountID, importID, tag).Scan(&out.Created, &out.Updated, &out.Tagged); err != nil {
			return err
		}
		out.Updated -= out.Created
		_, err := tx.ExecContext(ctx, `UPDATE contact_imports SET state = 'confirmed', confirmed_at = $3 WHERE account_id = $1 AND id = $2`,
			accountID, importID, now)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return ImportResult{}, ErrNotFound
	}
	if err != nil && !errors.Is(err, ErrImportConfirmed) {
		return ImportResult{}, translate(err)
	}
	return out, err
}

// DiscardImport deletes the account's import and its staged rows; nothing else changes.
func (s *Store) DiscardImport(ctx context.Context, accountID, importID int64) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM contact_imports WHERE account_id = $1 AND id = $2`, accountID, importID)
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// AddBroadcastRecipientsFromImport adds the rows of the account's import to its unfinished
// broadcast, each with the row's variables; numbers of blocked contacts are left out. It
// returns how many it added.
func (s *Store) AddBroadcastRecipientsFromImport(ctx context.Context, accountID, broadcastID, importID int64) (int64, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO broadcast_recipients (account_id, broadcast_id, mobile, variables)
		SELECT r.account_id, b.id, r.mobile, r.variables FROM contact_import_rows r
		JOIN broadcasts b ON b.account_id = r.account_id AND b.id = $2 AND b.state IN ('scheduled', 'running', 'paused')
		WHERE r.account_id = $1 AND r.import_id = $3
			AND NOT EXISTS (SELECT FROM contacts c WHERE c.account_id = $1 AND c.mobile = r.mobile AND c.blocked)
		ON CONFLICT (broadcast_id, mobile, user_id) DO NOTHING`, accountID, broadcastID, importID)
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}
