DROP TABLE IF EXISTS contact_aliases;
DROP TABLE IF EXISTS contacts;
