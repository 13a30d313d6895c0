DROP FUNCTION IF EXISTS status_rank(text);
