CREATE OR REPLACE FUNCTION events_fan_out() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET jit = off AS $$
BEGIN
    INSERT INTO webhook_deliveries (account_id, event_id, endpoint_id, next_attempt_at)
    SELECT e.account_id, e.id, w.id, e.created_at
    FROM new_events e JOIN webhook_endpoints w ON w.account_id = e.account_id AND w.enabled
    ORDER BY e.created_at, e.id, w.id;
    RETURN NULL;
END
$$;
DROP TABLE webhook_missed_counts;
ALTER TABLE webhook_endpoints DROP COLUMN event_types;

DELETE FROM events WHERE type NOT IN ('message.received', 'message.sent', 'message.status', 'contact.created', 'webhook.test');
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type = ANY (ARRAY['message.received', 'message.sent',
    'message.status', 'contact.created', 'webhook.test']));

ALTER TABLE messages
    DROP COLUMN reply_to_message_id, DROP COLUMN reply_to_platform_id, DROP COLUMN forwarded,
    DROP COLUMN frequently_forwarded, DROP COLUMN sender, DROP COLUMN referral, DROP COLUMN edited_at,
    DROP COLUMN edited_content, DROP COLUMN deleted_at, DROP COLUMN pricing_type, DROP COLUMN pricing_category,
    DROP COLUMN pricing_model;
ALTER TABLE conversations DROP COLUMN window_expires_at;
ALTER TABLE parked_statuses DROP COLUMN pricing;

-- Contacts without a mobile (and their messages) cannot exist in the older schema.
DELETE FROM messages m USING contacts c WHERE c.account_id = m.account_id AND c.id = m.contact_id AND c.mobile IS NULL;
DELETE FROM conversations v USING contacts c WHERE c.account_id = v.account_id AND c.id = v.contact_id AND c.mobile IS NULL;
DELETE FROM contacts WHERE mobile IS NULL;

DROP TRIGGER contacts_index_rename ON contacts;
CREATE TRIGGER contacts_index_rename AFTER UPDATE ON contacts FOR EACH ROW
    WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.created_at IS DISTINCT FROM NEW.created_at)
    EXECUTE FUNCTION contacts_index_write();
CREATE OR REPLACE FUNCTION contacts_index_write() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET jit = off AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO contact_counts AS k (account_id, stripe, n) VALUES (NEW.account_id, pg_backend_pid() % 64, 1)
        ON CONFLICT (account_id, stripe) DO UPDATE SET n = k.n + 1;
        INSERT INTO contact_name_suffixes (account_id, suffix, contact_id, created_at, first_len)
        SELECT NEW.account_id, r.suffix, NEW.id, NEW.created_at, r.first_len FROM contact_name_suffix_rows(NEW.name) AS r;
        RETURN NULL;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO contact_counts AS k (account_id, stripe, n) VALUES (OLD.account_id, pg_backend_pid() % 64, -1)
        ON CONFLICT (account_id, stripe) DO UPDATE SET n = k.n - 1;
        DELETE FROM contact_name_suffixes WHERE account_id = OLD.account_id AND contact_id = OLD.id
            AND suffix IN (SELECT contact_name_suffix_set(OLD.name));
        RETURN NULL;
    END IF;
    -- UPDATE of the name or created_at (the trigger's WHEN says one changed).
    DELETE FROM contact_name_suffixes WHERE account_id = OLD.account_id AND contact_id = OLD.id
        AND suffix IN (SELECT contact_name_suffix_set(OLD.name));
    INSERT INTO contact_name_suffixes (account_id, suffix, contact_id, created_at, first_len)
    SELECT NEW.account_id, r.suffix, NEW.id, NEW.created_at, r.first_len FROM contact_name_suffix_rows(NEW.name) AS r;
    RETURN NULL;
END
$$;
CREATE OR REPLACE FUNCTION contacts_index_inserted() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET jit = off AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM new_contacts) THEN
        RETURN NULL;
    END IF;
    WITH k AS (
        INSERT INTO contact_counts AS k (account_id, stripe, n)
        SELECT n.account_id, pg_backend_pid() % 64, count(*) FROM new_contacts n GROUP BY n.account_id ORDER BY 1
        ON CONFLICT (account_id, stripe) DO UPDATE SET n = k.n + EXCLUDED.n
    )
    INSERT INTO contact_name_suffixes (account_id, suffix, contact_id, created_at, first_len)
    SELECT n.account_id, r.suffix, n.id, n.created_at, r.first_len
    FROM new_contacts n CROSS JOIN LATERAL contact_name_suffix_rows(n.name) AS r;
    RETURN NULL;
END
$$;
DROP INDEX contacts_no_mobile_idx;
DROP INDEX contacts_user_id_idx;
ALTER TABLE contacts DROP CONSTRAINT contacts_identified, DROP COLUMN user_id, DROP COLUMN parent_user_id,
    DROP COLUMN username;
ALTER TABLE contacts ALTER COLUMN mobile SET NOT NULL;
