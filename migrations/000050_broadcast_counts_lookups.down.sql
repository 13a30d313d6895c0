-- The function as 000048 made it: every statement on its kept generic plan.
CREATE OR REPLACE FUNCTION broadcast_recipients_counted_update() RETURNS trigger LANGUAGE plpgsql
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
