package store

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/lib/pq"
)

// Template is one of the account's message templates as last synced from the platform, with
// its category. Every status the platform reports is stored; only APPROVED ones can be sent.
type Template struct {
	ID              int64           `db:"id" json:"id"`
	AccountID       int64           `db:"account_id" json:"account_id"`
	PlatformID      string          `db:"platform_id" json:"platform_id"`
	Name            string          `db:"name" json:"name"`
	Language        string          `db:"language" json:"language"`
	Status          string          `db:"status" json:"status"`
	CategoryID      int64           `db:"category_id" json:"category_id"`
	CategoryName    string          `db:"category_name" json:"category_name"`
	CategoryLabel   string          `db:"category_label" json:"category_label"`
	ParameterFormat string          `db:"parameter_format" json:"parameter_format"`
	HeaderFormat    string          `db:"header_format" json:"header_format"`
	HeaderParams    int             `db:"header_params" json:"header_params"`
	BodyParams      int             `db:"body_params" json:"body_params"`
	Components      json.RawMessage `db:"components" json:"components"`
	Buttons         TemplateButtons `db:"buttons" json:"buttons"`
	Unsupported     pq.StringArray  `db:"unsupported" json:"unsupported"`
	CreatedAt       time.Time       `db:"created_at" json:"created_at"`
	UpdatedAt       time.Time       `db:"updated_at" json:"updated_at"`
}

// TemplateApproved is the only status a template can be sent with.
const TemplateApproved = "APPROVED"

// TemplateDeleted is the status a template gets when a sync no longer finds it on the platform.
const TemplateDeleted = "DELETED"

const templateColumns = `t.id, t.account_id, t.platform_id, t.name, t.language, t.status, t.category_id,
	c.name AS category_name, c.label AS category_label, t.parameter_format, t.header_format,
	t.header_params, t.body_params, t.components, t.buttons, t.unsupported, t.created_at, t.updated_at`

// ApprovedTemplates returns the account's approved templates, newest first (first seen, then
// id), at most limit. It returns an empty list when there are none and fails only when the
// database does.
func (s *Store) ApprovedTemplates(ctx context.Context, accountID int64, limit int) ([]Template, error) {
	st, err := s.prepared(ctx, `SELECT `+templateColumns+`
		FROM templates t JOIN template_categories c ON c.id = t.category_id
		WHERE t.account_id = $1 AND t.status = 'APPROVED'
		ORDER BY t.created_at DESC, t.id DESC LIMIT $2`)
	if err != nil {
		return nil, err
	}
	ts := []Template{}
	if err := st.SelectContext(ctx, &ts, accountID, limit); err != nil {
		return nil, translate(err)
	}
	return ts, nil
}

// TemplateByID returns the account's template with that id, whatever its status; ErrNotFound
// when the account has no such template.
func (s *Store) TemplateByID(ctx context.Context, accountID, id int64) (Template, error) {
	var t Template
	err := s.getPrepared(ctx, &t, `SELECT `+templateColumns+`
		FROM templates t JOIN template_categories c ON c.id = t.category_id
		WHERE t.account_id = $1 AND t.id = $2`, accountID, id)
	return t, err
}

// TemplateInput is one template as the platform lists it, already reduced to what a send
// needs (parameter counts and header format) plus the raw components.
type TemplateInput struct {
	PlatformID      string
	Name            string
	Language        string
	Status          string // upper case: APPROVED, PENDING, REJECTED, PAUSED, ...
	Category        string // upper case: MARKETING, UTILITY, AUTHENTICATION, or a newer one
	ParameterFormat string // POSITIONAL or NAMED ("" is taken as POSITIONAL)
	HeaderFormat    string // "" (no header), TEXT, IMAGE, ...
	HeaderParams    int
	BodyParams      int
	Components      json.RawMessage // a JSON array; nil is stored as []
	Buttons         TemplateButtons // what a send needs of each button, parsed from Components
	Unsupported     []string        // what a send cannot fill yet ("GIF header", "CAROUSEL", ...)
	RejectedReason  string          // the platform's reason for a rejection ("" or NONE otherwise; kept only with REJECTED)
}

// TemplateSyncCounts says what SyncTemplates changed.
type TemplateSyncCounts struct {
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	// Removed counts templates no longer listed by the platform, now marked DELETED.
	Removed int `json:"removed"`
}

// categoryRow is one element of SyncTemplates' batch of categories.
type categoryRow struct {
	Name  string `json:"name"`
	Label string `json:"label"`
}

