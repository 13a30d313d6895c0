ALTER FUNCTION messages_count() RESET plan_cache_mode;
ALTER FUNCTION contacts_index_write() RESET plan_cache_mode;
ALTER FUNCTION events_fan_out() RESET plan_cache_mode;
