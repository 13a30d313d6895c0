package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Broadcasts: one template to many recipients. The recipient rows are the broadcast engine's
// queue. A claim leases due pending rows (FOR UPDATE SKIP LOCKED) by pushing their
// next_attempt_at out by the lease and stamping a claim token; a process that dies holding a
// claim loses it when the lease runs out. Before its platform call a recipient is marked
// 'sending' in its own statement (MarkBroadcastsSending), which succeeds only for the claim's
// holder while the broadcast runs: a recipient whose call may have happened is never claimed
// again. A 'sending' row whose answer never came is settled from the message its idempotency
// key names (SettleBroadcastRecipients, broadcast_settle.go): due again when no call happened,
// 'unknown' while the call may have happened until the platform's report gives the message
// its id.

// Broadcast states.
const (
	BroadcastScheduled = "scheduled"
	BroadcastRunning   = "running"
	BroadcastPaused    = "paused"
	BroadcastCompleted = "completed"
	BroadcastCancelled = "cancelled"
)

// Recipient states.
const (
	RecipientPending   = "pending"
	RecipientSending   = "sending"
	RecipientUnknown   = "unknown"
	RecipientSent      = "sent"
	RecipientFailed    = "failed"
	RecipientCancelled = "cancelled"
)

// Pause reasons. The engine resumes a broadcast paused for PausePortfolioLimit by itself at its
// resume_at; the others wait for a person (ResumeBroadcast).
const (
	PauseOperator       = "operator"
	PausePortfolioLimit = "portfolio_limit"
	PauseTemplatePaused = "template_paused"
	PausePayment        = "payment"
)

// ErrBroadcastState is returned (wrapping ErrConflict) when a broadcast's state does not allow
// the change asked for (resuming a completed one, pausing a cancelled one...).
var ErrBroadcastState = fmt.Errorf("%w: the broadcast's state does not allow this", ErrConflict)

// BroadcastParam is one body parameter of a broadcast's template: a fixed Value, or the
// recipient's variable named Variable.
type BroadcastParam struct {
	Value    string `json:"value,omitempty"`
	Variable string `json:"variable,omitempty"`
}

// BroadcastInput is a broadcast to create.
type BroadcastInput struct {
	Name             string // also the campaign's name (made when the account has none of it)
	PhoneNumberID    string
	Portfolio        string // the business portfolio whose 24 h budget the sends use
	TemplateName     string
	TemplateLanguage string
	Marketing        bool
	Params           []BroadcastParam
	ScheduledAt      *time.Time // nil: running at once
	TimeZone         string     // the zone the schedule was given in ("" = UTC), kept for display
	// Test marks a test-mode broadcast: it is listed only to test keys and its sends are
	// simulated.
	Test bool
	// Preflight is what the pre-flight counted at creation, a JSON object ({} for none).
	Preflight json.RawMessage
}

// RecipientInput is one recipient: a number (digits) or a user id, and its variables.
type RecipientInput struct {
	Mobile    string
	UserID    string
	Variables map[string]string
}

// Broadcast is a stored broadcast.
type Broadcast struct {
	ID               int64            `db:"id"`
	AccountID        int64            `db:"account_id"`
	CampaignID       int64            `db:"campaign_id"`
	Name             string           `db:"name"`
	PhoneNumberID    string           `db:"phone_number_id"`
	Portfolio        string           `db:"portfolio"`
	TemplateName     string           `db:"template_name"`
	TemplateLanguage string           `db:"template_language"`
	Marketing        bool             `db:"marketing"`
	Params           []BroadcastParam `db:"-"`
	ParamsJSON       []byte           `db:"params"`
	ScheduledAt      *time.Time       `db:"scheduled_at"`
	TimeZone         string           `db:"time_zone"`
	State            string           `db:"state"`
	PauseReason      string           `db:"pause_reason"`
	ResumeAt         *time.Time       `db:"resume_at"`
	CreatedAt        time.Time        `db:"created_at"`
	UpdatedAt        time.Time        `db:"updated_at"`
	StartedAt        *time.Time       `db:"started_at"`
	FinishedAt       *time.Time       `db:"finished_at"`
	Test             bool             `db:"test"`
	Preflight        []byte           `db:"preflight"`
}

func (b *Broadcast) decode() error {
	if len(b.ParamsJSON) == 0 {
		return nil
	}
	return json.Unmarshal(b.ParamsJSON, &b.Params)
}

const broadcastColumns = `id, account_id, campaign_id, name, phone_number_id, portfolio, template_name, template_language,
	marketing, params, scheduled_at, time_zone, state, pause_reason, resume_at, created_at, updated_at, started_at, finished_at,
	test, preflight`

// recipientChunk bounds the rows of one insert statement.
const recipientChunk = 5000

