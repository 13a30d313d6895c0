-- A message's status history as columns of the message: sent_at (already there), delivered_at,
-- read_at and failed_at hold the platform's time of each status the message reached (or was
-- reported late), once each, which is all message_statuses ever held (its key was (message,
-- status)). A status report then writes one row instead of two, and a report that changes
-- nothing is one indexed read.
--
-- No index on messages mentions status or the delivered/read times any more, and the table
-- leaves room on its pages (fillfactor 85): the delivered and read updates are heap-only
-- (HOT), touching no index. The two partial indexes that named status now name the columns
-- that never move on those updates:
--   pending (the reconciler's orphaned sends): outbound, neither sent nor failed, outcome known;
--   failed (the message list's status filter): failed_at set (failed is terminal).
-- An outbound message is pending exactly when sent_at and failed_at are both NULL: every path
-- that leaves pending (RecordSent, adoption by callback data, RecordSendFailure, a failed
-- report) sets one of them.
ALTER TABLE messages ADD COLUMN delivered_at timestamptz, ADD COLUMN read_at timestamptz,
    ADD COLUMN failed_at timestamptz;

UPDATE messages m SET
    sent_at = COALESCE(h.sent, m.sent_at),
    delivered_at = h.delivered, read_at = h.read, failed_at = h.failed
FROM (SELECT message_id,
        max(occurred_at) FILTER (WHERE status = 'sent') AS sent,
        max(occurred_at) FILTER (WHERE status = 'delivered') AS delivered,
        max(occurred_at) FILTER (WHERE status = 'read') AS read,
        max(occurred_at) FILTER (WHERE status = 'failed') AS failed
    FROM message_statuses GROUP BY message_id) h
WHERE m.id = h.message_id;
-- A status always came with its history row; should one be missing, the message's creation
-- time stands in, so that every status has its time.
UPDATE messages SET failed_at = created_at WHERE status = 'failed' AND failed_at IS NULL;
UPDATE messages SET sent_at = created_at
    WHERE direction = 'out' AND status IN ('sent', 'delivered', 'read') AND sent_at IS NULL;
UPDATE messages SET delivered_at = COALESCE(read_at, sent_at, created_at) WHERE status = 'delivered' AND delivered_at IS NULL;
UPDATE messages SET read_at = COALESCE(delivered_at, sent_at, created_at) WHERE status = 'read' AND read_at IS NULL;

DROP TABLE message_statuses;
-- (account_id, id) was unique only for message_statuses' foreign key; the primary key serves
-- every lookup by id.
ALTER TABLE messages DROP CONSTRAINT messages_account_id_id_key;

DROP INDEX messages_pending_idx;
CREATE INDEX messages_pending_idx ON messages (created_at)
    WHERE direction = 'out' AND sent_at IS NULL AND failed_at IS NULL AND NOT outcome_unknown;
DROP INDEX messages_failed_idx;
CREATE INDEX messages_failed_idx ON messages (account_id, created_at DESC, id DESC) WHERE failed_at IS NOT NULL;

ALTER TABLE messages SET (fillfactor = 85);

-- Retention finds expired events and raw platform webhooks by time; both tables are appended in
-- time order, so a BRIN index (a summary per range of pages, kept up by autovacuum, nothing
-- per row) serves it instead of a B-tree that every event and every webhook wrote into.
DROP INDEX events_created_idx;
CREATE INDEX events_created_brin ON events USING brin (created_at) WITH (autosummarize = on);
DROP INDEX platform_webhooks_received_idx;
CREATE INDEX platform_webhooks_received_brin ON platform_webhooks USING brin (received_at) WITH (autosummarize = on);
