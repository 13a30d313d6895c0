-- Retention deletes an upload's row once the platform no longer keeps the file (30 days after
-- the upload). Uploads are appended in time order, so a BRIN index on created_at finds them,
-- as for the other tables retention prunes.
CREATE INDEX media_uploads_created_brin ON media_uploads USING brin (created_at) WITH (autosummarize = on);
