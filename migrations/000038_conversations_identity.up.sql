-- Conversations, part 1: a contact is a person known by a number, a business-scoped user id,
-- or both; inbound messages of every kind keep their substance; webhook endpoints choose the
-- event types they receive; the service window is kept per conversation; messages keep the
-- pricing the platform reports.

-- Identity. A contact known only by a user id has no mobile. Each user id is one contact of
-- the account. The listing's index (contact_counts, contact_name_suffixes) covers only
-- contacts with a mobile, which is what a v1 listing shows; the few without one are read
-- through contacts_no_mobile_idx when a listing opts in (store/contacts.go).
ALTER TABLE contacts ALTER COLUMN mobile DROP NOT NULL;
ALTER TABLE contacts
    ADD COLUMN user_id text,
    ADD COLUMN parent_user_id text,
    ADD COLUMN username text,
    ADD CONSTRAINT contacts_identified CHECK (mobile IS NOT NULL OR user_id IS NOT NULL);
CREATE UNIQUE INDEX contacts_user_id_idx ON contacts (account_id, user_id) WHERE user_id IS NOT NULL;
CREATE INDEX contacts_no_mobile_idx ON contacts (account_id, created_at DESC, id DESC) WHERE mobile IS NULL;

CREATE OR REPLACE FUNCTION contacts_index_inserted() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET jit = off AS $$
BEGIN
    -- A statement trigger runs also for an insert that inserted nothing (a send to a known
    -- contact: the records statement's insert finds every contact); this check costs less than
    -- starting the statement below (5,000 such inserts in a loop: 0.30-0.39 s against 0.46-0.63 s).
    -- Contacts without a mobile are not indexed (a v1 listing leaves them out).
    IF NOT EXISTS (SELECT FROM new_contacts WHERE mobile IS NOT NULL) THEN
        RETURN NULL;
    END IF;
    WITH k AS (
        INSERT INTO contact_counts AS k (account_id, stripe, n)
        SELECT n.account_id, pg_backend_pid() % 64, count(*) FROM new_contacts n WHERE n.mobile IS NOT NULL
        GROUP BY n.account_id ORDER BY 1
        ON CONFLICT (account_id, stripe) DO UPDATE SET n = k.n + EXCLUDED.n
    )
    INSERT INTO contact_name_suffixes (account_id, suffix, contact_id, created_at, first_len)
    SELECT n.account_id, r.suffix, n.id, n.created_at, r.first_len
    FROM new_contacts n CROSS JOIN LATERAL contact_name_suffix_rows(n.name) AS r WHERE n.mobile IS NOT NULL;
    RETURN NULL;
END
$$;

-- Renames, deletes, and a mobile set or cleared: a contact is in the index exactly while it
-- has a mobile.
CREATE OR REPLACE FUNCTION contacts_index_write() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET jit = off AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.mobile IS NOT NULL THEN
        IF TG_OP = 'DELETE' OR NEW.mobile IS NULL THEN
            INSERT INTO contact_counts AS k (account_id, stripe, n) VALUES (OLD.account_id, pg_backend_pid() % 64, -1)
            ON CONFLICT (account_id, stripe) DO UPDATE SET n = k.n - 1;
        END IF;
        DELETE FROM contact_name_suffixes WHERE account_id = OLD.account_id AND contact_id = OLD.id
            AND suffix IN (SELECT contact_name_suffix_set(OLD.name));
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.mobile IS NOT NULL THEN
        IF TG_OP = 'INSERT' OR OLD.mobile IS NULL THEN
            INSERT INTO contact_counts AS k (account_id, stripe, n) VALUES (NEW.account_id, pg_backend_pid() % 64, 1)
            ON CONFLICT (account_id, stripe) DO UPDATE SET n = k.n + 1;
        END IF;
        INSERT INTO contact_name_suffixes (account_id, suffix, contact_id, created_at, first_len)
        SELECT NEW.account_id, r.suffix, NEW.id, NEW.created_at, r.first_len FROM contact_name_suffix_rows(NEW.name) AS r;
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER contacts_index_rename ON contacts;
CREATE TRIGGER contacts_index_rename AFTER UPDATE ON contacts FOR EACH ROW
    WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.created_at IS DISTINCT FROM NEW.created_at
        OR (OLD.mobile IS NULL) <> (NEW.mobile IS NULL))
    EXECUTE FUNCTION contacts_index_write();

