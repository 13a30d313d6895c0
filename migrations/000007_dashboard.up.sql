-- The dashboard: users, their memberships of accounts (workspaces), server-side sessions,
-- invitations, the audit log and the sign-in throttle; key names; webhook secret rotation;
-- the webhook.test event; the request log's keyset index.
CREATE TABLE users (
    id            bigserial PRIMARY KEY,
    email         text        NOT NULL,
    password_hash text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_idx ON users (lower(email));

CREATE TABLE memberships (
    account_id bigint      NOT NULL REFERENCES accounts (id),
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       text        NOT NULL CHECK (role IN ('owner', 'developer')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);

-- Only the SHA-256 of a session id is stored.
CREATE TABLE sessions (
    id_hash      bytea       PRIMARY KEY CHECK (length(id_hash) = 32),
    account_id   bigint      NOT NULL,
    user_id      bigint      NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (account_id, user_id) REFERENCES memberships (account_id, user_id) ON DELETE CASCADE
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

CREATE TABLE invitations (
    id          bigserial PRIMARY KEY,
    account_id  bigint      NOT NULL REFERENCES accounts (id),
    token_hash  bytea       NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    email       text        NOT NULL,
    role        text        NOT NULL CHECK (role IN ('owner', 'developer')),
    invited_by  bigint      REFERENCES users (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    accepted_at timestamptz,
    UNIQUE (account_id, id)
);

CREATE TABLE audit_log (
    id         bigserial PRIMARY KEY,
    account_id bigint      NOT NULL REFERENCES accounts (id),
    user_id    bigint      REFERENCES users (id) ON DELETE SET NULL,
    action     text        NOT NULL,
    target     text        NOT NULL DEFAULT '',
    detail     text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_account_idx ON audit_log (account_id, id DESC);

-- Failed sign-ins per key ("email:<lower email>" or "addr:<client address>") in the current
-- window; shared by every replica.
CREATE TABLE signin_throttle (
    key          text        PRIMARY KEY,
    failures     int         NOT NULL,
    window_start timestamptz NOT NULL
);

ALTER TABLE api_keys ADD COLUMN name text NOT NULL DEFAULT '',
                     ADD COLUMN last4 text NOT NULL DEFAULT '';

-- During a rotation the previous secret (sealed) keeps signing until it expires.
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret bytea,
                              ADD COLUMN previous_secret_expires_at timestamptz;

ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check
    CHECK (type IN ('message.received', 'message.sent', 'message.status', 'contact.created', 'webhook.test'));

-- The request log: every attempt of an account, newest first, by keyset.
CREATE INDEX webhook_attempts_account_idx ON webhook_attempts (account_id, attempted_at DESC, id DESC);
