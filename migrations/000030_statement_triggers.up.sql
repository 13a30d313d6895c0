-- The campaign counters and the webhook fan-out run once per statement instead of once per row.
-- A status statement carries about eight reports and a send statement several sends; each row
-- ran its PL/pgSQL trigger, and each trigger call started an executor for its statement (two
-- upserts for the counters, an INSERT ... SELECT for the fan-out). Under the status benchmark
-- those calls were a large share of PostgreSQL's CPU, most of it executor start-up. Now each statement's changed rows reach one
-- call through transition tables, which writes each counter row once per statement.
--
-- The counting rule is the one of 000013 to 000028: a message counts in its account's campaign
-- (direction 'out', campaign set) under its status, in its creation hour and in the campaign's
-- totals; an update that changes any of those takes the old row out and puts the new row in (a
-- status move within one campaign nets to -1 and +1 on one counter row). One change: a failed
-- message now counts among its campaign's failures, by error code and title, exactly while it
-- is a failed message of that campaign. Before, only becoming failed was counted, so a failed
-- message moved to another campaign or direction stayed among its old campaign's failures; the
-- gateway never moves messages, so no count it made differs. The slot rule is 000028's: the
-- session's own slot, or a shared slot behind its transaction lock; the failures' lock comes
-- after the slot's rows. A statement that changed no counted row writes nothing and takes no
-- lock.
--
-- An update is matched to its old row by id, which nothing updates. PostgreSQL does not allow
-- one trigger with transition tables for several events, so there are three triggers on one
-- function. Transition tables hold every row a statement on messages changes, counted or not,
-- until the statement ends (in memory up to work_mem).
CREATE TYPE messages_count_delta AS (
    account_id  bigint,
    campaign_id bigint,
    created_at  timestamptz,
    status      text,
    delta       int,     -- +1 counts the row in, -1 takes it out
    failed      boolean, -- it also counts delta among its campaign's failures
    error_code  int,
    error_title text
);

