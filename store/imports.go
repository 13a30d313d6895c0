package store

import (
	"context"
	"encoding/json"
	"time"
)

// The staged import's report: its rejected rows and what confirming it would do. The staging
// itself (CreateImport, AddImportRows, ConfirmImport, DiscardImport) is in audiences.go.

// ImportRejection is a row of an import that was not staged, with its line and reason.
type ImportRejection struct {
	Line   int    `db:"line" json:"line"`
	Reason string `db:"reason" json:"reason"`
	Detail string `db:"detail" json:"detail"`
}

// AddImportRejections keeps rejected rows of the account's staged import (a line kept twice
// keeps its first reason).
func (s *Store) AddImportRejections(ctx context.Context, accountID, importID int64, rows []ImportRejection) error {
	for start := 0; start < len(rows); start += recipientChunk {
		data, err := json.Marshal(rows[start:min(start+recipientChunk, len(rows))])
		if err != nil {
			return err
		}
		if _, err := s.db.ExecContext(ctx, `INSERT INTO contact_import_rejections (account_id, import_id, line, reason, detail)
			SELECT i.account_id, i.id, x.line, x.reason, coalesce(x.detail, '')
			FROM contact_imports i, jsonb_to_recordset($3::jsonb) AS x(line int, reason text, detail text)
			WHERE i.account_id = $1 AND i.id = $2 AND i.state = 'staged'
			ON CONFLICT (account_id, import_id, line) DO NOTHING`, accountID, importID, data); err != nil {
			return translate(err)
		}
	}
	return nil
}

// SetImportSummary replaces the parser's report kept with the account's staged import.
func (s *Store) SetImportSummary(ctx context.Context, accountID, importID int64, summary json.RawMessage) error {
	res, err := s.db.ExecContext(ctx, `UPDATE contact_imports SET summary = $3 WHERE account_id = $1 AND id = $2 AND state = 'staged'`,
		accountID, importID, []byte(summary))
	if err != nil {
		return translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return s.importStaged(ctx, accountID, importID)
	}
	return nil
}

// ImportReport is an import as its preview shows it. The counts of existing, blocked and
// opted-out people are read from the contacts now, so they are what confirming would meet.
type ImportReport struct {
	ID          int64           `db:"id"`
	Tag         string          `db:"tag"`
	State       string          `db:"state"`
	Summary     json.RawMessage `db:"summary"`
	CreatedAt   time.Time       `db:"created_at"`
	ConfirmedAt *time.Time      `db:"confirmed_at"`
	Staged      int             `db:"staged"`   // rows that confirming writes
	Existing    int             `db:"existing"` // of them, numbers that are contacts already (updated)
	Blocked     int             `db:"blocked"`  // of them, contacts that are blocked
	OptedOut    int             `db:"opted_out"`
}

// ImportReportOf reads the account's import and its counts, or fails with ErrNotFound.
// Opted out are the blocked contacts whose last block came from their own STOP.
func (s *Store) ImportReportOf(ctx context.Context, accountID, importID int64) (ImportReport, error) {
	var r ImportReport
	err := s.db.GetContext(ctx, &r, `SELECT i.id, i.tag, i.state, i.summary, i.created_at, i.confirmed_at,
			coalesce(n.staged, 0) AS staged, coalesce(n.existing, 0) AS existing,
			coalesce(n.blocked, 0) AS blocked, coalesce(n.opted_out, 0) AS opted_out
		FROM contact_imports i
		LEFT JOIN LATERAL (
			SELECT count(*) AS staged, count(c.id) AS existing, count(*) FILTER (WHERE c.blocked) AS blocked,
				count(*) FILTER (WHERE c.blocked AND (SELECT l.detail FROM audit_log l
					WHERE l.account_id = $1 AND l.action = $3 AND l.target = c.mobile ORDER BY l.id DESC LIMIT 1) = $4) AS opted_out
			FROM contact_import_rows r
			LEFT JOIN contacts c ON c.account_id = r.account_id AND c.mobile = r.mobile
			WHERE r.account_id = $1 AND r.import_id = i.id AND i.state = 'staged') n ON true
		WHERE i.account_id = $1 AND i.id = $2`, accountID, importID, AuditContactBlocked, OptOutDetail)
	return r, translate(err)
}

// ImportOf reads the account's import without the counts ImportReportOf reads over its staged
// rows (they are left 0), or fails with ErrNotFound.
func (s *Store) ImportOf(ctx context.Context, accountID, importID int64) (ImportReport, error) {
	var r ImportReport
	err := s.db.GetContext(ctx, &r, `SELECT id, tag, state, summary, created_at, confirmed_at FROM contact_imports
		WHERE account_id = $1 AND id = $2`, accountID, importID)
	return r, translate(err)
}

// ImportRejections returns a page of the account's import's rejected rows in line order,
// those after afterLine, at most limit.
func (s *Store) ImportRejections(ctx context.Context, accountID, importID int64, afterLine, limit int) ([]ImportRejection, error) {
	out := []ImportRejection{}
	err := s.db.SelectContext(ctx, &out, `SELECT line, reason, detail FROM contact_import_rejections
		WHERE account_id = $1 AND import_id = $2 AND line > $3 ORDER BY line LIMIT $4`, accountID, importID, afterLine, limit)
	return out, translate(err)
}
