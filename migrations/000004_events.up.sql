-- The outbox (events), customer webhook endpoints, one delivery per event and endpoint, and
-- the attempt log. Inserting an event fans it out to the account's enabled endpoints in the
-- same transaction and wakes the dispatchers (NOTIFY is delivered at commit).
CREATE TABLE events (
    id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id bigint      NOT NULL REFERENCES accounts (id),
    type       text        NOT NULL CHECK (type IN ('message.received', 'message.sent', 'message.status', 'contact.created')),
    test       boolean     NOT NULL DEFAULT false,
    data       jsonb       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_account_created_idx ON events (account_id, created_at);
CREATE INDEX events_created_idx ON events (created_at);

CREATE TABLE webhook_endpoints (
    id              bigserial PRIMARY KEY,
    account_id      bigint      NOT NULL REFERENCES accounts (id),
    url             text        NOT NULL,
    secret          bytea       NOT NULL,
    enabled         boolean     NOT NULL DEFAULT true,
    disabled_reason text        NOT NULL DEFAULT '',
    failing_since   timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, id)
);
CREATE INDEX webhook_endpoints_enabled_idx ON webhook_endpoints (account_id) WHERE enabled;

-- status: pending (due at next_attempt_at; a claim pushes next_attempt_at out by the lease, so
-- a claim whose process died is due again once the lease runs out), succeeded, dead.
CREATE TABLE webhook_deliveries (
    id               uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id       bigint      NOT NULL,
    event_id         uuid        NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    endpoint_id      bigint      NOT NULL,
    status           text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'dead')),
    attempts         int         NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    last_status_code int,
    last_error       text        NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    completed_at     timestamptz,
    UNIQUE (event_id, endpoint_id),
    UNIQUE (account_id, id),
    FOREIGN KEY (account_id, endpoint_id) REFERENCES webhook_endpoints (account_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_account_idx ON webhook_deliveries (account_id, created_at DESC);

CREATE TABLE webhook_attempts (
    id            bigserial PRIMARY KEY,
    account_id    bigint      NOT NULL,
    delivery_id   uuid        NOT NULL,
    attempt       int         NOT NULL,
    attempted_at  timestamptz NOT NULL,
    status_code   int,
    latency_ms    int         NOT NULL,
    error         text        NOT NULL DEFAULT '',
    response_body text        NOT NULL DEFAULT '',
    FOREIGN KEY (account_id, delivery_id) REFERENCES webhook_deliveries (account_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempt);
CREATE INDEX webhook_attempts_time_idx ON webhook_attempts (attempted_at);

CREATE FUNCTION events_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_deliveries (account_id, event_id, endpoint_id, next_attempt_at)
    SELECT NEW.account_id, NEW.id, w.id, NEW.created_at
    FROM webhook_endpoints w
    WHERE w.account_id = NEW.account_id AND w.enabled;
    IF FOUND THEN
        PERFORM pg_notify('webhook_deliveries', '');
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER events_fan_out AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION events_fan_out();
