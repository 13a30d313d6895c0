-- status_rank is the one rank of a message status in SQL: statuses only move to a higher
-- rank (pending 0 < sent 1 < delivered 2 < read 3 < failed 9); anything else, NULL included,
-- ranks -1. It must agree with store.StatusRank (store/statuses.go), which a test checks.
-- A LANGUAGE sql IMMUTABLE function is inlined by the planner, so it costs what the CASE did.
CREATE FUNCTION status_rank(status text) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE status
    WHEN 'pending'   THEN 0
    WHEN 'sent'      THEN 1
    WHEN 'delivered' THEN 2
    WHEN 'read'      THEN 3
    WHEN 'failed'    THEN 9
    ELSE -1
END $$;
