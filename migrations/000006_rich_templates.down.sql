ALTER TABLE test_messages DROP COLUMN client_reference;
ALTER TABLE messages DROP COLUMN client_reference;
ALTER TABLE templates DROP COLUMN unsupported, DROP COLUMN buttons;
