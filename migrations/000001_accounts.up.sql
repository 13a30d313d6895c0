-- Accounts, their API keys and their connected number on the messaging platform.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;

CREATE TABLE accounts (
    id         bigserial PRIMARY KEY,
    name       text        NOT NULL,
    email      text        NOT NULL,
    active     boolean     NOT NULL DEFAULT true,
    join_code  text        NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Only the SHA-256 of a key is stored; prefix keeps the first characters for display.
CREATE TABLE api_keys (
    id           bigserial PRIMARY KEY,
    account_id   bigint      NOT NULL REFERENCES accounts (id),
    mode         text        NOT NULL CHECK (mode IN ('live', 'test', 'demo')),
    key_hash     bytea       NOT NULL UNIQUE CHECK (length(key_hash) = 32),
    prefix       text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz,
    last_used_at timestamptz
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id);

-- One connected number per account. access_token is AES-256-GCM (nonce || ciphertext).
CREATE TABLE connections (
    account_id      bigint      PRIMARY KEY REFERENCES accounts (id),
    waba_id         text        NOT NULL,
    phone_number_id text        NOT NULL UNIQUE,
    phone_number    text        NOT NULL,
    display_name    text        NOT NULL,
    access_token    bytea       NOT NULL,
    connected_at    timestamptz NOT NULL DEFAULT now()
);
