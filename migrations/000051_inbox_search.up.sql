-- The inbox's search by name (store/inbox_search.go) finds the contacts with a mobile whose name
-- contains the term in contact_name_suffixes. That index leaves out the contacts known only by a
-- user id, and holds no usernames: these find them, by the term's trigrams within the account
-- (pg_trgm, with btree_gin for the account), each row found then checked by ILIKE. A term
-- without three letters or digits in a row has no trigram, and the planner does not read a
-- trigram index for it: the contacts without a mobile are then read through an index of the
-- account's contacts without one, and those with a username through the last index here, each
-- row checked.
CREATE INDEX contacts_inbox_search_username_idx ON contacts USING gin (account_id, username gin_trgm_ops)
    WHERE username IS NOT NULL;
CREATE INDEX contacts_inbox_search_name_idx ON contacts USING gin (account_id, name gin_trgm_ops)
    WHERE mobile IS NULL;
CREATE INDEX contacts_inbox_search_has_username_idx ON contacts (account_id) WHERE username IS NOT NULL;
