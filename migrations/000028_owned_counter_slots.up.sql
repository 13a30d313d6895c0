-- Counter slots owned by a session. Each connection wrote the counter rows of slot (backend pid
-- mod 32 per hour, mod 64 in total, 000020) and took that slot's transaction lock before its
-- first row (000027), so connections whose pids share a slot waited for each other's commit:
-- with the gateway's sixteen to twenty connections over 32 slots about half had a slot-mate,
-- and under load that lock wait sat inside sends and status batches alike.
--
-- Now a connection claims a slot of its own, 0 to 31, with a session-level advisory lock
-- (1668247157, slot) the first time it counts, and remembers it in the session setting
-- gateway.counter_slot; it writes its hour rows and total rows in that slot. No other session
-- writes an owned slot's rows, and a session runs one transaction at a time, so nothing waits
-- for those rows and no cycle can form: no transaction lock is taken for them. When all 32 are
-- owned, a connection shares slot 32 + pid mod 32 and takes that slot's transaction lock
-- first, as 000027 did, so sharers still never deadlock. The claim ends with the connection.
--
-- A claim made in a transaction that rolls back keeps its lock (a session lock) but loses the
-- setting; the next claim finds the held lock in pg_locks and keeps that slot. A session that
-- ran pg_advisory_unlock_all() but kept the setting would write its slot unowned; the gateway
-- never does (DISCARD ALL, as poolers send it, resets both). The failure counts keep their one
-- lock (1668247156, -1), taken after the slot's rows.
--
-- Existing rows of slots 32 to 63 stay and are still summed; readers sum every slot.
--
-- The function keeps plan_cache_mode = force_generic_plan (000023), which CREATE OR REPLACE
-- would otherwise drop.
CREATE FUNCTION counter_slot_claim() RETURNS smallint LANGUAGE plpgsql AS $$
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

CREATE OR REPLACE FUNCTION messages_count() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    r    messages;
    d    int;       -- +1 counts r in, -1 takes it out
    prev text;      -- the status r is moving from in the same rows (NULL: none)
    n    int := 1;  -- passes: 2 when the message moved to other rows (the gateway never does this)
    k    int;
    a bigint; c bigint; at timestamptz; dp int; ds int; dd int; dr int; df int;
    s    smallint := NULLIF(current_setting('gateway.counter_slot', true), '')::smallint; -- this session's
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.direction = 'out' AND OLD.campaign_id IS NOT NULL THEN
        IF (OLD.account_id, OLD.campaign_id, OLD.created_at) IS NOT DISTINCT FROM
            (NEW.account_id, NEW.campaign_id, NEW.created_at) AND NEW.direction = 'out' THEN
            prev := OLD.status;
        ELSE
            n := 2;
        END IF;
    END IF;
    IF TG_OP = 'DELETE' THEN
        r := OLD;
        d := -1;
    ELSE
        r := NEW;
        d := 1;
    END IF;
    FOR k IN 1..n LOOP
        IF n = 2 AND k = 1 THEN
            -- Take the moved message out of its old rows.
            a := OLD.account_id; c := OLD.campaign_id; at := OLD.created_at;
            dp := -(OLD.status = 'pending')::int; ds := -(OLD.status = 'sent')::int;
            dd := -(OLD.status = 'delivered')::int; dr := -(OLD.status = 'read')::int; df := -(OLD.status = 'failed')::int;
        ELSE
            IF r.direction <> 'out' OR r.campaign_id IS NULL THEN
                RETURN NULL;
            END IF;
            a := r.account_id; c := r.campaign_id; at := r.created_at;
            dp := d * ((r.status = 'pending')::int - (prev IS NOT DISTINCT FROM 'pending')::int);
            ds := d * ((r.status = 'sent')::int - (prev IS NOT DISTINCT FROM 'sent')::int);
            dd := d * ((r.status = 'delivered')::int - (prev IS NOT DISTINCT FROM 'delivered')::int);
            dr := d * ((r.status = 'read')::int - (prev IS NOT DISTINCT FROM 'read')::int);
            df := d * ((r.status = 'failed')::int - (prev IS NOT DISTINCT FROM 'failed')::int);
        END IF;
        -- The session's slot, claimed on its first count; a shared slot's lock first (see
        -- the migration's notes), then one statement (its plan cached by PL/pgSQL) for the
        -- hour row and the total row.
        IF s IS NULL THEN
            s := counter_slot_claim();
        END IF;
        IF s >= 32 THEN
            PERFORM pg_advisory_xact_lock(1668247156, s);
        END IF;
        WITH h AS (
            INSERT INTO campaign_counters AS x (account_id, campaign_id, bucket, slot, pending, sent, delivered, read, failed)
            VALUES (a, c, date_trunc('hour', at, 'UTC'), s, dp, ds, dd, dr, df)
            ON CONFLICT (account_id, campaign_id, bucket, slot) DO UPDATE SET
                pending = x.pending + EXCLUDED.pending, sent = x.sent + EXCLUDED.sent,
                delivered = x.delivered + EXCLUDED.delivered, read = x.read + EXCLUDED.read, failed = x.failed + EXCLUDED.failed
        )
        INSERT INTO campaign_totals AS t (account_id, campaign_id, slot, pending, sent, delivered, read, failed, first_at, last_at)
        VALUES (a, c, s, dp, ds, dd, dr, df, at, at)
        ON CONFLICT (account_id, campaign_id, slot) DO UPDATE SET
            pending = t.pending + EXCLUDED.pending, sent = t.sent + EXCLUDED.sent,
            delivered = t.delivered + EXCLUDED.delivered, read = t.read + EXCLUDED.read, failed = t.failed + EXCLUDED.failed,
            first_at = LEAST(t.first_at, EXCLUDED.first_at), last_at = GREATEST(t.last_at, EXCLUDED.last_at);
    END LOOP;
    IF r.status = 'failed' AND prev IS DISTINCT FROM 'failed' THEN
        PERFORM pg_advisory_xact_lock(1668247156, -1);
        INSERT INTO campaign_failures AS f (account_id, campaign_id, error_code, error_title, count)
        VALUES (r.account_id, r.campaign_id, COALESCE(r.error_code, 0), COALESCE(r.error_title, ''), d)
        ON CONFLICT (account_id, campaign_id, error_code, error_title) DO UPDATE SET count = f.count + EXCLUDED.count;
    END IF;
    RETURN NULL;
END
$$;
