-- Rich templates (issue 9): what a send needs of a template's buttons, parsed once at sync
-- time, and what the gateway cannot send yet; the caller's own reference on every send.
-- Rows synced before this migration get their buttons at the next sync (the template syncer
-- runs at start).
ALTER TABLE templates
    ADD COLUMN buttons     jsonb  NOT NULL DEFAULT '[]',
    ADD COLUMN unsupported text[] NOT NULL DEFAULT '{}';

ALTER TABLE messages ADD COLUMN client_reference text;
ALTER TABLE test_messages ADD COLUMN client_reference text;
