DROP INDEX IF EXISTS messages_failed_campaign_idx;
DROP INDEX IF EXISTS messages_pending_unknown_idx;
