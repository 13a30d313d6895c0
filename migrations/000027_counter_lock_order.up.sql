-- No deadlocks between statements that change several messages. The counter trigger locks,
-- for each changed message, its campaign's hour row and total row of the writer's slot
-- (backend pid mod 32 and mod 64, 000020), in the order the statement changes the messages.
-- A statement that changes one message always locks its hour row before its total row, so two
-- of those never wait on each other in a cycle. Two statements that change several messages
-- (the group commits of status reports and of sends' recordings, a retention delete) on
-- connections whose slots collide could lock the same rows in opposite orders: the lifecycle
-- benchmark logged "deadlock detected", each a one-second stall (deadlock_timeout) and a
-- failed batch.
--
-- Now the trigger takes a transaction-level advisory lock on its slot (pid mod 32, which every
-- colliding pair shares) before it touches a counter row: a second writer of the slot waits
-- there, before locking any counter row, until the first commits. A transaction asks for its
-- slot's lock only before its first counter row (later calls hold it already), so these locks
-- never form a cycle with the rows. The failure counts (campaign_failures) have no slot: their
-- writers take one further lock, always after their slot's, so their rows are never locked
-- in opposite orders either. The lock ids are (1668247156, slot) and (1668247156, -1);
-- 1668247156 is 'coun' in ASCII.
--
-- The function keeps plan_cache_mode = force_generic_plan (000023), which CREATE OR REPLACE
-- would otherwise drop.
CREATE OR REPLACE FUNCTION messages_count() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    r    messages;
    d    int;       -- +1 counts r in, -1 takes it out
    prev text;      -- the status r is moving from in the same rows (NULL: none)
    n    int := 1;  -- passes: 2 when the message moved to other rows (the gateway never does this)
    k    int;
    a bigint; c bigint; at timestamptz; s smallint; dp int; ds int; dd int; dr int; df int;
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
            a := OLD.account_id; c := OLD.campaign_id; at := OLD.created_at; s := pg_backend_pid() % 64;
            dp := -(OLD.status = 'pending')::int; ds := -(OLD.status = 'sent')::int;
            dd := -(OLD.status = 'delivered')::int; dr := -(OLD.status = 'read')::int; df := -(OLD.status = 'failed')::int;
        ELSE
            IF r.direction <> 'out' OR r.campaign_id IS NULL THEN
                RETURN NULL;
            END IF;
            a := r.account_id; c := r.campaign_id; at := r.created_at; s := pg_backend_pid() % 64;
            dp := d * ((r.status = 'pending')::int - (prev IS NOT DISTINCT FROM 'pending')::int);
            ds := d * ((r.status = 'sent')::int - (prev IS NOT DISTINCT FROM 'sent')::int);
            dd := d * ((r.status = 'delivered')::int - (prev IS NOT DISTINCT FROM 'delivered')::int);
            dr := d * ((r.status = 'read')::int - (prev IS NOT DISTINCT FROM 'read')::int);
            df := d * ((r.status = 'failed')::int - (prev IS NOT DISTINCT FROM 'failed')::int);
        END IF;
        -- The slot's lock first (see the migration's notes), then one statement (its plan
        -- cached by PL/pgSQL) for the hour row and the total row.
        PERFORM pg_advisory_xact_lock(1668247156, s % 32);
        WITH h AS (
            INSERT INTO campaign_counters AS x (account_id, campaign_id, bucket, slot, pending, sent, delivered, read, failed)
            VALUES (a, c, date_trunc('hour', at, 'UTC'), s % 32, dp, ds, dd, dr, df)
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
