-- A broadcast's progress is read from counters kept as its recipients change, never from a
-- count over its recipients: broadcast_counts holds the recipients by state and, of those with
-- a message, how many messages are delivered or read; broadcast_pace holds per second how many
-- recipients were called and how many were sent (the rate of the last minute, and test mode's
-- simulated delivered and read). Both are slotted like campaign_counters (a transaction adds
-- to its own slot, counter_slot_claim), so concurrent writers never wait on one row; a read
-- sums the slots.
CREATE TABLE broadcast_counts (
    account_id bigint NOT NULL,
    broadcast_id bigint NOT NULL REFERENCES broadcasts (id) ON DELETE CASCADE,
    -- a recipient state, or 'delivered' / 'read': the recipients whose message has that status
    state text NOT NULL,
    slot smallint NOT NULL,
    n bigint NOT NULL,
    PRIMARY KEY (account_id, broadcast_id, state, slot)
);

CREATE TABLE broadcast_pace (
    account_id bigint NOT NULL,
    broadcast_id bigint NOT NULL REFERENCES broadcasts (id) ON DELETE CASCADE,
    at timestamptz NOT NULL, -- a whole second
    slot smallint NOT NULL,
    called integer NOT NULL,
    sent integer NOT NULL,
    PRIMARY KEY (account_id, broadcast_id, at, slot)
);

-- The transaction's counter slot (the one messages_count_rows uses), its advisory lock taken
-- when the slot is shared.
CREATE FUNCTION broadcast_counter_slot() RETURNS smallint LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET jit = off AS $$
DECLARE
    s smallint := NULLIF(current_setting('gateway.counter_slot', true), '')::smallint;
BEGIN
    IF s IS NULL THEN
        s := counter_slot_claim();
    END IF;
    IF s >= 32 THEN
        PERFORM pg_advisory_xact_lock(1668247156, s);
    END IF;
    RETURN s;
END
$$;

