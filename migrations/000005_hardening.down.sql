DROP TRIGGER IF EXISTS contacts_name_parts ON contacts;
DROP FUNCTION IF EXISTS contacts_name_parts();
ALTER TABLE contacts DROP COLUMN IF EXISTS firstname, DROP COLUMN IF EXISTS lastname;
DROP TABLE IF EXISTS platform_dead_letters;
