-- contact_name_suffix_rows (000021) computes the same rows with less work: the name is lowered
-- once (OFFSET 0 keeps the planner from folding lower() back into every expression that reads
-- it, which evaluated it twice per comparison), and first_len is a min() over the candidate
-- lengths instead of a sort with LIMIT 1 per position. Every new contact runs it once (the
-- suffix insert of contacts_index_inserted, 000031), so its cost is part of every send to a
-- new number. The rows it returns are unchanged, so the suffixes already
-- written stay valid; store/contacts_test.go compares it with 000021's definition.
CREATE OR REPLACE FUNCTION contact_name_suffix_rows(name text) RETURNS TABLE (suffix text, first_len smallint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    -- One row per distinct cut suffix, from its first position i; first_len from an
    -- earlier-occurrence test (strpos in the name up to just before this occurrence's end).
    SELECT DISTINCT ON (s) s, f
    FROM (SELECT lower(name) AS n OFFSET 0) x
    CROSS JOIN LATERAL generate_series(1, length(x.n)) AS i
    CROSS JOIN LATERAL (SELECT left(substr(x.n, i), 16) AS s) y
    CROSS JOIN LATERAL (SELECT COALESCE((SELECT min(t)::smallint FROM generate_series(1, length(y.s)) AS t
        WHERE strpos(substr(x.n, 1, i + t - 2), substr(x.n, i, t)) = 0), 17::smallint) AS f) z
    ORDER BY s, i
$$;
