-- Contact search (issue 13): a name search's exact total without a DISTINCT.
--
-- A name can hold the search term more than once ("Ana Santana" holds "ana" twice), so the
-- suffixes that start with the term may name one contact several times, and the listing had
-- to de-duplicate what it read (a sort of every match: 57,000 rows for "mari" at a million
-- contacts, spilling to disk past work_mem). Each suffix row now carries first_len: the
-- shortest length L such that the name's first L characters from this position occur nowhere
-- earlier in the name (17, past the 16 kept characters, when there is none). A term of length
-- T (at most 16) starts at this position for the first time in the name exactly when the
-- suffix starts with it and first_len <= T: every later occurrence has the term, and so
-- every shorter prefix of it, earlier in the name. So "suffix starts with the term and
-- first_len <= length(term)" picks exactly one row per matching contact, from the index alone.
-- A longer term is narrowed by its first 16 characters and first_len <= 16 (one row per
-- contact holding those 16), then checked against the name as before.

CREATE FUNCTION contact_name_suffix_rows(name text) RETURNS TABLE (suffix text, first_len smallint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    -- One row per distinct cut suffix, from its first position i; first_len from an
    -- earlier-occurrence test (strpos in the name up to just before this occurrence's end).
    SELECT DISTINCT ON (s) s, f
    FROM (SELECT lower(name) AS n) x
    CROSS JOIN LATERAL generate_series(1, length(x.n)) AS i
    CROSS JOIN LATERAL (SELECT left(substr(x.n, i), 16) AS s) y
    CROSS JOIN LATERAL (SELECT COALESCE((SELECT t::smallint FROM generate_series(1, length(y.s)) AS t
        WHERE strpos(substr(x.n, 1, i + t - 2), substr(x.n, i, t)) = 0 ORDER BY t LIMIT 1), 17::smallint) AS f) z
    ORDER BY s, i
$$;

CREATE OR REPLACE FUNCTION contacts_index_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO contact_counts AS k (account_id, stripe, n) VALUES (NEW.account_id, pg_backend_pid() % 16, 1)
        ON CONFLICT (account_id, stripe) DO UPDATE SET n = k.n + 1;
        INSERT INTO contact_name_suffixes (account_id, suffix, contact_id, created_at, first_len)
        SELECT NEW.account_id, r.suffix, NEW.id, NEW.created_at, r.first_len FROM contact_name_suffix_rows(NEW.name) AS r;
        RETURN NULL;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO contact_counts AS k (account_id, stripe, n) VALUES (OLD.account_id, pg_backend_pid() % 16, -1)
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

-- Rebuild the suffixes with first_len, the primary key carrying it for index-only scans
-- (the triggers' lock on contacts holds writers off until this commits).
LOCK TABLE contacts IN SHARE MODE;
TRUNCATE contact_name_suffixes;
ALTER TABLE contact_name_suffixes DROP CONSTRAINT contact_name_suffixes_pkey;
ALTER TABLE contact_name_suffixes ADD COLUMN first_len smallint NOT NULL;
INSERT INTO contact_name_suffixes (account_id, suffix, contact_id, created_at, first_len)
SELECT c.account_id, r.suffix, c.id, c.created_at, r.first_len FROM contacts c, contact_name_suffix_rows(c.name) AS r;
ALTER TABLE contact_name_suffixes ADD PRIMARY KEY (account_id, suffix, contact_id) INCLUDE (created_at, first_len);
