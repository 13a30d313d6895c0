-- Performance (issue 13): contact listings that cost the same at a million contacts as at a
-- hundred, with an exact total.
--
-- contact_counts: each account's number of contacts, kept by the triggers below in the
-- transaction that inserts or deletes the contact, so it is exact in every snapshot. The
-- count is split over 16 stripes (by the writing backend) so concurrent sends that create
-- contacts in one account do not queue on one row lock; an account's total is the sum of at
-- most 16 rows.
CREATE TABLE contact_counts (
    account_id bigint   NOT NULL,
    stripe     smallint NOT NULL,
    n          bigint   NOT NULL,
    PRIMARY KEY (account_id, stripe)
);

-- contact_name_suffixes: every suffix of each contact's lower-cased name (cut to 16
-- characters), with the contact's created_at. A case-insensitive substring search for a term
-- is a range scan of the suffixes that start with it, answered from the primary key alone
-- (index-only): the matching contacts, their count and the newest-first page come without
-- reading the contacts table, however many contacts match. Terms longer than 16 characters
-- are narrowed by their first 16 and checked against the name itself.
CREATE TABLE contact_name_suffixes (
    account_id bigint      NOT NULL,
    suffix     text        COLLATE "C" NOT NULL,
    contact_id bigint      NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, suffix, contact_id) INCLUDE (created_at)
) WITH (autovacuum_vacuum_insert_scale_factor = 0.05);
-- The visibility map must stay current for index-only scans; the setting above vacuums
-- after 5 % new rows rather than 20 %.

-- contact_name_suffix_set is the set of (cut) suffixes of a name; the empty name has none.
CREATE FUNCTION contact_name_suffix_set(name text) RETURNS SETOF text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT DISTINCT left(substr(lower(name), i), 16) FROM generate_series(1, length(name)) AS i $$;

CREATE FUNCTION contacts_index_write() RETURNS trigger LANGUAGE plpgsql AS $$
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
    -- UPDATE of the name or created_at (the trigger's WHEN says one changed).
    DELETE FROM contact_name_suffixes WHERE account_id = OLD.account_id AND contact_id = OLD.id
        AND suffix IN (SELECT contact_name_suffix_set(OLD.name));
    INSERT INTO contact_name_suffixes (account_id, suffix, contact_id, created_at)
    SELECT NEW.account_id, s, NEW.id, NEW.created_at FROM contact_name_suffix_set(NEW.name) AS s;
    RETURN NULL;
END
$$;

CREATE TRIGGER contacts_index_insert AFTER INSERT ON contacts
    FOR EACH ROW EXECUTE FUNCTION contacts_index_write();
CREATE TRIGGER contacts_index_delete AFTER DELETE ON contacts
    FOR EACH ROW EXECUTE FUNCTION contacts_index_write();
CREATE TRIGGER contacts_index_rename AFTER UPDATE ON contacts
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.created_at IS DISTINCT FROM NEW.created_at)
    EXECUTE FUNCTION contacts_index_write();

-- Existing contacts (the triggers' lock on contacts holds writers off until this commits).
LOCK TABLE contacts IN SHARE MODE;
INSERT INTO contact_counts (account_id, stripe, n)
SELECT account_id, 0, count(*) FROM contacts GROUP BY account_id;
INSERT INTO contact_name_suffixes (account_id, suffix, contact_id, created_at)
SELECT c.account_id, s, c.id, c.created_at FROM contacts c, contact_name_suffix_set(c.name) AS s;

-- The name's trigram index is replaced by the suffixes. The mobile's no longer leads with the
-- account: a btree_gin account key has one posting list per account, and at a million
-- contacts reading it cost more than the search; digit trigrams are selective on their own
-- and the account is checked on the few rows they find.
DROP INDEX contacts_name_trgm_idx;
DROP INDEX contacts_mobile_trgm_idx;
CREATE INDEX contacts_mobile_trgm_idx ON contacts USING gin (mobile gin_trgm_ops);

-- Events and webhook deliveries take time-ordered ids (UUID version 7: 48 bits of Unix
-- milliseconds, then random bits) instead of random ones (version 4): new keys land at the
-- right edge of the primary key indexes, so an insert dirties one hot leaf page instead of a
-- random one (which, first touched after a checkpoint, costs a full-page image in the WAL).
-- Ids stay opaque UUIDs.
CREATE FUNCTION uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE
AS $$ SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
        placing substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6),
    52, 1), 53, 1), 'hex')::uuid $$;
ALTER TABLE events ALTER COLUMN id SET DEFAULT uuid_v7();
ALTER TABLE webhook_deliveries ALTER COLUMN id SET DEFAULT uuid_v7();
