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
