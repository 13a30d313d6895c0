-- The triggers on the send and status paths plan their statements once per session instead of
-- on every row. PL/pgSQL's plan cache kept choosing a custom plan for each of their statements
-- (with NEW's values as constants the planner even inlines contact_name_suffix_rows again), so
-- every send re-planned five statements and every status report two, a large share of
-- PostgreSQL's CPU per send. A generic plan is the same plan for every
-- row here (each statement is an upsert or insert by key).
--
-- A later CREATE OR REPLACE FUNCTION of one of these drops the setting unless it repeats it;
-- store's TestHotTriggersPlanGenerically fails when it is missing.
ALTER FUNCTION messages_count() SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION contacts_index_write() SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION events_fan_out() SET plan_cache_mode = force_generic_plan;
