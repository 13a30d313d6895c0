package store

import (
	"context"
	"time"
)

// Audit actions.
const (
	AuditKeyCreated         = "key.created"
	AuditKeyRevoked         = "key.revoked"
	AuditWebhookAdded       = "webhook.added"
	AuditWebhookRotated     = "webhook.rotated"
	AuditWebhookDeleted     = "webhook.deleted"
	AuditWebhookEnabled     = "webhook.enabled"
	AuditWebhookDisabled    = "webhook.disabled"
	AuditWebhookEvents      = "webhook.events_changed"
	AuditNumberConnected    = "number.connected"
	AuditNumberDisconnect   = "number.disconnected"
	AuditUserInvited        = "user.invited"
	AuditPasswordChanged    = "user.password_changed"
	AuditWorkspaceCreated   = "workspace.created"
	AuditInvitationAccepted = "user.joined"
	AuditContactUpdated     = "contact.updated"
	AuditContactBlocked     = "contact.blocked"
	AuditContactUnblocked   = "contact.unblocked"
	AuditMemberRoleChanged  = "member.role_changed"
	AuditMemberRemoved      = "member.removed"
	AuditInvitationRevoked  = "invitation.revoked"
	AuditInvitationResent   = "invitation.resent"
)

// AuditEntry is one security-relevant action in an account.
type AuditEntry struct {
	ID        int64     `db:"id" json:"id"`
	AccountID int64     `db:"account_id" json:"account_id"`
	UserID    *int64    `db:"user_id" json:"user_id,omitempty"`
	UserEmail string    `db:"user_email" json:"user_email"`
	Action    string    `db:"action" json:"action"`
	Target    string    `db:"target" json:"target"`
	Detail    string    `db:"detail" json:"detail"`
	CreatedAt time.Time `db:"created_at" json:"created_at"`
}

// AddAudit records an action of a user (0: the operator or the system) in the account.
func (s *Store) AddAudit(ctx context.Context, accountID, userID int64, action, target, detail string) error {
	var uid *int64
	if userID != 0 {
		uid = &userID
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO audit_log (account_id, user_id, action, target, detail) VALUES ($1, $2, $3, $4, $5)`,
		accountID, uid, action, safeText(target), safeText(detail))
	return translate(err)
}

const auditColumns = `l.id, l.account_id, l.user_id, COALESCE(u.email, '') AS user_email, l.action, l.target, l.detail, l.created_at`

// AuditLog lists the account's entries newest first, at most limit, with ids below before
// (0: from the newest).
func (s *Store) AuditLog(ctx context.Context, accountID, before int64, limit int) ([]AuditEntry, error) {
	es := []AuditEntry{}
	err := s.db.SelectContext(ctx, &es, `SELECT `+auditColumns+` FROM audit_log l LEFT JOIN users u ON u.id = l.user_id
		WHERE l.account_id = $1 AND ($2 = 0 OR l.id < $2) ORDER BY l.id DESC LIMIT $3`, accountID, before, limit)
	return es, translate(err)
}

// AuditEntryByID returns one of the account's entries, or ErrNotFound.
func (s *Store) AuditEntryByID(ctx context.Context, accountID, id int64) (AuditEntry, error) {
	var e AuditEntry
	err := s.db.GetContext(ctx, &e, `SELECT `+auditColumns+` FROM audit_log l LEFT JOIN users u ON u.id = l.user_id
		WHERE l.account_id = $1 AND l.id = $2`, accountID, id)
	return e, translate(err)
}

// Audit actions of the operator's commands (gateway admin) that the dashboard has no form for.
const (
	AuditWorkspaceActivated   = "workspace.activated"
	AuditWorkspaceDeactivated = "workspace.deactivated"
	AuditTemplatesSynced      = "templates.synced"
	AuditDeliveryRedelivered  = "delivery.redelivered"
	AuditUserCreated          = "user.created"
	AuditSecretsResealed      = "secrets.resealed"
)
