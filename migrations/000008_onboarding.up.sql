-- Connecting a number through Embedded Signup: what the platform reports about the connected
-- number (kept only for the number it was read for: details_for = phone_number_id), and the
-- two-step verification pin we registered each number with (AES-256-GCM, nonce || ciphertext),
-- kept per number so a repeated or later registration uses the same pin.
ALTER TABLE connections
    ADD COLUMN quality_rating  text NOT NULL DEFAULT '',
    ADD COLUMN messaging_limit text NOT NULL DEFAULT '',
    ADD COLUMN details_for     text NOT NULL DEFAULT '';

CREATE TABLE number_pins (
    phone_number_id text        PRIMARY KEY,
    pin             bytea       NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);

-- Messages handsets sent to the shared sandbox number, recorded once per platform message id so
-- a redelivered webhook neither replies nor fires its event twice. account_id is the workspace
-- the message reached (NULL for an unknown code or a handset in no sandbox); ids come from
-- test_messages' sequence, so test-mode message ids never collide. Nothing live is written.
CREATE TABLE sandbox_messages (
    id                  bigint      PRIMARY KEY DEFAULT nextval('test_messages_id_seq'),
    platform_message_id text        NOT NULL UNIQUE,
    account_id          bigint      REFERENCES accounts (id),
    sender              text        NOT NULL,
    type                text        NOT NULL,
    received_at         timestamptz NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sandbox_messages_created_idx ON sandbox_messages (created_at);
