-- Team management: an owner can revoke a pending invitation, and the pending ones of a
-- workspace are listed newest first.
ALTER TABLE invitations ADD COLUMN revoked_at timestamptz;
CREATE INDEX invitations_pending_idx ON invitations (account_id, id DESC) WHERE accepted_at IS NULL AND revoked_at IS NULL;
