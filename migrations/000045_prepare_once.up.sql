-- Plans that survive a transaction pooler. Behind PgBouncer in transaction mode the pool sends no
-- protocol-level named statement (the pooler cannot follow one to the server connection the
-- next transaction lands on), so every statement was parsed, analysed and planned on every
-- execution. prepare_once lets the store keep its hot statements prepared on each server
-- connection instead: a statement named after a hash of its text is prepared (SQL PREPARE) the
-- first time it is called on a server connection, whoever the client, and the same round trip
-- runs it with EXECUTE. The check is a lookup of a session setting
-- (gateway_prepared.<name>), not a scan of pg_prepared_statements, which copies every
-- statement's text on each call. The setting and the statements can part: an aborted
-- transaction rolls the setting back but not the PREPARE, and RESET ALL empties the setting
-- (DISCARD ALL also drops the statements). A setting that does not say 'prepared' falls back to
-- that scan once. Only a DEALLOCATE without RESET would leave the setting claiming a statement
-- that is gone.
CREATE PROCEDURE prepare_once(name text, statement text) LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('gateway_prepared.' || name, true) IS DISTINCT FROM 'prepared' THEN
        IF NOT EXISTS (SELECT 1 FROM pg_prepared_statements p WHERE p.name = prepare_once.name) THEN
            EXECUTE format('PREPARE %I AS %s', name, statement);
        END IF;
        PERFORM set_config('gateway_prepared.' || name, 'prepared', false);
    END IF;
END $$;
