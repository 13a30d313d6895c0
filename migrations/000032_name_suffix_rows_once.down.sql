-- 000021's definition (the rows are the same).
CREATE OR REPLACE FUNCTION contact_name_suffix_rows(name text) RETURNS TABLE (suffix text, first_len smallint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT DISTINCT ON (s) s, f
    FROM (SELECT lower(name) AS n) x
    CROSS JOIN LATERAL generate_series(1, length(x.n)) AS i
    CROSS JOIN LATERAL (SELECT left(substr(x.n, i), 16) AS s) y
    CROSS JOIN LATERAL (SELECT COALESCE((SELECT t::smallint FROM generate_series(1, length(y.s)) AS t
        WHERE strpos(substr(x.n, 1, i + t - 2), substr(x.n, i, t)) = 0 ORDER BY t LIMIT 1), 17::smallint) AS f) z
    ORDER BY s, i
$$;
