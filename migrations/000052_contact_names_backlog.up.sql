-- A large import's contacts join the name index after their import instead of inside it. Each
-- contact's name costs about 17 suffix rows (contact_name_suffix_rows), and writing them for a
-- million contacts made a confirmation take minutes; the contacts themselves, their count and
-- their tag take seconds. A transaction that sets gateway.contact_names to 'backlog' (the
-- confirmation of an import past store.nameBacklogFrom rows) has its inserted contacts counted
-- as always but only listed in contact_name_backlog; contact_names_index_backlog, called by the
-- name indexer in every gateway, writes their suffix rows in batches.
--
-- Nothing else changes: a rename, a delete or a mobile set or cleared still writes the index at
-- once (contacts_index_write). A backlogged contact renamed before the indexer reaches it gets
-- its new name's rows from the rename, and the indexer leaves it as it is;
-- one deleted leaves its backlog row, which the indexer removes. The indexer takes a share lock
-- on the contacts it indexes, so a rename or delete that commits meanwhile waits for it and
-- then removes what it wrote, or finishes first and is seen by it.
CREATE TABLE contact_name_backlog (
    account_id bigint NOT NULL,
    contact_id bigint NOT NULL,
    PRIMARY KEY (account_id, contact_id)
);

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
    IF current_setting('gateway.contact_names', true) = 'backlog' THEN
        WITH k AS (
            INSERT INTO contact_counts AS k (account_id, stripe, n)
            SELECT n.account_id, pg_backend_pid() % 64, count(*) FROM new_contacts n WHERE n.mobile IS NOT NULL
            GROUP BY n.account_id ORDER BY 1
            ON CONFLICT (account_id, stripe) DO UPDATE SET n = k.n + EXCLUDED.n
        )
        INSERT INTO contact_name_backlog (account_id, contact_id)
        SELECT n.account_id, n.id FROM new_contacts n WHERE n.mobile IS NOT NULL;
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

-- contact_names_index_backlog writes the suffix rows of up to batch of the account's backlogged
-- contacts (those still with a mobile; the others are not indexed), removes their backlog rows,
-- and returns how many backlog rows it removed. Backlog rows another indexer holds are skipped.
-- The batch is an array of ids that each step joins from (unnest): a join from a handful of
-- rows is an index probe per contact, whatever the statistics of a freshly filled table say
-- (`id = ANY (ids)` was planned as a scan of the account's contacts, before their first
-- analysis, checking each row against the whole array).
CREATE FUNCTION contact_names_index_backlog(account bigint, batch int) RETURNS bigint LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET jit = off AS $$
DECLARE
    ids bigint[];
BEGIN
    ids := ARRAY(SELECT contact_id FROM contact_name_backlog WHERE account_id = account
        ORDER BY contact_id LIMIT batch FOR UPDATE SKIP LOCKED);
    IF cardinality(ids) = 0 THEN
        RETURN 0;
    END IF;
    -- A rename or delete of one of them waits from here until the commit; one that committed
    -- first is what the insert below reads.
    PERFORM FROM unnest(ids) AS b(id) JOIN contacts k ON k.account_id = account AND k.id = b.id FOR SHARE OF k;
    -- A contact a rename indexed already has the row of its name's first suffix (every name's
    -- rows include it): one probe skips it, where ON CONFLICT would probe each of its rows.
    INSERT INTO contact_name_suffixes (account_id, suffix, contact_id, created_at, first_len)
    SELECT account, r.suffix, k.id, k.created_at, r.first_len
    FROM unnest(ids) AS b(id) JOIN contacts k ON k.account_id = account AND k.id = b.id
    CROSS JOIN LATERAL contact_name_suffix_rows(k.name) AS r
    WHERE k.mobile IS NOT NULL
        AND NOT EXISTS (SELECT FROM contact_name_suffixes s WHERE s.account_id = account
            AND s.suffix = left(lower(k.name), 16) COLLATE "C" AND s.contact_id = k.id);
    DELETE FROM contact_name_backlog x USING unnest(ids) AS b(id) WHERE x.account_id = account AND x.contact_id = b.id;
    RETURN cardinality(ids);
END
$$;
