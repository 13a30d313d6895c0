DROP INDEX IF EXISTS webhook_attempts_account_idx;
DELETE FROM events WHERE type = 'webhook.test';
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check
    CHECK (type IN ('message.received', 'message.sent', 'message.status', 'contact.created'));
ALTER TABLE webhook_endpoints DROP COLUMN IF EXISTS previous_secret_expires_at,
                              DROP COLUMN IF EXISTS previous_secret;
ALTER TABLE api_keys DROP COLUMN IF EXISTS last4, DROP COLUMN IF EXISTS name;
DROP TABLE IF EXISTS signin_throttle;
DROP TABLE IF EXISTS audit_log;
DROP TABLE IF EXISTS invitations;
DROP TABLE IF EXISTS sessions;
DROP TABLE IF EXISTS memberships;
DROP TABLE IF EXISTS users;
