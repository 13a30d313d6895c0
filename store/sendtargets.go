package store

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/lib/pq"
)

// The send-target cache. Every live send reads the account's number and the templates it names
// (SendTarget); they change seldom (a template synced or paused, a number connected or
// disconnected), and reading them is a round trip and a statement per send. So while something
// tells the store of every change, SendTarget keeps its answers:
//
//   - the writes this store makes forget the account's answers once they commit
//     (targets.forget at each write of templates or connections);
//   - the writes other processes make reach it through the send_targets_changed notification
//     (migration 000029): the listener (server.TenantListener) calls ForgetSendTargets, and it
//     turns the cache on only once it listens and off when its connection fails
//     (CacheSendTargets), so a missed notification can never keep an answer;
//   - an answer read while a change was announced is not kept (the generation), and none is
//     kept longer than targetTTL in any case.
//
// So a change made through this store is seen by the next send at once, and one made elsewhere
// once its notification arrives (a few milliseconds). Answers that found no template are not
// kept: a template that appears is sendable at once.
const (
	targetTTL = time.Minute
	targetMax = 4096 // answers kept; the cache starts afresh when full
)

type targetKey struct {
	account, templateID int64
	name, language      string
}

type targetEntry struct {
	conn      Connection
	templates []Template
	at        time.Time
}

type targetCache struct {
	mu  sync.Mutex
	on  bool
	gen uint64 // bumped by every forget
	m   map[targetKey]targetEntry
}

// get returns the kept answer for k, or the generation to put a fresh one under.
func (c *targetCache) get(k targetKey) (targetEntry, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if ok && time.Since(e.at) >= targetTTL {
		delete(c.m, k)
		ok = false
	}
	return e, c.gen, ok && c.on
}

// put keeps e for k unless the cache is off or something was forgotten since gen.
func (c *targetCache) put(k targetKey, gen uint64, e targetEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.on || c.gen != gen {
		return
	}
	if c.m == nil || len(c.m) >= targetMax {
		c.m = map[targetKey]targetEntry{}
	}
	e.at = time.Now()
	c.m[k] = e
}

// forget drops the account's answers (every answer for 0).
func (c *targetCache) forget(accountID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if accountID == 0 {
		c.m = nil
		return
	}
	for k := range c.m {
		if k.account == accountID {
			delete(c.m, k)
		}
	}
}

// CacheSendTargets turns the send-target cache on or off; either way it starts empty. Turn it on
// only while every change of templates and connections made by other processes is heard and
// passed to ForgetSendTargets (server.TenantListener does both).
func (s *Store) CacheSendTargets(on bool) {
	s.targets.mu.Lock()
	s.targets.on = on
	s.targets.mu.Unlock()
	s.targets.forget(0)
}

// ForgetSendTargets drops the cached send targets of the account (of every account for 0).
func (s *Store) ForgetSendTargets(accountID int64) { s.targets.forget(accountID) }

// sendTargetRow is a connection with, when one matched, a template (t_* columns).
type sendTargetRow struct {
	connectionRow
	TFound           bool            `db:"t_found"`
	TID              int64           `db:"t_id"`
	TPlatformID      string          `db:"t_platform_id"`
	TName            string          `db:"t_name"`
	TLanguage        string          `db:"t_language"`
	TStatus          string          `db:"t_status"`
	TCategoryID      int64           `db:"t_category_id"`
	TCategoryName    string          `db:"t_category_name"`
	TCategoryLabel   string          `db:"t_category_label"`
	TParameterFormat string          `db:"t_parameter_format"`
	THeaderFormat    string          `db:"t_header_format"`
	THeaderParams    int             `db:"t_header_params"`
	TBodyParams      int             `db:"t_body_params"`
	TComponents      json.RawMessage `db:"t_components"`
	TButtons         TemplateButtons `db:"t_buttons"`
	TUnsupported     pq.StringArray  `db:"t_unsupported"`
	TCreatedAt       time.Time       `db:"t_created_at"`
	TUpdatedAt       time.Time       `db:"t_updated_at"`
}

