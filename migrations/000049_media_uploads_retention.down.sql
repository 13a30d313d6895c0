DROP INDEX IF EXISTS media_uploads_created_brin;
