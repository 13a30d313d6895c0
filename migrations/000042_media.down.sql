DROP INDEX IF EXISTS messages_inbound_media_idx;
DROP TABLE IF EXISTS media_uploads;
