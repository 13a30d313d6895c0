DROP INDEX platform_webhooks_received_brin;
CREATE INDEX platform_webhooks_received_idx ON platform_webhooks (received_at);
DROP INDEX events_created_brin;
CREATE INDEX events_created_idx ON events (created_at);
ALTER TABLE messages RESET (fillfactor);
DROP INDEX messages_failed_idx;
CREATE INDEX messages_failed_idx ON messages (account_id, created_at DESC, id DESC) WHERE status = 'failed';
DROP INDEX messages_pending_idx;
CREATE INDEX messages_pending_idx ON messages (created_at) WHERE status = 'pending';
ALTER TABLE messages ADD CONSTRAINT messages_account_id_id_key UNIQUE (account_id, id);

CREATE TABLE message_statuses (
    account_id  bigint      NOT NULL,
    message_id  bigint      NOT NULL,
    status      text        NOT NULL,
    occurred_at timestamptz NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (message_id, status),
    FOREIGN KEY (account_id, message_id) REFERENCES messages (account_id, id) ON DELETE CASCADE
);
INSERT INTO message_statuses (account_id, message_id, status, occurred_at)
SELECT account_id, id, s.status, s.at FROM messages,
    LATERAL (VALUES ('sent', sent_at), ('delivered', delivered_at), ('read', read_at), ('failed', failed_at)) s (status, at)
WHERE direction = 'out' AND s.at IS NOT NULL;

ALTER TABLE messages DROP COLUMN delivered_at, DROP COLUMN read_at, DROP COLUMN failed_at;
