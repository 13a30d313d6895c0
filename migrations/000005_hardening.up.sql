-- Hardening (issue 8): platform webhook dead letters; contacts keep firstname and lastname.

-- Items of a platform webhook delivery that could not be applied (a value PostgreSQL refuses,
-- a timestamp out of range, ...), kept with their error while the rest of the batch is
-- applied. item is the item as JSON, in bytea because it may hold what text and jsonb refuse.
-- webhook_id is the raw delivery in platform_webhooks (no foreign key: retention prunes both
-- on the same horizon); account_id is NULL when the tenant was not known.
CREATE TABLE platform_dead_letters (
    id          bigserial   PRIMARY KEY,
    webhook_id  bigint,
    account_id  bigint      REFERENCES accounts (id),
    kind        text        NOT NULL CHECK (kind IN ('status', 'message', 'template_status', 'sandbox', 'change')),
    item        bytea       NOT NULL,
    error       text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX platform_dead_letters_created_idx ON platform_dead_letters (created_at);

-- firstname and lastname are stored; name stays their join (space-separated, empty parts
-- left out), so an update of one part keeps the other. Existing names are split at the first
-- space. A writer that sets name alone (the inbound path's profile name) has it split the same
-- way by the trigger; one that sets a part has name rebuilt.
ALTER TABLE contacts ADD COLUMN firstname text NOT NULL DEFAULT '',
                     ADD COLUMN lastname  text NOT NULL DEFAULT '';
UPDATE contacts SET firstname = split_part(name, ' ', 1),
                    lastname  = CASE WHEN strpos(name, ' ') > 0 THEN substr(name, strpos(name, ' ') + 1) ELSE '' END
WHERE name <> '';

CREATE FUNCTION contacts_name_parts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (TG_OP = 'INSERT' AND (NEW.firstname <> '' OR NEW.lastname <> ''))
       OR (TG_OP = 'UPDATE' AND (NEW.firstname <> OLD.firstname OR NEW.lastname <> OLD.lastname)) THEN
        NEW.name := concat_ws(' ', NULLIF(NEW.firstname, ''), NULLIF(NEW.lastname, ''));
    ELSIF TG_OP = 'INSERT' OR NEW.name <> OLD.name THEN
        NEW.firstname := split_part(NEW.name, ' ', 1);
        NEW.lastname := CASE WHEN strpos(NEW.name, ' ') > 0 THEN substr(NEW.name, strpos(NEW.name, ' ') + 1) ELSE '' END;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER contacts_name_parts BEFORE INSERT OR UPDATE ON contacts
    FOR EACH ROW EXECUTE FUNCTION contacts_name_parts();
