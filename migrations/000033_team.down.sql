DROP INDEX IF EXISTS invitations_pending_idx;
ALTER TABLE invitations DROP COLUMN IF EXISTS revoked_at;