// SyncTemplates makes the account's stored templates match the platform's listing ts, in one
// transaction: unknown category names are added, every listed template is inserted or updated
// by its platform id (a template re-created on the platform under the same name and language
// keeps its row and id), and stored templates missing from the listing are marked DELETED.
// A template seen for the first time is ordered by its platform id, so newer platform
// templates list first. It fails only when the database does, and then nothing changes.
func (s *Store) SyncTemplates(ctx context.Context, accountID int64, ts []TemplateInput) (TemplateSyncCounts, error) {
	var counts TemplateSyncCounts
	defer s.targets.forget(accountID) // once the transaction has ended
	ts = slices.Clone(ts)
	// Platform ids are numeric and grow with time: insert oldest first so ids grow with them.
	slices.SortFunc(ts, func(a, b TemplateInput) int {
		return cmp.Or(cmp.Compare(len(a.PlatformID), len(b.PlatformID)), strings.Compare(a.PlatformID, b.PlatformID))
	})
	var cats []categoryRow
	var ids []string
	for i := range ts {
		t := &ts[i]
		t.Category = strings.ToUpper(strings.TrimSpace(t.Category))
		if t.Category == "" {
			t.Category = "UNKNOWN"
		}
		if t.ParameterFormat == "" {
			t.ParameterFormat = "POSITIONAL"
		}
		if len(t.Components) == 0 {
			t.Components = json.RawMessage("[]")
		}
		if !slices.ContainsFunc(cats, func(c categoryRow) bool { return c.Name == t.Category }) {
			cats = append(cats, categoryRow{Name: t.Category, Label: categoryLabel(t.Category)})
		}
		ids = append(ids, t.PlatformID)
	}

	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return counts, translate(err)
	}
	defer tx.Rollback()
	if len(cats) > 0 {
		arg, err := jsonArg(cats)
		if err != nil {
			return counts, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO template_categories (name, label)
			SELECT r.name, r.label FROM jsonb_to_recordset($1::jsonb) AS r (name text, label text)
			ON CONFLICT (name) DO NOTHING`, arg); err != nil {
			return counts, translate(err)
		}
	}
	// A template deleted and re-created on the platform comes back with a new platform id
	// under the same name and language: move the old row to the new id.
	rekey, err := tx.PreparexContext(ctx, `UPDATE templates SET platform_id = $2
		WHERE account_id = $1 AND name = $3 AND language = $4 AND platform_id <> $2
		AND NOT EXISTS (SELECT 1 FROM templates WHERE account_id = $1 AND platform_id = $2)`)
	if err != nil {
		return counts, translate(err)
	}
	defer rekey.Close()
	upsert, err := tx.PreparexContext(ctx, `INSERT INTO templates (account_id, platform_id, name, language, status,
			category_id, parameter_format, header_format, header_params, body_params, components, buttons, unsupported)
		SELECT $1, $2, $3, $4, $5, c.id, $7, $8, $9, $10, $11::jsonb, $12::jsonb, $13::text[]
		FROM template_categories c WHERE c.name = $6
		ON CONFLICT (account_id, platform_id) DO UPDATE SET name = EXCLUDED.name, language = EXCLUDED.language,
			status = EXCLUDED.status, category_id = EXCLUDED.category_id, parameter_format = EXCLUDED.parameter_format,
			header_format = EXCLUDED.header_format, header_params = EXCLUDED.header_params,
			body_params = EXCLUDED.body_params, components = EXCLUDED.components, buttons = EXCLUDED.buttons,
			unsupported = EXCLUDED.unsupported, updated_at = now(),
			status_at = CASE WHEN templates.status IS DISTINCT FROM EXCLUDED.status THEN now() ELSE templates.status_at END
		WHERE (templates.name, templates.language, templates.status, templates.category_id, templates.parameter_format,
				templates.header_format, templates.header_params, templates.body_params, templates.components,
				templates.buttons, templates.unsupported)
			IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.language, EXCLUDED.status, EXCLUDED.category_id,
				EXCLUDED.parameter_format, EXCLUDED.header_format, EXCLUDED.header_params, EXCLUDED.body_params,
				EXCLUDED.components, EXCLUDED.buttons, EXCLUDED.unsupported)
		RETURNING (xmax = 0) AS created`)
	if err != nil {
		return counts, translate(err)
	}
	defer upsert.Close()
	reason, err := tx.PreparexContext(ctx, `UPDATE templates SET rejected_reason = $3
		WHERE account_id = $1 AND platform_id = $2 AND rejected_reason IS DISTINCT FROM $3`)
	if err != nil {
		return counts, translate(err)
	}
	defer reason.Close()
	for _, t := range ts {
		if _, err := rekey.ExecContext(ctx, accountID, t.PlatformID, t.Name, t.Language); err != nil {
			return counts, translate(err)
		}
		var created []bool
		if err := upsert.SelectContext(ctx, &created, accountID, t.PlatformID, t.Name, t.Language, t.Status,
			t.Category, t.ParameterFormat, t.HeaderFormat, t.HeaderParams, t.BodyParams, string(t.Components),
			t.Buttons, pq.StringArray(orNoStrings(t.Unsupported))); err != nil {
			return counts, translate(err)
		}
		if _, err := reason.ExecContext(ctx, accountID, t.PlatformID, keptRejectionReason(t.Status, t.RejectedReason)); err != nil {
			return counts, translate(err)
		}
		switch {
		case len(created) == 0:
			counts.Unchanged++
		case created[0]:
			counts.Created++
		default:
			counts.Updated++
		}
	}
	res, err := tx.ExecContext(ctx, `UPDATE templates SET status = 'DELETED', updated_at = now()
		WHERE account_id = $1 AND status <> 'DELETED' AND NOT (platform_id = ANY($2::text[]))`, accountID, pq.Array(ids))
	if err != nil {
		return counts, translate(err)
	}
	n, _ := res.RowsAffected()
	counts.Removed = int(n)
	if err := tx.Commit(); err != nil {
		return counts, translate(err)
	}
	return counts, nil
}

// categoryLabel turns a category name such as "MARKETING_LITE" into "Marketing lite".
func categoryLabel(name string) string {
	s := strings.ToLower(strings.ReplaceAll(name, "_", " "))
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// ConnectedAccountIDs returns the active accounts that have a number connected, by id; an empty
// list when none has. It is the operator's cross-account view for background work and fails
// only when the database does.
func (s *Store) ConnectedAccountIDs(ctx context.Context) ([]int64, error) {
	ids := []int64{}
	err := s.db.SelectContext(ctx, &ids, `SELECT c.account_id FROM connections c JOIN accounts a ON a.id = c.account_id
		WHERE a.active ORDER BY c.account_id`)
	return ids, translate(err)
}

// keptRejectionReason is the rejection reason a template keeps: the platform's reason with
// status REJECTED, "" with any other status or when the platform says "NONE" (what it reports
// for a template that was not rejected). Both writers of rejected_reason, the sync and the
// status webhook, keep what it returns.
func keptRejectionReason(status, reason string) string {
	reason = strings.TrimSpace(reason)
	if status != "REJECTED" || strings.EqualFold(reason, "NONE") {
		return ""
	}
	return reason
}

// UpdateTemplateStatusByPlatformID sets the status of the account's template with the
// platform's template id, and its rejection reason, as of the event's time at: an event older
// than the one that set the current status (a late APPROVED after a PAUSED) changes neither. The
// reason is kept only with status REJECTED ("NONE" is no reason); any other status clears it.
// It returns ErrNotFound when the account has no such template, and fails otherwise only when
// the database does.
func (s *Store) UpdateTemplateStatusByPlatformID(ctx context.Context, accountID int64, platformID, status, reason string, at time.Time) error {
	reason = keptRejectionReason(status, reason)
	var found bool
	err := s.getPrepared(ctx, &found, `WITH u AS (
			UPDATE templates SET status = $3, rejected_reason = $5, status_at = $4, updated_at = now()
			WHERE account_id = $1 AND platform_id = $2 AND (status_at IS NULL OR status_at <= $4)
		)
		SELECT EXISTS (SELECT 1 FROM templates WHERE account_id = $1 AND platform_id = $2)`,
		accountID, platformID, status, at.UTC(), reason)
	s.targets.forget(accountID) // after the commit, or after a failure that may have committed
	if err != nil {
		return err
	}
	if !found {
		return ErrNotFound
	}
	return nil
}

// ListedTemplate is a template of the dashboard's templates page: any status, with the
// platform's rejection reason.
type ListedTemplate struct {
	Template
	RejectedReason string `db:"rejected_reason"`
}

// TemplatesByAccount returns every template of the account (deleted ones left out), newest
// first, at most 500, narrowed to a status and a category name when they are not "". It fails
// only when the database does.
func (s *Store) TemplatesByAccount(ctx context.Context, accountID int64, status, category string) ([]ListedTemplate, error) {
	ts := []ListedTemplate{}
	err := s.db.SelectContext(ctx, &ts, `SELECT `+templateColumns+`, t.rejected_reason
		FROM templates t JOIN template_categories c ON c.id = t.category_id
		WHERE t.account_id = $1 AND t.status <> 'DELETED' AND ($2 = '' OR t.status = $2) AND ($3 = '' OR c.name = $3)
		ORDER BY t.created_at DESC, t.id DESC LIMIT 500`, accountID, status, category)
	return ts, translate(err)
}
