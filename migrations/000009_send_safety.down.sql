CREATE INDEX IF NOT EXISTS webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
DROP INDEX IF EXISTS webhook_deliveries_endpoint_due_idx;
DROP TRIGGER IF EXISTS connections_notify ON connections;
DROP FUNCTION IF EXISTS notify_connection_change();
ALTER TABLE templates DROP COLUMN IF EXISTS status_at;
ALTER TABLE parked_statuses DROP COLUMN IF EXISTS callback_message_id;
ALTER TABLE idempotency_keys DROP COLUMN IF EXISTS message_id;
DROP INDEX IF EXISTS messages_pending_idx;
ALTER TABLE messages DROP COLUMN IF EXISTS outcome_unknown;
