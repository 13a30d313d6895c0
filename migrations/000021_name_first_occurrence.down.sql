CREATE OR REPLACE FUNCTION contacts_index_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO contact_counts AS k (account_id, stripe, n) VALUES (NEW.account_id, pg_backend_pid() % 16, 1)
        ON CONFLICT (account_id, stripe) DO UPDATE SET n = k.n + 1;
        INSERT INTO contact_name_suffixes (account_id, suffix, contact_id, created_at)
        SELECT NEW.account_id, s, NEW.id, NEW.created_at FROM contact_name_suffix_set(NEW.name) AS s;
        RETURN NULL;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO contact_counts AS k (account_id, stripe, n) VALUES (OLD.account_id, pg_backend_pid() % 16, -1)
        ON CONFLICT (account_id, stripe) DO UPDATE SET n = k.n - 1;
        DELETE FROM contact_name_suffixes WHERE account_id = OLD.account_id AND contact_id = OLD.id
            AND suffix IN (SELECT contact_name_suffix_set(OLD.name));
        RETURN NULL;
    END IF;
    DELETE FROM contact_name_suffixes WHERE account_id = OLD.account_id AND contact_id = OLD.id
        AND suffix IN (SELECT contact_name_suffix_set(OLD.name));
    INSERT INTO contact_name_suffixes (account_id, suffix, contact_id, created_at)
    SELECT NEW.account_id, s, NEW.id, NEW.created_at FROM contact_name_suffix_set(NEW.name) AS s;
    RETURN NULL;
END
$$;
ALTER TABLE contact_name_suffixes DROP CONSTRAINT contact_name_suffixes_pkey;
ALTER TABLE contact_name_suffixes DROP COLUMN first_len;
ALTER TABLE contact_name_suffixes ADD PRIMARY KEY (account_id, suffix, contact_id) INCLUDE (created_at);
DROP FUNCTION IF EXISTS contact_name_suffix_rows(text);