-- Recipients stored, or deleted.
CREATE FUNCTION broadcast_recipients_counted_rows() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET jit = off AS $$
DECLARE
    s smallint := broadcast_counter_slot();
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO broadcast_counts AS c (account_id, broadcast_id, state, slot, n)
        SELECT account_id, broadcast_id, state, s, count(*) FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (account_id, broadcast_id, state, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSE
        INSERT INTO broadcast_counts AS c (account_id, broadcast_id, state, slot, n)
        SELECT account_id, broadcast_id, state, s, -count(*) FROM old_rows
        WHERE EXISTS (SELECT FROM broadcasts b WHERE b.account_id = old_rows.account_id AND b.id = old_rows.broadcast_id)
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (account_id, broadcast_id, state, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER broadcast_recipients_counted_insert AFTER INSERT ON broadcast_recipients
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION broadcast_recipients_counted_rows();
CREATE TRIGGER broadcast_recipients_counted_delete AFTER DELETE ON broadcast_recipients
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION broadcast_recipients_counted_rows();

-- Recipients changing state: one row per broadcast and state per statement (the engine marks
-- and settles recipients in batches). A recipient given a message the platform already
-- reported delivered or read counts there too (the report can be applied before the settle);
-- later reports are counted by messages_broadcast_counted. A report applied at the same time
-- is waited for (a share lock on its message), so it is counted by exactly one of the two. Entering sending and sent is
-- counted per second in broadcast_pace.
CREATE FUNCTION broadcast_recipients_counted_update() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET jit = off AS $$
DECLARE
    s smallint;
BEGIN
    IF NOT EXISTS (SELECT FROM old_rows o JOIN new_rows w ON w.id = o.id
                   WHERE o.state <> w.state OR (o.message_id = '' AND w.message_id <> '')) THEN
        RETURN NULL; -- a claim or a lease: nothing counted changed
    END IF;
    -- A status report being applied to one of these messages is waited for, so that it is
    -- counted once: here when it commits first (the next statement sees it), or by
    -- messages_broadcast_counted after this commits (it then sees the recipient's message).
    PERFORM 1 FROM old_rows o JOIN new_rows w ON w.id = o.id
        JOIN messages m ON m.account_id = w.account_id AND m.platform_message_id = w.message_id
        WHERE o.message_id = '' AND w.message_id <> '' ORDER BY m.id FOR SHARE OF m;
    s := broadcast_counter_slot();
    INSERT INTO broadcast_counts AS c (account_id, broadcast_id, state, slot, n)
    SELECT account_id, broadcast_id, state, s, sum(n) FROM (
        SELECT o.account_id, o.broadcast_id, o.state, -1 AS n FROM old_rows o JOIN new_rows w ON w.id = o.id WHERE o.state <> w.state
        UNION ALL
        SELECT w.account_id, w.broadcast_id, w.state, 1 FROM old_rows o JOIN new_rows w ON w.id = o.id WHERE o.state <> w.state
        UNION ALL
        SELECT w.account_id, w.broadcast_id, m.status, 1 FROM old_rows o JOIN new_rows w ON w.id = o.id
            JOIN messages m ON m.account_id = w.account_id AND m.platform_message_id = w.message_id
            WHERE o.message_id = '' AND w.message_id <> '' AND m.status IN ('delivered', 'read')
    ) d GROUP BY 1, 2, 3 HAVING sum(n) <> 0 ORDER BY 1, 2, 3
    ON CONFLICT (account_id, broadcast_id, state, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    INSERT INTO broadcast_pace AS p (account_id, broadcast_id, at, slot, called, sent)
    SELECT w.account_id, w.broadcast_id,
        date_trunc('second', CASE WHEN w.state = 'sending' THEN w.sending_at ELSE coalesce(w.finished_at, now()) END), s,
        count(*) FILTER (WHERE w.state = 'sending'), count(*) FILTER (WHERE w.state = 'sent')
    FROM old_rows o JOIN new_rows w ON w.id = o.id
    WHERE o.state <> w.state AND ((w.state = 'sending' AND w.sending_at IS NOT NULL) OR w.state = 'sent')
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (account_id, broadcast_id, at, slot) DO UPDATE SET called = p.called + EXCLUDED.called, sent = p.sent + EXCLUDED.sent;
    RETURN NULL;
END
$$;
CREATE TRIGGER broadcast_recipients_counted_update AFTER UPDATE ON broadcast_recipients
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION broadcast_recipients_counted_update();

-- A campaign message's status moving into or out of delivered or read moves its broadcast
-- recipient's counter (a message without a campaign is no broadcast's).
CREATE FUNCTION messages_broadcast_counted() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET jit = off AS $$
BEGIN
    INSERT INTO broadcast_counts AS c (account_id, broadcast_id, state, slot, n)
    SELECT r.account_id, r.broadcast_id, d.state, broadcast_counter_slot(), d.n
    FROM broadcast_recipients r, (VALUES (OLD.status, -1), (NEW.status, 1)) d (state, n)
    WHERE r.account_id = NEW.account_id AND r.message_id = NEW.platform_message_id AND r.message_id <> ''
        AND d.state IN ('delivered', 'read')
    ORDER BY 1, 2, 3
    ON CONFLICT (account_id, broadcast_id, state, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    RETURN NULL;
END
$$;
CREATE TRIGGER messages_broadcast_counted AFTER UPDATE OF status ON messages FOR EACH ROW
    WHEN (NEW.campaign_id IS NOT NULL AND NEW.platform_message_id IS NOT NULL AND OLD.status <> NEW.status
        AND (NEW.status IN ('delivered', 'read') OR OLD.status IN ('delivered', 'read')))
    EXECUTE FUNCTION messages_broadcast_counted();

-- The broadcasts stored before the counters.
INSERT INTO broadcast_counts (account_id, broadcast_id, state, slot, n)
SELECT account_id, broadcast_id, state, 0, count(*) FROM broadcast_recipients GROUP BY 1, 2, 3;
INSERT INTO broadcast_counts (account_id, broadcast_id, state, slot, n)
SELECT r.account_id, r.broadcast_id, m.status, 0, count(*) FROM broadcast_recipients r
    JOIN messages m ON m.account_id = r.account_id AND m.platform_message_id = r.message_id
    WHERE r.message_id <> '' AND m.status IN ('delivered', 'read') GROUP BY 1, 2, 3;
INSERT INTO broadcast_pace (account_id, broadcast_id, at, slot, called, sent)
SELECT account_id, broadcast_id, date_trunc('second', coalesce(finished_at, sending_at)), 0,
    count(*) FILTER (WHERE sending_at IS NOT NULL), count(*) FILTER (WHERE state = 'sent')
FROM broadcast_recipients WHERE sending_at IS NOT NULL OR state = 'sent' GROUP BY 1, 2, 3;