const sendTargetSelect = `SELECT c.account_id, c.waba_id, c.phone_number_id, c.phone_number, c.display_name,
		c.access_token, c.connected_at, t.id IS NOT NULL AS t_found,
		COALESCE(t.id, 0) AS t_id, COALESCE(t.platform_id, '') AS t_platform_id, COALESCE(t.name, '') AS t_name,
		COALESCE(t.language, '') AS t_language, COALESCE(t.status, '') AS t_status,
		COALESCE(t.category_id, 0) AS t_category_id, COALESCE(t.category_name, '') AS t_category_name,
		COALESCE(t.category_label, '') AS t_category_label, COALESCE(t.parameter_format, '') AS t_parameter_format,
		COALESCE(t.header_format, '') AS t_header_format, COALESCE(t.header_params, 0) AS t_header_params,
		COALESCE(t.body_params, 0) AS t_body_params, COALESCE(t.components, '[]') AS t_components,
		COALESCE(t.buttons, '[]') AS t_buttons, COALESCE(t.unsupported, '{}') AS t_unsupported,
		COALESCE(t.created_at, c.connected_at) AS t_created_at, COALESCE(t.updated_at, c.connected_at) AS t_updated_at
	FROM connections c LEFT JOIN LATERAL (
		SELECT t.*, k.name AS category_name, k.label AS category_label
		FROM templates t JOIN template_categories k ON k.id = t.category_id
		WHERE t.account_id = c.account_id AND `

// SendTarget is, in one statement, what a live send needs before it writes anything: the
// account's connected number (access token decrypted) and the templates the request names.
// With templateID > 0 that is the account's template with that id whatever its status (at
// most one); otherwise the account's approved templates called name, in language when it is
// not "" (ordered by language, at most 20). It returns ErrNotFound when the account has no
// number connected, an empty list when no template matches, and fails otherwise only when the
// database does. With templateID 0 and name "" it reads the number alone (the send of a
// message that is not a template). While CacheSendTargets is on, an answer that found
// templates, or the number alone, is kept and given again until the account's number or
// templates change (sendtargets.go); the caller must not change what it gets.
func (s *Store) SendTarget(ctx context.Context, accountID, templateID int64, name, language string) (Connection, []Template, error) {
	k := targetKey{account: accountID, templateID: templateID, name: name, language: language}
	e, gen, ok := s.targets.get(k)
	if ok {
		return e.conn, e.templates, nil
	}
	conn, ts, err := s.sendTarget(ctx, accountID, templateID, name, language)
	if err == nil && (len(ts) > 0 || (templateID == 0 && name == "")) {
		s.targets.put(k, gen, targetEntry{conn: conn, templates: ts})
	}
	return conn, ts, err
}

// sendTarget is SendTarget's statement.
func (s *Store) sendTarget(ctx context.Context, accountID, templateID int64, name, language string) (Connection, []Template, error) {
	st, args := "", []any{accountID}
	if templateID > 0 {
		st = sendTargetSelect + `t.id = $2) t ON true WHERE c.account_id = $1`
		args = append(args, templateID)
	} else {
		st = sendTargetSelect + `t.name = $2 AND ($3::text = '' OR t.language = $3::text) AND t.status = 'APPROVED'
			ORDER BY t.language LIMIT 20) t ON true WHERE c.account_id = $1 ORDER BY t.language`
		args = append(args, name, language)
	}
	stmt, err := s.prepared(ctx, st)
	if err != nil {
		return Connection{}, nil, err
	}
	var rows []sendTargetRow
	if err := stmt.SelectContext(ctx, &rows, args...); err != nil {
		return Connection{}, nil, translate(err)
	}
	if len(rows) == 0 {
		return Connection{}, nil, ErrNotFound
	}
	conn, err := s.unseal(rows[0].connectionRow)
	if err != nil {
		return Connection{}, nil, err
	}
	ts := []Template{}
	for _, r := range rows {
		if !r.TFound {
			continue
		}
		ts = append(ts, Template{ID: r.TID, AccountID: accountID, PlatformID: r.TPlatformID, Name: r.TName,
			Language: r.TLanguage, Status: r.TStatus, CategoryID: r.TCategoryID, CategoryName: r.TCategoryName,
			CategoryLabel: r.TCategoryLabel, ParameterFormat: r.TParameterFormat, HeaderFormat: r.THeaderFormat,
			HeaderParams: r.THeaderParams, BodyParams: r.TBodyParams, Components: r.TComponents,
			Buttons: r.TButtons, Unsupported: r.TUnsupported,
			CreatedAt: r.TCreatedAt, UpdatedAt: r.TUpdatedAt})
	}
	return conn, ts, nil
}
