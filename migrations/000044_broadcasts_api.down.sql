DROP TRIGGER IF EXISTS messages_broadcast_failed ON messages;
DROP FUNCTION IF EXISTS broadcast_message_failed();
DROP TRIGGER IF EXISTS broadcasts_state_events ON broadcasts;
DROP FUNCTION IF EXISTS broadcasts_state_event();
DELETE FROM events WHERE type IN ('broadcast.paused', 'broadcast.completed');
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type = ANY (ARRAY['message.received', 'message.sent',
    'message.status', 'contact.created', 'webhook.test', 'message.received_without_number', 'message.edited',
    'message.deleted', 'contact.created_without_number', 'contact.updated']));
DROP INDEX IF EXISTS broadcast_recipients_unknown_idx;
DROP INDEX IF EXISTS broadcasts_account_idx;
CREATE INDEX broadcasts_account_idx ON broadcasts (account_id, id DESC);
ALTER TABLE broadcasts DROP COLUMN IF EXISTS preflight;
ALTER TABLE broadcasts DROP COLUMN IF EXISTS test;
