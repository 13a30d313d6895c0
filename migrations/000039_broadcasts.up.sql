-- Broadcasts: one template to many recipients, paced by the broadcast engine. The recipient rows
-- are the engine's queue: a claim leases due rows (FOR UPDATE SKIP LOCKED), and a recipient is
-- marked 'sending' in its own statement before its platform call, so a recipient whose call may
-- have happened is never called again.
CREATE TABLE broadcasts (
    id bigserial PRIMARY KEY,
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    campaign_id bigint NOT NULL,
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    phone_number_id text NOT NULL,
    portfolio text NOT NULL DEFAULT '',
    template_name text NOT NULL,
    template_language text NOT NULL,
    marketing boolean NOT NULL DEFAULT false,
    -- Body parameters in order: each {"value": "..."} (the same for everyone) or
    -- {"variable": "..."} (the recipient's variable of that name).
    params jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(params) = 'array'),
    scheduled_at timestamptz,
    time_zone text NOT NULL DEFAULT 'UTC',
    state text NOT NULL CHECK (state IN ('scheduled', 'running', 'paused', 'completed', 'cancelled')),
    pause_reason text NOT NULL DEFAULT '',
    resume_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    started_at timestamptz,
    finished_at timestamptz,
    UNIQUE (account_id, id),
    FOREIGN KEY (account_id, campaign_id) REFERENCES campaigns (account_id, id)
);
CREATE INDEX broadcasts_account_idx ON broadcasts (account_id, id DESC);
CREATE INDEX broadcasts_active_idx ON broadcasts (state) WHERE state IN ('scheduled', 'running', 'paused');

CREATE TABLE broadcast_recipients (
    id bigserial PRIMARY KEY,
    account_id bigint NOT NULL,
    broadcast_id bigint NOT NULL,
    mobile text NOT NULL DEFAULT '',
    user_id text NOT NULL DEFAULT '',
    variables jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(variables) = 'object'),
    -- pending: not called yet (due at next_attempt_at unless leased until lease_until);
    -- sending: marked before the platform call, its answer not recorded yet;
    -- unknown: the call may have happened but its answer was lost (never called again);
    -- sent, failed, cancelled: final.
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'unknown', 'sent', 'failed', 'cancelled')),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    lease_until timestamptz,
    claim uuid,
    attempts int NOT NULL DEFAULT 0,
    message_id text NOT NULL DEFAULT '',
    error_code int,
    error_title text NOT NULL DEFAULT '',
    -- The platform asks not to try this person again before this time (131049).
    retry_not_before timestamptz,
    sending_at timestamptz,
    finished_at timestamptz,
    CHECK ((mobile = '') <> (user_id = '')),
    FOREIGN KEY (account_id, broadcast_id) REFERENCES broadcasts (account_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX broadcast_recipients_person_key ON broadcast_recipients (broadcast_id, mobile, user_id);
CREATE INDEX broadcast_recipients_due_idx ON broadcast_recipients (broadcast_id, next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX broadcast_recipients_sending_idx ON broadcast_recipients (broadcast_id, sending_at) WHERE state = 'sending';
CREATE INDEX broadcast_recipients_message_idx ON broadcast_recipients (account_id, message_id) WHERE message_id <> '';

-- The recipients a portfolio reached, for its moving 24 h budget of unique recipients: the
-- platform reports no error when the budget is spent, so the sender keeps its own count.
CREATE TABLE portfolio_reach (
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    portfolio text NOT NULL,
    recipient text NOT NULL,
    reached_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, portfolio, recipient)
);
CREATE INDEX portfolio_reach_time_idx ON portfolio_reach (account_id, portfolio, reached_at);

-- Contact tags, and saved audiences (a tag, or a filter over tags and blocked state).
CREATE TABLE contact_tags (
    account_id bigint NOT NULL,
    contact_id bigint NOT NULL,
    tag text NOT NULL CHECK (length(tag) BETWEEN 1 AND 100),
    PRIMARY KEY (account_id, tag, contact_id),
    FOREIGN KEY (account_id, contact_id) REFERENCES contacts (account_id, id) ON DELETE CASCADE
);
CREATE INDEX contact_tags_contact_idx ON contact_tags (account_id, contact_id);

CREATE TABLE audiences (
    id bigserial PRIMARY KEY,
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    -- {"tags": [...]} (contacts with every tag), "exclude_blocked": true by default.
    filter jsonb NOT NULL CHECK (jsonb_typeof(filter) = 'object'),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, name),
    UNIQUE (account_id, id)
);

-- An import held until the person confirms it: its rows, as the audience parser gave them.
CREATE TABLE contact_imports (
    id bigserial PRIMARY KEY,
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    tag text NOT NULL DEFAULT '',
    state text NOT NULL DEFAULT 'staged' CHECK (state IN ('staged', 'confirmed')),
    summary jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    confirmed_at timestamptz,
    UNIQUE (account_id, id)
);

CREATE TABLE contact_import_rows (
    account_id bigint NOT NULL,
    import_id bigint NOT NULL,
    line int NOT NULL,
    mobile text NOT NULL CHECK (mobile ~ '^[0-9]{8,15}$'),
    firstname text NOT NULL DEFAULT '',
    lastname text NOT NULL DEFAULT '',
    variables jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (import_id, mobile),
    FOREIGN KEY (account_id, import_id) REFERENCES contact_imports (account_id, id) ON DELETE CASCADE
);
