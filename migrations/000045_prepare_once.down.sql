DROP PROCEDURE IF EXISTS prepare_once(text, text);
