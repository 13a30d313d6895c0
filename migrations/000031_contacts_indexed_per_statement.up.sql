-- New contacts are counted and name-indexed once per statement instead of once per row. A send
-- to a new number creates its contact inside the shared records statement (store.BeginSends),
-- which carries several sends; each new contact ran contacts_index_write, and each call started
-- an executor for its count upsert and for its suffix insert, a large share of that
-- statement's execution. Now a statement's inserted contacts reach one call through a
-- transition table, which adds them to each account's stripe once and writes all their suffix
-- rows in one insert.
--
-- The rule is 000026's, unchanged: a contact adds one to its account's count on this session's
-- stripe (pg_backend_pid() % 64) and one suffix row per contact_name_suffix_rows of its name.
-- The stripes are written in account order, so statements that add to several accounts take
-- the stripe locks in one order. Deletes and renames keep the row trigger (contacts_index_write).
-- An INSERT ... ON CONFLICT DO UPDATE puts only the rows it inserted in the transition table.
--
-- Every trigger function that writes now also runs with jit = off. PostgreSQL compiles a plan
-- whose estimated cost passes jit_above_cost (100,000) at every execution, and a trigger's plan
-- is made once per session and kept (plan_cache_mode = force_generic_plan, 000023):
--   - the suffix insert below is estimated at about 30,000 per contact (contact_name_suffix_rows'
--     series counts as 1,000 rows per name), so with four or more new contacts in the session's
--     first call each later call was compiled, which costs far more than running it;
--   - a session whose first counted update was large (100,000 messages) kept a compiled plan for
--     messages_count_rows, and each later one-row update of a message was compiled again.
-- The triggers' statements are small, so compiling never pays for itself.
CREATE FUNCTION contacts_index_inserted() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET jit = off AS $$
BEGIN
    -- A statement trigger runs also for an insert that inserted nothing (a send to a known
    -- contact: the records statement's insert finds every contact); this check costs less than
    -- starting the statement below (5,000 such inserts in a loop: 0.30-0.39 s against 0.46-0.63 s).
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

DROP TRIGGER contacts_index_insert ON contacts;
CREATE TRIGGER contacts_index_inserted AFTER INSERT ON contacts REFERENCING NEW TABLE AS new_contacts
    FOR EACH STATEMENT EXECUTE FUNCTION contacts_index_inserted();

ALTER FUNCTION messages_count_rows() SET jit = off;
ALTER FUNCTION events_fan_out() SET jit = off;
ALTER FUNCTION contacts_index_write() SET jit = off;
