DROP INDEX webhook_attempts_delivery_idx;
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempt);
DROP INDEX webhook_attempts_time_brin;
CREATE INDEX webhook_attempts_time_idx ON webhook_attempts (attempted_at);
CREATE INDEX webhook_deliveries_account_idx ON webhook_deliveries (account_id, created_at DESC);