// CreateBroadcast stores a broadcast of the account and its recipients in one transaction: the
// campaign named in.Name (made when missing), the broadcast (scheduled when in.ScheduledAt is
// set, running otherwise) and one row per recipient. A recipient listed twice is stored once.
// It fails with ErrNotFound when the account does not exist.
func (s *Store) CreateBroadcast(ctx context.Context, accountID int64, in BroadcastInput, rs []RecipientInput) (Broadcast, error) {
	params, err := json.Marshal(nonNilParams(in.Params))
	if err != nil {
		return Broadcast{}, err
	}
	state := BroadcastRunning
	if in.ScheduledAt != nil {
		state = BroadcastScheduled
	}
	tz := in.TimeZone
	if tz == "" {
		tz = "UTC"
	}
	preflight := in.Preflight
	if len(preflight) == 0 {
		preflight = json.RawMessage(`{}`)
	}
	var b Broadcast
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		var campaign int64
		if err := tx.GetContext(ctx, &campaign, `WITH c AS (
				INSERT INTO campaigns (account_id, name) VALUES ($1, $2) ON CONFLICT (account_id, name) DO NOTHING RETURNING id)
			SELECT id FROM c UNION ALL SELECT id FROM campaigns WHERE account_id = $1 AND name = $2 LIMIT 1`,
			accountID, in.Name); err != nil {
			return err
		}
		if err := tx.GetContext(ctx, &b, `INSERT INTO broadcasts (account_id, campaign_id, name, phone_number_id, portfolio,
				template_name, template_language, marketing, params, scheduled_at, time_zone, state, started_at, test, preflight)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, CASE WHEN $12 = 'running' THEN now() END, $13, $14)
			RETURNING `+broadcastColumns,
			accountID, campaign, in.Name, in.PhoneNumberID, in.Portfolio, in.TemplateName, in.TemplateLanguage, in.Marketing,
			params, in.ScheduledAt, tz, state, in.Test, []byte(preflight)); err != nil {
			return err
		}
		return insertRecipients(ctx, tx, accountID, b.ID, rs)
	})
	if err != nil {
		if pe, ok := err.(*pq.Error); ok && pe.Code == "23503" {
			return Broadcast{}, ErrNotFound
		}
		return Broadcast{}, translate(err)
	}
	return b, b.decode()
}

func nonNilParams(p []BroadcastParam) []BroadcastParam {
	if p == nil {
		return []BroadcastParam{}
	}
	return p
}

// recipientRow is one element of insertRecipients' JSON array.
type recipientRow struct {
	Mobile    string            `json:"m"`
	UserID    string            `json:"u"`
	Variables map[string]string `json:"v"`
}

func insertRecipients(ctx context.Context, tx *sqlx.Tx, accountID, broadcastID int64, rs []RecipientInput) error {
	for start := 0; start < len(rs); start += recipientChunk {
		chunk := rs[start:min(start+recipientChunk, len(rs))]
		rows := make([]recipientRow, len(chunk))
		for i, r := range chunk {
			v := r.Variables
			if v == nil {
				v = map[string]string{}
			}
			rows[i] = recipientRow{Mobile: r.Mobile, UserID: r.UserID, Variables: v}
		}
		data, err := json.Marshal(rows)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO broadcast_recipients (account_id, broadcast_id, mobile, user_id, variables)
			SELECT $1, $2, x.m, x.u, x.v FROM jsonb_to_recordset($3::jsonb) AS x(m text, u text, v jsonb)
			ON CONFLICT (broadcast_id, mobile, user_id) DO NOTHING`, accountID, broadcastID, data); err != nil {
			return err
		}
	}
	return nil
}

// inTx runs f in a transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, f func(*sqlx.Tx) error) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// BroadcastByID returns the account's broadcast, or ErrNotFound.
func (s *Store) BroadcastByID(ctx context.Context, accountID, id int64) (Broadcast, error) {
	var b Broadcast
	if err := s.db.GetContext(ctx, &b, `SELECT `+broadcastColumns+` FROM broadcasts WHERE account_id = $1 AND id = $2`,
		accountID, id); err != nil {
		return Broadcast{}, translate(err)
	}
	return b, b.decode()
}

// Broadcasts returns the account's live broadcasts newest first, those with ids below beforeID
// (0: from the newest), at most limit.
func (s *Store) Broadcasts(ctx context.Context, accountID, beforeID int64, limit int) ([]Broadcast, error) {
	return s.BroadcastsInMode(ctx, accountID, false, beforeID, limit)
}

// BroadcastsInMode is Broadcasts of the account's test-mode broadcasts (test) or live ones.
func (s *Store) BroadcastsInMode(ctx context.Context, accountID int64, test bool, beforeID int64, limit int) ([]Broadcast, error) {
	var out []Broadcast
	if err := s.db.SelectContext(ctx, &out, `SELECT `+broadcastColumns+` FROM broadcasts
		WHERE account_id = $1 AND test = $2 AND ($3 = 0 OR id < $3) ORDER BY id DESC LIMIT $4`, accountID, test, beforeID, limit); err != nil {
		return nil, translate(err)
	}
	for i := range out {
		if err := out[i].decode(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
