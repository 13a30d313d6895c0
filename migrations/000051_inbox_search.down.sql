DROP INDEX IF EXISTS contacts_inbox_search_username_idx;
DROP INDEX IF EXISTS contacts_inbox_search_name_idx;
DROP INDEX IF EXISTS contacts_inbox_search_has_username_idx;
