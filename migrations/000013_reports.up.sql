-- Reports: counters kept as messages are recorded and their statuses change, so a campaign's
-- report reads a handful of rows however many messages it has; the message's source (api or
-- panel); and the indexes the message listing (GET /messages, the dashboard) walks.
--
-- Both counter tables hold how many of a campaign's outbound messages are now in each status:
-- campaign_totals for the whole campaign, campaign_counters per hour of the messages'
-- created_at (UTC), for charts. A status change moves one count from the old status to the new
-- one, so summing a campaign's rows gives exactly what a count over its messages would. Rows are
-- split into slots (message id mod 32 for totals, mod 8 for hours, which a chart reads by the
-- thousand) so concurrent sends to one campaign do not queue on one row lock; readers sum them. first_at and last_at are the earliest and latest created_at
-- counted in a row (a delete does not move them back; the gateway never deletes messages).
--
-- The counter tables have no foreign key to campaigns, on purpose: its check would take a KEY
-- SHARE lock on the campaign row inside the send's statement, and two sends creating the same
-- campaign (the upsert in store.BeginSend updates the row's unique name) would deadlock on it
-- and on a counter row. Campaigns are never deleted; reports join campaigns on (account, id).
ALTER TABLE messages ADD COLUMN source text NOT NULL DEFAULT 'api' CHECK (source IN ('api', 'panel'));

-- Why the platform rejected a template (its rejected_reason; '' or NONE otherwise), for the
-- dashboard's templates page.
ALTER TABLE templates ADD COLUMN rejected_reason text NOT NULL DEFAULT '';

CREATE TABLE campaign_totals (
    account_id  bigint      NOT NULL,
    campaign_id bigint      NOT NULL,
    slot        smallint    NOT NULL,
    pending     bigint      NOT NULL DEFAULT 0,
    sent        bigint      NOT NULL DEFAULT 0,
    delivered   bigint      NOT NULL DEFAULT 0,
    read        bigint      NOT NULL DEFAULT 0,
    failed      bigint      NOT NULL DEFAULT 0,
    first_at    timestamptz NOT NULL,
    last_at     timestamptz NOT NULL,
    PRIMARY KEY (account_id, campaign_id, slot)
);

CREATE TABLE campaign_counters (
    account_id  bigint      NOT NULL,
    campaign_id bigint      NOT NULL,
    bucket      timestamptz NOT NULL,
    slot        smallint    NOT NULL,
    pending     bigint      NOT NULL DEFAULT 0,
    sent        bigint      NOT NULL DEFAULT 0,
    delivered   bigint      NOT NULL DEFAULT 0,
    read        bigint      NOT NULL DEFAULT 0,
    failed      bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, campaign_id, bucket, slot)
);

-- Failure reasons per campaign: how many of its messages failed with each platform error
-- (code 0 when the platform gave none; title '' when there was none). failed is terminal, so a
-- reason is counted once per message.
CREATE TABLE campaign_failures (
    account_id  bigint NOT NULL,
    campaign_id bigint NOT NULL,
    error_code  int    NOT NULL,
    error_title text   NOT NULL,
    count       bigint NOT NULL,
    PRIMARY KEY (account_id, campaign_id, error_code, error_title)
);

-- messages_count keeps the counters in step with messages, in the statement that changes the
-- message (so in its transaction): one statement (the hour row and the total row) per recorded
-- message or status change, one more when the new status is failed. Only outbound messages
-- with a campaign count.
CREATE FUNCTION messages_count() RETURNS trigger LANGUAGE plpgsql AS $$
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
            a := OLD.account_id; c := OLD.campaign_id; at := OLD.created_at; s := OLD.id % 32;
            dp := -(OLD.status = 'pending')::int; ds := -(OLD.status = 'sent')::int;
            dd := -(OLD.status = 'delivered')::int; dr := -(OLD.status = 'read')::int; df := -(OLD.status = 'failed')::int;
        ELSE
            IF r.direction <> 'out' OR r.campaign_id IS NULL THEN
                RETURN NULL;
            END IF;
            a := r.account_id; c := r.campaign_id; at := r.created_at; s := r.id % 32;
            dp := d * ((r.status = 'pending')::int - (prev IS NOT DISTINCT FROM 'pending')::int);
            ds := d * ((r.status = 'sent')::int - (prev IS NOT DISTINCT FROM 'sent')::int);
            dd := d * ((r.status = 'delivered')::int - (prev IS NOT DISTINCT FROM 'delivered')::int);
            dr := d * ((r.status = 'read')::int - (prev IS NOT DISTINCT FROM 'read')::int);
            df := d * ((r.status = 'failed')::int - (prev IS NOT DISTINCT FROM 'failed')::int);
        END IF;
        -- One statement (its plan cached by PL/pgSQL) for the hour row and the total row.
        WITH h AS (
            INSERT INTO campaign_counters AS x (account_id, campaign_id, bucket, slot, pending, sent, delivered, read, failed)
            VALUES (a, c, date_trunc('hour', at, 'UTC'), s % 8, dp, ds, dd, dr, df)
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

-- The counters of the messages already recorded (the benchmark seeds its counters with the
-- same three statements).
INSERT INTO campaign_counters (account_id, campaign_id, bucket, slot, pending, sent, delivered, read, failed)
SELECT account_id, campaign_id, date_trunc('hour', created_at, 'UTC'), id % 8,
    count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'sent'),
    count(*) FILTER (WHERE status = 'delivered'), count(*) FILTER (WHERE status = 'read'),
    count(*) FILTER (WHERE status = 'failed')
FROM messages WHERE direction = 'out' AND campaign_id IS NOT NULL
GROUP BY 1, 2, 3, 4;
INSERT INTO campaign_totals (account_id, campaign_id, slot, pending, sent, delivered, read, failed, first_at, last_at)
SELECT account_id, campaign_id, id % 32,
    count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'sent'),
    count(*) FILTER (WHERE status = 'delivered'), count(*) FILTER (WHERE status = 'read'),
    count(*) FILTER (WHERE status = 'failed'), min(created_at), max(created_at)
FROM messages WHERE direction = 'out' AND campaign_id IS NOT NULL
GROUP BY 1, 2, 3;
INSERT INTO campaign_failures (account_id, campaign_id, error_code, error_title, count)
SELECT account_id, campaign_id, COALESCE(error_code, 0), COALESCE(error_title, ''), count(*)
FROM messages WHERE direction = 'out' AND campaign_id IS NOT NULL AND status = 'failed'
GROUP BY 1, 2, 3, 4;

-- The message listing: newest first, overall and within a campaign, a contact, a template, and
-- the failed ones (a small share, too sparse to find by filtering the newest-first walk).
CREATE INDEX messages_newest_idx ON messages (account_id, created_at DESC, id DESC);
CREATE INDEX messages_campaign_idx ON messages (account_id, campaign_id, created_at DESC, id DESC);
CREATE INDEX messages_contact_idx ON messages (account_id, contact_id, created_at DESC, id DESC);
CREATE INDEX messages_template_idx ON messages (account_id, template_name, created_at DESC, id DESC);
CREATE INDEX messages_failed_idx ON messages (account_id, created_at DESC, id DESC) WHERE status = 'failed';
