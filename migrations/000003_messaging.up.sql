-- Templates, conversations, campaigns, messages and their status history, the platform's raw
-- webhooks, parked statuses, idempotency keys, and the test-mode tables.
CREATE TABLE template_categories (
    id    serial PRIMARY KEY,
    name  text   NOT NULL UNIQUE,
    label text   NOT NULL
);
INSERT INTO template_categories (id, name, label) VALUES
    (1, 'MARKETING', 'Marketing'), (2, 'UTILITY', 'Utility'), (3, 'AUTHENTICATION', 'Authentication');
ALTER SEQUENCE template_categories_id_seq RESTART WITH 100;

CREATE TABLE templates (
    id               bigserial PRIMARY KEY,
    account_id       bigint      NOT NULL REFERENCES accounts (id),
    platform_id      text        NOT NULL,
    name             text        NOT NULL,
    language         text        NOT NULL,
    status           text        NOT NULL,
    category_id      int         NOT NULL REFERENCES template_categories (id),
    parameter_format text        NOT NULL DEFAULT 'POSITIONAL',
    header_format    text        NOT NULL DEFAULT '',
    header_params    int         NOT NULL DEFAULT 0,
    body_params      int         NOT NULL DEFAULT 0,
    components       jsonb       NOT NULL DEFAULT '[]',
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, platform_id),
    UNIQUE (account_id, name, language),
    UNIQUE (account_id, id)
);
CREATE INDEX templates_approved_idx ON templates (account_id, created_at DESC, id DESC) WHERE status = 'APPROVED';

CREATE TABLE conversations (
    id              bigserial PRIMARY KEY,
    account_id      bigint      NOT NULL,
    contact_id      bigint      NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_inbound_at timestamptz,
    UNIQUE (account_id, contact_id),
    UNIQUE (account_id, id),
    FOREIGN KEY (account_id, contact_id) REFERENCES contacts (account_id, id)
);

CREATE TABLE campaigns (
    id         bigserial PRIMARY KEY,
    account_id bigint      NOT NULL REFERENCES accounts (id),
    name       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, name),
    UNIQUE (account_id, id)
);

-- status: pending (recorded, platform not yet answered), sent, delivered, read, failed for
-- outbound; received for inbound. Ranks: pending 0 < sent 1 < delivered 2 < read 3 < failed 9.
CREATE TABLE messages (
    id                  bigserial PRIMARY KEY,
    account_id          bigint      NOT NULL,
    contact_id          bigint      NOT NULL,
    conversation_id     bigint      NOT NULL,
    campaign_id         bigint,
    template_id         bigint,
    direction           text        NOT NULL CHECK (direction IN ('out', 'in')),
    type                text        NOT NULL,
    destination         text        NOT NULL,
    template_name       text        NOT NULL DEFAULT '',
    content             jsonb       NOT NULL DEFAULT '{}',
    platform_message_id text,
    status              text        NOT NULL CHECK (status IN ('pending', 'sent', 'delivered', 'read', 'failed', 'received')),
    error_code          int,
    error_title         text,
    error_details       text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    sent_at             timestamptz,
    UNIQUE (account_id, id),
    FOREIGN KEY (account_id, contact_id) REFERENCES contacts (account_id, id),
    FOREIGN KEY (account_id, conversation_id) REFERENCES conversations (account_id, id)
);
CREATE UNIQUE INDEX messages_platform_id_idx ON messages (account_id, platform_message_id) WHERE platform_message_id IS NOT NULL;

-- Every status the platform reported for a message, once per status, with its own timestamp.
CREATE TABLE message_statuses (
    account_id  bigint      NOT NULL,
    message_id  bigint      NOT NULL,
    status      text        NOT NULL,
    occurred_at timestamptz NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (message_id, status),
    FOREIGN KEY (account_id, message_id) REFERENCES messages (account_id, id) ON DELETE CASCADE
);

-- Statuses that arrived for a platform message id not yet recorded; applied when it is.
CREATE TABLE parked_statuses (
    account_id          bigint      NOT NULL REFERENCES accounts (id),
    platform_message_id text        NOT NULL,
    status              text        NOT NULL,
    occurred_at         timestamptz NOT NULL,
    error_code          int,
    error_title         text,
    error_details       text,
    received_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, platform_message_id, status)
);

-- Raw platform webhook bodies, kept for audit and replay.
CREATE TABLE platform_webhooks (
    id          bigserial PRIMARY KEY,
    received_at timestamptz NOT NULL DEFAULT now(),
    body        bytea       NOT NULL
);
CREATE INDEX platform_webhooks_received_idx ON platform_webhooks (received_at);

-- Idempotency-Key records: status_code is NULL while the first request is in flight.
CREATE TABLE idempotency_keys (
    account_id  bigint      NOT NULL REFERENCES accounts (id),
    key         text        NOT NULL,
    fingerprint bytea       NOT NULL,
    status_code int,
    response    bytea,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- Test mode: simulated sends and sandbox participants (handsets that sent "join <code>").
CREATE TABLE test_messages (
    id            bigserial PRIMARY KEY,
    account_id    bigint      NOT NULL REFERENCES accounts (id),
    destination   text        NOT NULL,
    template_name text        NOT NULL,
    delivery      text        NOT NULL CHECK (delivery IN ('simulated', 'real')),
    platform_message_id text  NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, id)
);

CREATE TABLE sandbox_participants (
    account_id bigint      NOT NULL REFERENCES accounts (id),
    phone      text        NOT NULL,
    joined_at  timestamptz NOT NULL,
    real_sent  int         NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, phone)
);
