package store

import (
	"context"

	"github.com/jmoiron/sqlx"
)

// The audit details of a contact's own opt-out keyword (RecordInbound's Block), so that the
// contact page can say why a contact is blocked.
const (
	OptOutDetail = "The contact replied STOP: WhatsApp opt-out keyword"
	OptInDetail  = "The contact replied START: WhatsApp opt-in keyword"
)

// auditOptOut records, in the inbound message's transaction, that the contact blocked (STOP) or
// unblocked (START) itself; the entry has no user.
func auditOptOut(ctx context.Context, tx *sqlx.Tx, accountID int64, mobile string, blocked bool) error {
	action, detail := AuditContactUnblocked, OptInDetail
	if blocked {
		action, detail = AuditContactBlocked, OptOutDetail
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO audit_log (account_id, user_id, action, target, detail) VALUES ($1, NULL, $2, $3, $4)`,
		accountID, action, safeText(mobile), detail)
	return translate(err)
}

// LastBlock returns the account's latest audit entry that blocked the contact with this mobile
// (by a member from the dashboard, or by the contact's STOP), or ErrNotFound when none is kept.
func (s *Store) LastBlock(ctx context.Context, accountID int64, mobile string) (AuditEntry, error) {
	var e AuditEntry
	err := s.db.GetContext(ctx, &e, `SELECT `+auditColumns+` FROM audit_log l LEFT JOIN users u ON u.id = l.user_id
		WHERE l.account_id = $1 AND l.action = $2 AND l.target = $3 ORDER BY l.id DESC LIMIT 1`, accountID, AuditContactBlocked, mobile)
	return e, translate(err)
}
