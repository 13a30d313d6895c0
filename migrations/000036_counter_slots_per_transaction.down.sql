-- Back to slots owned per session (000028).
CREATE OR REPLACE FUNCTION counter_slot_claim() RETURNS smallint LANGUAGE plpgsql AS $$
DECLARE
    s int;
BEGIN
    SELECT l.objid::int INTO s FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid() AND l.classid = 1668247157::oid
        AND l.objsubid = 2 AND l.granted
    ORDER BY l.objid LIMIT 1;
    IF s IS NULL THEN
        FOR i IN 0..31 LOOP
            IF pg_try_advisory_lock(1668247157, i) THEN
                s := i;
                EXIT;
            END IF;
        END LOOP;
    END IF;
    IF s IS NULL THEN
        s := 32 + pg_backend_pid() % 32;
    END IF;
    PERFORM set_config('gateway.counter_slot', s::text, false);
    RETURN s;
END
$$;
