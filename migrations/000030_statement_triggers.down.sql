-- Back to one trigger call per row: 000028's counting function and 000013's triggers, and
-- 000019's fan-out with 000023's setting.
DROP TRIGGER messages_count_inserted ON messages;
DROP TRIGGER messages_count_updated ON messages;
DROP TRIGGER messages_count_deleted ON messages;
DROP FUNCTION messages_count_rows();
DROP TYPE messages_count_delta;

CREATE FUNCTION messages_count() RETURNS trigger LANGUAGE plpgsql
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

CREATE TRIGGER messages_count_insert AFTER INSERT OR DELETE ON messages
    FOR EACH ROW EXECUTE FUNCTION messages_count();
CREATE TRIGGER messages_count_update AFTER UPDATE ON messages
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status
        OR OLD.campaign_id IS DISTINCT FROM NEW.campaign_id OR OLD.created_at IS DISTINCT FROM NEW.created_at
        OR OLD.direction IS DISTINCT FROM NEW.direction)
    EXECUTE FUNCTION messages_count();

DROP TRIGGER events_fan_out ON events;
CREATE OR REPLACE FUNCTION events_fan_out() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    INSERT INTO webhook_deliveries (account_id, event_id, endpoint_id, next_attempt_at)
    SELECT NEW.account_id, NEW.id, w.id, NEW.created_at
    FROM webhook_endpoints w
    WHERE w.account_id = NEW.account_id AND w.enabled;
    RETURN NULL;
END
$$;
CREATE TRIGGER events_fan_out AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION events_fan_out();
