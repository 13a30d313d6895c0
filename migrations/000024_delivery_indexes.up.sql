-- Two fewer index entries per webhook delivery. A delivery writes its row three times (the
-- fan-out inserts it, the claim and the result update it, neither heap-only: each changes a
-- column the due index names), so every index of webhook_deliveries takes three entries per
-- delivery, and five deliveries make one message's life in the lifecycle benchmark.
--
-- webhook_deliveries_account_idx (account_id, created_at DESC) served only the newest-first
-- delivery list; the ids are UUIDv7, time-ordered, so that list reads the unique
-- (account_id, id) index backwards instead (store.DeliveriesByAccount).
DROP INDEX webhook_deliveries_account_idx;

-- Retention finds expired attempts by time; attempts are appended in time order, so a BRIN
-- index serves it as it does for events and raw platform webhooks (000017).
DROP INDEX webhook_attempts_time_idx;
CREATE INDEX webhook_attempts_time_brin ON webhook_attempts USING brin (attempted_at) WITH (autosummarize = on);

-- The attempts' lookup index leads with the account, as their foreign key to the delivery does:
-- the cascade from a deleted delivery (retention, an endpoint deleted) is one generic plan, and
-- with (delivery_id, attempt) and statistics that did not know the table yet, that plan ANDed
-- the delivery index with the whole account's attempt index, milliseconds per deleted delivery.
DROP INDEX webhook_attempts_delivery_idx;
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (account_id, delivery_id, attempt);