CREATE FUNCTION messages_count_rows() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    ds      messages_count_delta[];
    failing boolean;
    s       smallint := NULLIF(current_setting('gateway.counter_slot', true), '')::smallint; -- this session's
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(ROW(n.account_id, n.campaign_id, n.created_at, n.status, 1, n.status = 'failed',
                n.error_code, n.error_title)::messages_count_delta), bool_or(n.status = 'failed')
        INTO ds, failing
        FROM new_messages n WHERE n.direction = 'out' AND n.campaign_id IS NOT NULL;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(ROW(o.account_id, o.campaign_id, o.created_at, o.status, -1, o.status = 'failed',
                o.error_code, o.error_title)::messages_count_delta), bool_or(o.status = 'failed')
        INTO ds, failing
        FROM old_messages o WHERE o.direction = 'out' AND o.campaign_id IS NOT NULL;
    ELSE
        SELECT array_agg(x.d), bool_or((x.d).failed)
        INTO ds, failing
        FROM old_messages o JOIN new_messages n ON n.id = o.id
        CROSS JOIN LATERAL (
            SELECT ROW(o.account_id, o.campaign_id, o.created_at, o.status, -1, o.status = 'failed',
                    o.error_code, o.error_title)::messages_count_delta
            WHERE o.direction = 'out' AND o.campaign_id IS NOT NULL
            UNION ALL
            SELECT ROW(n.account_id, n.campaign_id, n.created_at, n.status, 1, n.status = 'failed',
                    n.error_code, n.error_title)::messages_count_delta
            WHERE n.direction = 'out' AND n.campaign_id IS NOT NULL
        ) x (d)
        WHERE (o.account_id, o.campaign_id, o.created_at, o.direction, o.status, o.error_code, o.error_title)
            IS DISTINCT FROM (n.account_id, n.campaign_id, n.created_at, n.direction, n.status, n.error_code, n.error_title);
    END IF;
    IF ds IS NULL THEN
        RETURN NULL;
    END IF;
    IF s IS NULL THEN
        s := counter_slot_claim();
    END IF;
    IF s >= 32 THEN
        PERFORM pg_advisory_xact_lock(1668247156, s);
    END IF;
    WITH d AS (
        SELECT * FROM unnest(ds)
    ), h AS (
        INSERT INTO campaign_counters AS x (account_id, campaign_id, bucket, slot, pending, sent, delivered, read, failed)
        SELECT d.account_id, d.campaign_id, date_trunc('hour', d.created_at, 'UTC'), s,
            sum(d.delta * (d.status = 'pending')::int), sum(d.delta * (d.status = 'sent')::int),
            sum(d.delta * (d.status = 'delivered')::int), sum(d.delta * (d.status = 'read')::int),
            sum(d.delta * (d.status = 'failed')::int)
        FROM d GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (account_id, campaign_id, bucket, slot) DO UPDATE SET
            pending = x.pending + EXCLUDED.pending, sent = x.sent + EXCLUDED.sent,
            delivered = x.delivered + EXCLUDED.delivered, read = x.read + EXCLUDED.read,
            failed = x.failed + EXCLUDED.failed
    )
    INSERT INTO campaign_totals AS t (account_id, campaign_id, slot, pending, sent, delivered, read, failed, first_at, last_at)
    SELECT d.account_id, d.campaign_id, s,
        sum(d.delta * (d.status = 'pending')::int), sum(d.delta * (d.status = 'sent')::int),
        sum(d.delta * (d.status = 'delivered')::int), sum(d.delta * (d.status = 'read')::int),
        sum(d.delta * (d.status = 'failed')::int), min(d.created_at), max(d.created_at)
    FROM d GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (account_id, campaign_id, slot) DO UPDATE SET
        pending = t.pending + EXCLUDED.pending, sent = t.sent + EXCLUDED.sent,
        delivered = t.delivered + EXCLUDED.delivered, read = t.read + EXCLUDED.read,
        failed = t.failed + EXCLUDED.failed,
        first_at = LEAST(t.first_at, EXCLUDED.first_at), last_at = GREATEST(t.last_at, EXCLUDED.last_at);
    IF failing THEN
        PERFORM pg_advisory_xact_lock(1668247156, -1);
        INSERT INTO campaign_failures AS f (account_id, campaign_id, error_code, error_title, count)
        SELECT d.account_id, d.campaign_id, COALESCE(d.error_code, 0), COALESCE(d.error_title, ''), sum(d.delta)
        FROM unnest(ds) d WHERE d.failed GROUP BY 1, 2, 3, 4 HAVING sum(d.delta) <> 0 ORDER BY 1, 2, 3, 4
        ON CONFLICT (account_id, campaign_id, error_code, error_title) DO UPDATE SET count = f.count + EXCLUDED.count;
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER messages_count_insert ON messages;
DROP TRIGGER messages_count_update ON messages;
DROP FUNCTION messages_count();
CREATE TRIGGER messages_count_inserted AFTER INSERT ON messages REFERENCING NEW TABLE AS new_messages
    FOR EACH STATEMENT EXECUTE FUNCTION messages_count_rows();
CREATE TRIGGER messages_count_updated AFTER UPDATE ON messages REFERENCING OLD TABLE AS old_messages NEW TABLE AS new_messages
    FOR EACH STATEMENT EXECUTE FUNCTION messages_count_rows();
CREATE TRIGGER messages_count_deleted AFTER DELETE ON messages REFERENCING OLD TABLE AS old_messages
    FOR EACH STATEMENT EXECUTE FUNCTION messages_count_rows();

-- One delivery per new event and enabled endpoint of its account, as before, made in the order
-- the events were created.
DROP TRIGGER events_fan_out ON events;
CREATE OR REPLACE FUNCTION events_fan_out() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    INSERT INTO webhook_deliveries (account_id, event_id, endpoint_id, next_attempt_at)
    SELECT e.account_id, e.id, w.id, e.created_at
    FROM new_events e JOIN webhook_endpoints w ON w.account_id = e.account_id AND w.enabled
    ORDER BY e.created_at, e.id, w.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER events_fan_out AFTER INSERT ON events REFERENCING NEW TABLE AS new_events
    FOR EACH STATEMENT EXECUTE FUNCTION events_fan_out();