-- The service window: open until window_expires_at (the last inbound message + 24 h, or + 72 h
-- after a message from a click-to-WhatsApp ad; the later of the two is kept).
ALTER TABLE conversations ADD COLUMN window_expires_at timestamptz;
UPDATE conversations SET window_expires_at = last_inbound_at + interval '24 hours' WHERE last_inbound_at IS NOT NULL;

-- Inbound substance and pricing. content keeps the typed object of the message's kind.
ALTER TABLE messages
    ADD COLUMN reply_to_message_id bigint,
    ADD COLUMN reply_to_platform_id text,
    ADD COLUMN forwarded boolean NOT NULL DEFAULT false,
    ADD COLUMN frequently_forwarded boolean NOT NULL DEFAULT false,
    ADD COLUMN sender jsonb,
    ADD COLUMN referral jsonb,
    ADD COLUMN edited_at timestamptz,
    ADD COLUMN edited_content jsonb,
    ADD COLUMN deleted_at timestamptz,
    ADD COLUMN pricing_type text,
    ADD COLUMN pricing_category text,
    ADD COLUMN pricing_model text;
-- A report that arrives before its message is recorded keeps its pricing while parked.
ALTER TABLE parked_statuses ADD COLUMN pricing jsonb;

-- New event types (opt-in for webhook endpoints).
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type = ANY (ARRAY['message.received', 'message.sent',
    'message.status', 'contact.created', 'webhook.test', 'message.received_without_number', 'message.edited',
    'message.deleted', 'contact.created_without_number', 'contact.updated']));

-- Event types per endpoint: the default is every type that existed before, so current
-- receivers see no change.
ALTER TABLE webhook_endpoints ADD COLUMN event_types text[] NOT NULL
    DEFAULT ARRAY['message.received', 'message.sent', 'message.status', 'contact.created', 'webhook.test'];

-- Events an endpoint was not sent because it did not choose their type, per type, on the
-- writer session's stripe (pg_backend_pid() % 16) so concurrent writers do not wait on one row.
CREATE TABLE webhook_missed_counts (
    account_id bigint NOT NULL,
    endpoint_id bigint NOT NULL,
    type text NOT NULL,
    stripe smallint NOT NULL,
    n bigint NOT NULL,
    PRIMARY KEY (endpoint_id, type, stripe),
    FOREIGN KEY (account_id, endpoint_id) REFERENCES webhook_endpoints (account_id, id) ON DELETE CASCADE
);

CREATE OR REPLACE FUNCTION events_fan_out() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET jit = off AS $$
BEGIN
    WITH j AS MATERIALIZED (
        SELECT e.account_id, e.id, e.created_at, e.type, w.id AS endpoint_id, e.type = ANY (w.event_types) AS wanted
        FROM new_events e JOIN webhook_endpoints w ON w.account_id = e.account_id AND w.enabled
    ), missed AS (
        INSERT INTO webhook_missed_counts AS k (account_id, endpoint_id, type, stripe, n)
        SELECT j.account_id, j.endpoint_id, j.type, pg_backend_pid() % 16, count(*) FROM j WHERE NOT j.wanted
        GROUP BY 1, 2, 3 ORDER BY 2, 3
        ON CONFLICT (endpoint_id, type, stripe) DO UPDATE SET n = k.n + EXCLUDED.n
    )
    INSERT INTO webhook_deliveries (account_id, event_id, endpoint_id, next_attempt_at)
    SELECT j.account_id, j.id, j.endpoint_id, j.created_at FROM j WHERE j.wanted
    ORDER BY j.created_at, j.id, j.endpoint_id;
    RETURN NULL;
END
$$;
