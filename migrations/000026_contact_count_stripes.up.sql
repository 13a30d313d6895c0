-- The contact count's stripes follow the connection over 64 rows, not 16 (as the campaign
-- counters do since 000020). Every send to a new contact adds to its account's count in the
-- send's transaction and holds that row until commit; with 16 stripes and a pool of 16 to 20
-- connections, two connections often shared a stripe and waited on each other, and that wait
-- was most of the count's upsert time under the send benchmark. Readers sum the stripes, as
-- before; existing rows keep counting.
--
-- The function keeps plan_cache_mode = force_generic_plan (000023), which CREATE OR REPLACE
-- would otherwise drop.
CREATE OR REPLACE FUNCTION contacts_index_write() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
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

