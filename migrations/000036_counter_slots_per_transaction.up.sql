-- Counter slots owned per transaction instead of per session. 000028 gave each connection a
-- slot of its own for its life: a session-level advisory lock (1668247157, slot) and the session
-- setting gateway.counter_slot. Behind a transaction pooler (PgBouncer in transaction mode) a
-- server connection serves many clients one transaction at a time, and nothing of a session
-- may outlive its transaction: the pooler may reset the connection (DISCARD ALL drops the
-- setting, pg_advisory_unlock_all the lock), or hand it to a client that expects a clean one.
--
-- Now a transaction claims a slot on its first count with pg_try_advisory_xact_lock, starting
-- at its backend's pid mod 32 (so a connection usually finds the slot it had before free), and
-- keeps it in the transaction-local setting for its later statements; both end with the
-- transaction. The lock is held exactly as long as the counter rows' row locks, so a
-- transaction that claims the slot next never waits for them, and no other transaction writes
-- an owned slot's rows while it is owned: the property 000028 had, per transaction. When all 32
-- are owned, the transaction shares slot 32 + pid mod 32 behind that slot's transaction lock,
-- as before. A session that still holds a claim of the old function (its session lock and
-- setting) keeps counting in its slot until it closes; no one else can take that slot meanwhile.
CREATE OR REPLACE FUNCTION counter_slot_claim() RETURNS smallint LANGUAGE plpgsql AS $$
DECLARE
    s int;
    h int := pg_backend_pid() % 32;
BEGIN
    FOR i IN 0..31 LOOP
        IF pg_try_advisory_xact_lock(1668247157, (h + i) % 32) THEN
            s := (h + i) % 32;
            EXIT;
        END IF;
    END LOOP;
    IF s IS NULL THEN
        s := 32 + h;
    END IF;
    PERFORM set_config('gateway.counter_slot', s::text, true);
    RETURN s;
END
$$;
