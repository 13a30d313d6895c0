-- Back to the row trigger of 000014 (its function, contacts_index_write, still handles inserts).
DROP TRIGGER contacts_index_inserted ON contacts;
DROP FUNCTION contacts_index_inserted();
CREATE TRIGGER contacts_index_insert AFTER INSERT ON contacts
    FOR EACH ROW EXECUTE FUNCTION contacts_index_write();

ALTER FUNCTION messages_count_rows() RESET jit;
ALTER FUNCTION events_fan_out() RESET jit;
ALTER FUNCTION contacts_index_write() RESET jit;
